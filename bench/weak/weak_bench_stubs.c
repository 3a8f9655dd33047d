/* C side of weak_bench.ml: strong and weak boxroots, and the workaround
   that programs use today (a root holding a one-element Weak.t), behind
   [@@noalloc] externals. Roots cross into OCaml as immediates (address
   | 1). */
#define CAML_NAME_SPACE
#include <stdlib.h>
#include <time.h>
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

/* Gets timed in C, loop included (as bench/src/ops.c times single
   operations): what a C binding pays per read, without the OCaml-to-C
   call that the OCaml-side loop adds to each. The workaround reads its
   Weak.t through the runtime's primitive behind Weak.get (which
   allocates the option), the one way C code has on OCaml 5, whose
   headers export no ephemeron accessor. `handles` holds roots as
   immediates; `kind`: 0 strong, 1 weak, 2 boxroot + Weak.t,
   3 global root + Weak.t. Returns ns per get; the values read are
   `int ref`s, summed into `wb_get_loop_sink`. */
CAMLextern value caml_weak_get(value ar, value n);
long wb_get_loop_sink;

static double elapsed_ns(struct timespec const *t0)
{
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) * 1e9 + (double)(t1.tv_nsec - t0->tv_nsec);
}

#define WB_LOOP(READ)                                          \
  for (long round = 0; round < rounds; round++)                \
    for (long i = 0; i < n; i++) {                             \
      value h = Field(handles, i), v;                          \
      READ;                                                    \
      sum += Long_val(Field(v, 0));                            \
    }

value wb_get_loop(value kind, value handles, value vrounds)
{
  CAMLparam1(handles);
  CAMLlocal1(opt);
  long n = Wosize_val(handles), rounds = Long_val(vrounds), sum = 0;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  switch (Long_val(kind)) {
  case 0: WB_LOOP(v = boxroot_get(TO(h))); break;
  case 1: WB_LOOP(if (!boxroot_weak_get(TO(h), &v)) caml_failwith("weak root emptied")); break;
  case 2:
    WB_LOOP(opt = caml_weak_get(boxroot_get(TO(h)), Val_int(0));
            if (Is_long(opt)) caml_failwith("Weak.t emptied");
            v = Field(opt, 0));
    break;
  default:
    WB_LOOP(opt = caml_weak_get(*(value *)TO(h), Val_int(0));
            if (Is_long(opt)) caml_failwith("Weak.t emptied");
            v = Field(opt, 0));
    break;
  }
  double ns = elapsed_ns(&t0) / ((double)n * (double)rounds);
  wb_get_loop_sink += sum;
  CAMLreturn(caml_copy_double(ns));
}
