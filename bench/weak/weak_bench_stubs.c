/* C side of weak_bench.ml: strong and weak boxroots, and the workaround
   that programs use today (a root holding a one-element Weak.t), behind
   [@@noalloc] externals. Roots cross into OCaml as immediates (address
   | 1). */
#define CAML_NAME_SPACE
#include <stdlib.h>
#include <caml/alloc.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>
#include "boxroot.h"
#include "boxroot_stats.h"

#define TO(v) ((void *)((v) & ~(value)1))
#define OF(p) ((value)(p) | 1)

value wb_create(value v) { return OF(boxroot_create(v)); }
value wb_get(value r) { return boxroot_get(TO(r)); }
value wb_delete(value r) { boxroot_delete(TO(r)); return Val_unit; }

value wb_weak_create(value v) { return OF(boxroot_weak_create(v)); }
/* The value, or () once it is gone (no option: nothing allocated). */
value wb_weak_get(value w)
{
  value v;
  return boxroot_weak_get(TO(w), &v) ? v : Val_unit;
}
value wb_weak_delete(value w) { boxroot_weak_delete(TO(w)); return Val_unit; }

/* A generational global root in a malloc'd cell. */
value wb_global_create(value v)
{
  value *cell = malloc(sizeof *cell);
  if (cell == NULL) caml_failwith("malloc");
  *cell = v;
  caml_register_generational_global_root(cell);
  return OF(cell);
}
value wb_global_get(value g) { return *(value *)TO(g); }
value wb_global_delete(value g)
{
  caml_remove_generational_global_root(TO(g));
  free(TO(g));
  return Val_unit;
}

/* Statistics: weak clearing time in slices and stop-the-world sections
   (ns), weak roots cleared so far. */
value wb_weak_stats(value unit)
{
  CAMLparam1(unit);
  CAMLlocal1(r);
  struct boxroot_stats s;
  boxroot_get_stats(&s);
  r = caml_alloc_tuple(3);
  Store_field(r, 0, Val_long(s.weak_clear_ns));
  Store_field(r, 1, Val_long(s.weak_clear_stw_ns));
  Store_field(r, 2, Val_long(s.weak_cleared));
  CAMLreturn(r);
}
