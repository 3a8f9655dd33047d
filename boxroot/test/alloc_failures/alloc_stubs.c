/* C side of the allocation failure sweep (test_alloc_failures.ml): weak
   roots that report failures instead of raising, and the debug build's
   leak report. A weak root crosses into OCaml as an immediate (its
   address with bit 0 set), as strong roots do in ../stubs.c. */
#define CAML_NAME_SPACE
#include <stdio.h>
#include <caml/alloc.h>
#include <caml/memory.h>
#include "boxroot.h"

static value of_weak(boxroot_weak w) { return (value)w | 1; }
static boxroot_weak to_weak(value v) { return (boxroot_weak)(v & ~(value)1); }

value af_weak_try_create(value v)
{
  CAMLparam1(v);
  boxroot_weak w = boxroot_weak_create(v);
  if (w == NULL) CAMLreturn(Val_none);
  CAMLreturn(caml_alloc_some(of_weak(w)));
}

value af_weak_get(value w)
{
  CAMLparam1(w);
  CAMLlocal1(v);
  if (!boxroot_weak_get(to_weak(w), &v)) CAMLreturn(Val_none);
  CAMLreturn(caml_alloc_some(v));
}

/* Some moved root, or None: the root must then be unchanged. */
value af_weak_try_modify(value w, value v)
{
  CAMLparam2(w, v);
  boxroot_weak r = to_weak(w);
  if (!boxroot_weak_modify(&r, v)) CAMLreturn(Val_none);
  CAMLreturn(caml_alloc_some(of_weak(r)));
}

value af_weak_delete(value w)
{
  boxroot_weak_delete(to_weak(w));
  return Val_unit;
}

/* The leak report of the debug build (its table is an allocation site),
   into the void; nothing elsewhere. */
value af_report_leaks(value unit)
{
  (void)unit;
#ifdef BOXROOT_DEBUG
  FILE *out = fopen("/dev/null", "w");
  if (out != NULL) {
    boxroot_debug_report_leaks(out);
    fclose(out);
  }
#endif
  return Val_unit;
}
