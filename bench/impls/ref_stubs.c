/* The OCaml side of impl.h: the externals of ref_gc.ml / ref_root.ml. */
#include <caml/alloc.h>
#include "impl.h"

value bench_ref_create(value v) { return ref_to_ocaml(ref_create(v)); }
value bench_ref_get(value r) { return ref_get(ref_of_ocaml(r)); }
value bench_ref_modify(value r, value v)
{
  ref_t h = ref_of_ocaml(r);
  ref_modify(&h, v);
  return ref_to_ocaml(h);
}
value bench_ref_delete(value r)
{
  ref_delete(ref_of_ocaml(r));
  return Val_unit;
}
value bench_ref_pools(value unit) { (void)unit; return Val_long(impl_pools_used()); }
value bench_ref_setup(value unit)
{
  (void)unit;
  impl_setup();
  return Val_unit;
}
value bench_ref_stats(value unit)
{
  char buf[2048];
  (void)unit;
  impl_stats_fields(buf, sizeof buf);
  return caml_copy_string(buf);
}
value bench_ref_name(value unit) { (void)unit; return caml_copy_string(IMPL_NAME); }
