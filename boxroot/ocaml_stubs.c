/* Stubs of the OCaml module Boxroot (boxroot.mli). */
#include <caml/alloc.h>
#include <caml/memory.h>
#include "boxroot.h"
#include "boxroot_stats.h"

/* The fields of Boxroot.stats, in the record's order. */
#define OCAML_STATS_FIELDS(X) \
  X(roots_alive) X(created) X(deleted_local) X(deleted_remote_domain) \
  X(deleted_purely_remote) X(modify_moves) X(slots_in_use) \
  X(delayed_frees_collected) X(pools_young) X(pools_old) X(pools_free) \
  X(pools_orphaned) X(pools_demoted) X(pools_adopted) X(minor_scans) \
  X(major_scans) X(minor_slots_scanned) X(major_slots_scanned) \
  X(minor_scan_ns) X(major_scan_ns) X(chunks) X(reserved_bytes) \
  X(huge_page_chunks) X(pools_handed_out) X(chunk_free_pools_committed) \
  X(chunk_free_pools_decommitted)

value boxroot__ml_stats(value unit)
{
  CAMLparam1(unit);
  CAMLlocal1(record);
  struct boxroot_stats s;
  if (!boxroot_get_stats(&s)) CAMLreturn(Val_none);
#define FIELD_VALUE(f) s.f,
  long fields[] = { OCAML_STATS_FIELDS(FIELD_VALUE) };
  size_t n = sizeof fields / sizeof fields[0];
  record = caml_alloc_tuple(n);
  for (size_t i = 0; i < n; i++) Store_field(record, i, Val_long(fields[i]));
  CAMLreturn(caml_alloc_some(record));
}

value boxroot__ml_print_stats(value unit)
{
  (void)unit;
  boxroot_print_stats();
  return Val_unit;
}
