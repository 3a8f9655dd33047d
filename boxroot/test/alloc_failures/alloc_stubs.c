/* C side of the allocation failure sweep (test_alloc_failures.ml): the
   operations that can fail, returning the errno of a failure, and the
   debug build's leak report. Roots cross into OCaml as in ../stubs.c. */
#define CAML_NAME_SPACE
#include <errno.h>
#include <stdio.h>
#include <caml/alloc.h>
#include <caml/memory.h>
#include "boxroot.h"

/* A root (strong or weak), or minus errno if it could not be made, as
   an OCaml int: errno is read here, right after the failure, before the
   runtime can run anything that sets it (a collection's synchronisation
   does). Roots are immediates (their address with bit 0 set), positive
   as ints. */
static value root_or_errno(void *r) { return r != NULL ? (value)r | 1 : Val_long(-errno); }

value af_create(value v) { return root_or_errno(boxroot_create(v)); }

value af_modify(value r, value v)
{
  boxroot b = (boxroot)(r & ~(value)1);
  return boxroot_modify(&b, v) ? (value)b | 1 : Val_long(-errno);
}

value af_weak_create(value v) { return root_or_errno(boxroot_weak_create(v)); }
value af_weak_create_notifying(value v)
{
  return root_or_errno(boxroot_weak_create_notifying(v, 7));
}

value af_weak_modify(value w, value v)
{
  boxroot_weak b = (boxroot_weak)(w & ~(value)1);
  return boxroot_weak_modify(&b, v) ? (value)b | 1 : Val_long(-errno);
}

value af_weak_get(value w)
{
  CAMLparam1(w);
  CAMLlocal1(v);
  if (!boxroot_weak_get((boxroot_weak)(w & ~(value)1), &v)) CAMLreturn(Val_none);
  CAMLreturn(caml_alloc_some(v));
}

value af_weak_delete(value w)
{
  boxroot_weak_delete((boxroot_weak)(w & ~(value)1));
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
