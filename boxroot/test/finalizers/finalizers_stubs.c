/* Stubs of test_finalizers.ml: custom blocks ("holders") that hold a
   strong and a weak root of the same value, and whose finalizer deletes
   both (boxroot.h, "Roots in finalizers"). Each holder has an id; the
   finalizer counts its calls per id, so that the test checks that every
   holder was finalized exactly once. */
#define CAML_NAME_SPACE
#include <stdlib.h>
#include <string.h>
#include <caml/alloc.h>
#include <caml/custom.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include "boxroot.h"

struct holder {
  boxroot strong;
  boxroot_weak weak;
  intnat id;
};

#define Holder_val(v) ((struct holder *)Data_custom_val(v))

/* Finalizer calls per id (atomic, relaxed: read after every domain is
   joined), and the number of ids. */
static int *calls;
static intnat holders;
/* BOXROOT_FINALIZERS_SKIP_DELETE=1: the finalizer deletes nothing, so
   that the test must fail on the roots left alive (dune's check that the
   test can fail). */
static int skip_delete;
static int compacting;
static long during_compaction;

static void finalize_holder(value v)
{
  struct holder *h = Holder_val(v);
  if (h->id >= 0 && h->id < holders) __atomic_fetch_add(&calls[h->id], 1, __ATOMIC_RELAXED);
  if (__atomic_load_n(&compacting, __ATOMIC_RELAXED))
    __atomic_fetch_add(&during_compaction, 1, __ATOMIC_RELAXED);
  if (skip_delete) return;
  /* The only boxroot operations allowed here (boxroot.h). */
  boxroot_delete(h->strong);
  boxroot_weak_delete(h->weak);
}

static struct custom_operations holder_ops = {
  "boxroot.test.finalizers.holder",
  finalize_holder,
  custom_compare_default,
  custom_hash_default,
  custom_serialize_default,
  custom_deserialize_default,
  custom_compare_ext_default,
  custom_fixed_length_default,
};

value fin_init(value n)
{
  holders = Long_val(n);
  free(calls);
  calls = calloc((size_t)holders, sizeof *calls);
  if (calls == NULL) caml_failwith("fin_init: out of memory");
  char const *skip = getenv("BOXROOT_FINALIZERS_SKIP_DELETE");
  skip_delete = skip != NULL && strcmp(skip, "1") == 0;
  return Val_unit;
}

/* A holder of `v` with id `id`. */
value fin_make(value id, value v)
{
  CAMLparam2(id, v);
  CAMLlocal1(block);
  boxroot strong = boxroot_create(v);
  boxroot_weak weak = boxroot_weak_create(v);
  if (strong == NULL || weak == NULL) caml_failwith(boxroot_error_string());
  /* Counted as out-of-heap memory, as a binding's handle would be. */
  block = caml_alloc_custom_mem(&holder_ops, sizeof(struct holder), sizeof(struct holder));
  struct holder *h = Holder_val(block);
  h->strong = strong;
  h->weak = weak;
  h->id = Long_val(id);
  CAMLreturn(block);
}

/* Whether both roots of `h` hold its value: a block whose field 0 is
   its id, the same block for both. */
value fin_check(value h)
{
  struct holder *p = Holder_val(h);
  value v = boxroot_get(p->strong), w;
  if (!Is_block(v) || Field(v, 0) != Val_long(p->id)) return Val_false;
  if (!boxroot_weak_get(p->weak, &w)) return Val_false;
  return Val_bool(w == v);
}

value fin_id(value h) { return Val_long(Holder_val(h)->id); }

/* (ids never finalized, ids finalized once, ids finalized more often). */
value fin_counts(value unit)
{
  (void)unit;
  intnat never = 0, once = 0, more = 0;
  for (intnat i = 0; i < holders; i++) {
    int c = __atomic_load_n(&calls[i], __ATOMIC_RELAXED);
    if (c == 0) never++; else if (c == 1) once++; else more++;
  }
  value r = caml_alloc_tuple(3);
  Store_field(r, 0, Val_long(never));
  Store_field(r, 1, Val_long(once));
  Store_field(r, 2, Val_long(more));
  return r;
}

/* Finalizer calls made while some task is inside Gc.compact (its full
   major cycles included), for the report: set around the call. */

value fin_set_compacting(value on)
{
  __atomic_store_n(&compacting, Bool_val(on), __ATOMIC_RELAXED);
  return Val_unit;
}

value fin_during_compaction(value unit)
{
  (void)unit;
  return Val_long(__atomic_load_n(&during_compaction, __ATOMIC_RELAXED));
}
