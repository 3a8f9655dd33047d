/* C side of test_hazard.ml. */
#define CAML_NAME_SPACE
#include <pthread.h>
#include <caml/mlvalues.h>
#include <caml/signals.h>
#include "boxroot.h"

static boxroot to_root(value v) { return (boxroot)(v & ~(value)1); }

struct batch { volatile value const *roots; long lo, hi; };

static void *delete_batch(void *arg)
{
  struct batch *b = arg;
  for (long i = b->lo; i < b->hi; i++) boxroot_delete(to_root(b->roots[i]));
  return NULL;
}

/* Deletes roots.(lo .. hi-1) from a thread the runtime never saw (no
   lock: purely remote deletions). `roots` holds immediates only, so its
   fields stay put while the lock is released. */
value hazard_delete_foreign(value roots, value lo, value hi)
{
  struct batch b = { &Field(roots, 0), Long_val(lo), Long_val(hi) };
  pthread_t t;
  caml_enter_blocking_section();
  pthread_create(&t, NULL, delete_batch, &b);
  pthread_join(t, NULL);
  caml_leave_blocking_section();
  return Val_unit;
}

/* Overwrites every field with (), without the write barrier: the array
   may hold pointers to blocks that the GC freed (the failure this test
   detects), which the barrier would read. */
value hazard_forget(value array)
{
  for (mlsize_t i = 0; i < Wosize_val(array); i++) Field(array, i) = Val_unit;
  return Val_unit;
}

value hazard_multicore(value unit)
{
  (void)unit;
  return Val_bool(BOXROOT_MULTICORE);
}
