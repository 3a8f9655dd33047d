/* C side of pause.ml: roots created and deleted in a C loop, as an FFI
   program holding many of them would. */
#define CAML_NAME_SPACE
#include <stdlib.h>
#include <caml/fail.h>
#include <caml/mlvalues.h>
#include "boxroot.h"

static boxroot *roots;
static long count;

/* n roots: of values.(i) if `values` is non-empty, else all of `shared`. */
value pause_create(value values, value shared, value n_v)
{
  long n = Long_val(n_v);
  roots = malloc(n * sizeof *roots);
  if (roots == NULL) caml_failwith("pause_create: out of memory");
  int distinct = Wosize_val(values) > 0;
  for (long i = 0; i < n; i++) {
    roots[i] = boxroot_create(distinct ? Field(values, i) : shared);
    if (roots[i] == NULL) caml_failwith("pause_create: boxroot_create failed");
  }
  count = n;
  return Val_unit;
}

/* Whether root i still holds a ref containing i (distinct) or `shared`. */
value pause_check(value shared)
{
  for (long i = 0; i < count; i++) {
    value v = boxroot_get(roots[i]);
    if (shared != Val_unit ? v != shared : Long_val(Field(v, 0)) != i) return Val_false;
  }
  return Val_true;
}

value pause_delete(value unit)
{
  (void)unit;
  for (long i = 0; i < count; i++) boxroot_delete(roots[i]);
  free(roots);
  roots = NULL;
  count = 0;
  return Val_unit;
}
