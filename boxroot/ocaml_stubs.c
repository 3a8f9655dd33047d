/* Stubs of the OCaml module Boxroot (boxroot.mli). */
#include "boxroot.h"
#include <caml/alloc.h>
#include <caml/memory.h>
#include "boxroot_stats.h"

value boxroot__ml_stats(value unit)
{
  CAMLparam1(unit);
  CAMLlocal1(record);
  struct boxroot_stats s;
  if (!boxroot_get_stats(&s)) CAMLreturn(Val_none);
  /* Boxroot.stats has the fields of BOXROOT_STATS_FIELDS, in order. */
#define FIELD_VALUE(name, doc) s.name,
  long fields[] = { BOXROOT_STATS_FIELDS(FIELD_VALUE) };
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
