/* local_roots: the fixpoint of the Boxroot paper's §5.2, one C function
   per rooting discipline. Compiled once against this repository's boxroot and once
   against upstream's (both through impl.h, which includes boxroot.h). */
#include <stdlib.h>
#include <caml/callback.h>
#include <caml/memory.h>
#include "impl.h"

/* ---- local roots (CAMLparam/CAMLlocal): the documented C style ---- */

/* Compares x and y, rooting them as a more complex function would. */
static int compare_val(value x, value y)
{
  CAMLparam2(x, y);
  CAMLreturnT(int, Double_val(x) == Double_val(y));
}

value bench_local_fixpoint(value f, value x)
{
  CAMLparam2(f, x);
  CAMLlocal1(y);
  y = caml_callback(f, x);
  if (compare_val(x, y)) {
    CAMLreturn(y);
  } else {
    CAMLreturn(bench_local_fixpoint(f, y));
  }
}

/* ---- boxroot, callee-roots: local roots replaced one for one ---- */

static int compare_val_boxed(value x, value y)
{
  boxroot xr = boxroot_create(x), yr = boxroot_create(y);
  int equal = Double_val(boxroot_get(xr)) == Double_val(boxroot_get(yr));
  boxroot_delete(xr);
  boxroot_delete(yr);
  return equal;
}

value bench_callee_fixpoint(value f, value x)
{
  boxroot fr = boxroot_create(f), xr = boxroot_create(x);
  boxroot yr = boxroot_create(caml_callback(boxroot_get(fr), boxroot_get(xr)));
  value result;
  if (compare_val_boxed(boxroot_get(xr), boxroot_get(yr)))
    result = boxroot_get(yr);
  else
    result = bench_callee_fixpoint(boxroot_get(fr), boxroot_get(yr));
  boxroot_delete(fr);
  boxroot_delete(xr);
  boxroot_delete(yr);
  return result;
}

/* ---- boxroot, caller-roots: f borrowed, x owned, the result owned ---- */

/* Needs no rooting: its arguments are rooted by the caller. */
static int compare_refs(value const *x, value const *y)
{
  return Double_val(*x) == Double_val(*y);
}

static boxroot caller_fixpoint_rooted(value const *f, boxroot x)
{
  boxroot y = boxroot_create(caml_callback(*f, boxroot_get(x)));
  int done = compare_refs(boxroot_get_ref(x), boxroot_get_ref(y));
  boxroot_delete(x);
  if (done) return y;
  return caller_fixpoint_rooted(f, y);
}

/* From OCaml's callee-roots convention to caller-roots. */
value bench_caller_fixpoint(value f, value x)
{
  boxroot fr = boxroot_create(f);
  boxroot y = caller_fixpoint_rooted(boxroot_get_ref(fr), boxroot_create(x));
  value v = boxroot_get(y);
  boxroot_delete(y);
  boxroot_delete(fr);
  return v;
}

/* ---- generational global roots, caller-roots ---- */

typedef value *groot;

static inline groot groot_create(value v)
{
  groot r = malloc(sizeof *r);
  if (r == NULL) abort();
  *r = v;
  caml_register_generational_global_root(r);
  return r;
}

static inline void groot_delete(groot r)
{
  caml_remove_generational_global_root(r);
  free(r);
}

static groot generational_fixpoint_rooted(value const *f, groot x)
{
  groot y = groot_create(caml_callback(*f, *x));
  int done = compare_refs(x, y);
  groot_delete(x);
  if (done) return y;
  return generational_fixpoint_rooted(f, y);
}

value bench_generational_fixpoint(value f, value x)
{
  groot fr = groot_create(f);
  groot y = generational_fixpoint_rooted(fr, groot_create(x));
  value v = *y;
  groot_delete(y);
  groot_delete(fr);
  return v;
}

value bench_local_roots_library(value unit)
{
  (void)unit;
  return caml_copy_string(IMPL_NAME);
}
