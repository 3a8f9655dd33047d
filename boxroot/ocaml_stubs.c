/* Stubs of the OCaml module Boxroot (boxroot.mli). */
#include <caml/alloc.h>
#include <caml/memory.h>
#include "boxroot.h"
#include "boxroot_stats.h"

value boxroot_ml_stats(value unit)
{
  CAMLparam1(unit);
  CAMLlocal1(record);
  struct boxroot_stats s;
  (void)unit;
  if (!boxroot_get_stats(&s)) CAMLreturn(Val_none);
  long fields[] = {
    s.roots_alive, s.created, s.deleted_local, s.deleted_remote_domain,
    s.deleted_purely_remote, s.slots_in_use, s.pools_young, s.pools_old,
    s.pools_free, s.pools_orphaned, s.minor_scans, s.major_scans,
    s.minor_slots_scanned, s.major_slots_scanned, s.minor_scan_ns,
    s.major_scan_ns, s.reserved_bytes, s.pools_handed_out,
  };
  size_t n = sizeof fields / sizeof fields[0];
  record = caml_alloc_tuple(n);
  for (size_t i = 0; i < n; i++) Store_field(record, i, Val_long(fields[i]));
  CAMLreturn(caml_alloc_some(record));
}

value boxroot_ml_print_stats(value unit)
{
  (void)unit;
  boxroot_print_stats();
  return Val_unit;
}
