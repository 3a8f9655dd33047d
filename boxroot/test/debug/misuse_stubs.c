/* C stubs for test_debug.ml: each performs one kind of misuse that the
   debug build must report. Every stub first prints, on stdout, the
   address the report must name ("address: %p"), so that the parent can
   check the message. Built with -DBOXROOT_DEBUG. */
#define CAML_NAME_SPACE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <caml/alloc.h>
#include <caml/memory.h>
#include <caml/signals.h>
#include "boxroot.h"
#include "pool.h"

static boxroot to_root(value v) { return (boxroot)(v & ~(value)1); }

static void announce(void const *addr)
{
  printf("address: %p\n", addr);
  fflush(stdout);
}

/* The misuse cases abort on purpose: no core files. */
value debug_no_core_dump(value unit)
{
  struct rlimit none = { 0, 0 };
  setrlimit(RLIMIT_CORE, &none);
  return unit;
}

value debug_pool_slots(value unit)
{
  (void)unit;
  return Val_long(POOL_SLOTS);
}

value debug_announce_root(value r) { announce(to_root(r)); return Val_unit; }
value debug_announce_value(value v) { announce((void *)v); return Val_unit; }

/* boxroot_get on something that was never a root. */
value debug_get_non_root(value kind)
{
  static char const *const garbage = (char const *)0x5a5a5a5a5a50;
  value on_stack = Val_unit;
  void *heap = malloc(64);
  boxroot r = NULL;
  switch (Int_val(kind)) {
  case 0: r = (boxroot)heap; break;
  case 1: r = (boxroot)&on_stack; break;
  case 2: r = (boxroot)garbage; break;
  case 3: r = NULL; break;
  }
  announce(r);
  value v = boxroot_get(r);
  free(heap);
  return v == on_stack ? Val_unit : Val_unit;
}

/* boxroot_get at `offset` bytes from the root `r`. */
value debug_get_at_offset(value r, value offset)
{
  boxroot at = (boxroot)((char *)to_root(r) + Long_val(offset));
  announce(at);
  return boxroot_get(at);
}

/* boxroot_get on a word of the header of `r`'s pool. */
value debug_get_in_header(value r)
{
  uintptr_t pool = (uintptr_t)to_root(r) & ~(BOXROOT__POOL_SIZE - 1);
  boxroot at = (boxroot)(pool + 2 * sizeof(void *));
  announce(at);
  return boxroot_get(at);
}

/* Values that are not OCaml values. */
static value bad_value(int kind, value r)
{
  switch (kind) {
  case 0: return (value)0;
  case 1: return (value)0x7f0000000004;   /* even, misaligned */
  default: return (value)to_root(r);      /* a boxroot, not its value */
  }
}

value debug_create_bad_value(value kind, value r)
{
  value v = bad_value(Int_val(kind), r);
  announce((void *)v);
  boxroot_create(v);
  return Val_unit;
}

value debug_modify_bad_value(value r, value kind)
{
  boxroot b = to_root(r);
  announce(b);
  boxroot_modify(&b, bad_value(Int_val(kind), r));
  return Val_unit;
}

value debug_get_unlocked(value r)
{
  boxroot b = to_root(r);
  announce(b);
  caml_enter_blocking_section();
  boxroot_get(b);
  caml_leave_blocking_section();
  return Val_unit;
}

/* Two threads holding no lock delete the same root at the same time. */
struct race { boxroot r; pthread_barrier_t *start; };

static void *racer(void *arg)
{
  struct race *race = arg;
  pthread_barrier_wait(race->start);
  boxroot_delete(race->r);
  return NULL;
}

value debug_delete_race(value rounds)
{
  for (long i = 0; i < Long_val(rounds); i++) {
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 2);
    struct race race = { boxroot_create(Val_long(i)), &start };
    announce(race.r);
    pthread_t a, b;
    caml_enter_blocking_section();
    pthread_create(&a, NULL, racer, &race);
    pthread_create(&b, NULL, racer, &race);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    caml_leave_blocking_section();
    pthread_barrier_destroy(&start);
  }
  return Val_unit;
}

/* Weak roots (boxroot.h): the same disguise as strong ones. */
static boxroot_weak to_weak(value v) { return (boxroot_weak)(v & ~(value)1); }

value debug_weak_create(value v)
{
  boxroot_weak w = boxroot_weak_create(v);
  if (w == NULL) abort();
  return (value)w | 1;
}

value debug_weak_get(value w)
{
  value v;
  return Val_bool(boxroot_weak_get(to_weak(w), &v));
}

value debug_weak_delete(value w) { boxroot_weak_delete(to_weak(w)); return Val_unit; }

/* A weak root passed where a strong one is expected, and back. */
value debug_get_weak_as_strong(value w) { return boxroot_get((boxroot)to_weak(w)); }
value debug_delete_weak_as_strong(value w) { boxroot_delete((boxroot)to_weak(w)); return Val_unit; }
value debug_weak_get_strong(value r)
{
  value v;
  return Val_bool(boxroot_weak_get((boxroot_weak)to_root(r), &v));
}

/* Calls from a custom block's finalizer: the block made by
   debug_in_finalizer dies young, and its finalizer, run by the next
   minor collection, calls operation `kind` on the root given: 0
   boxroot_create, 1 boxroot_get, 2 boxroot_modify, 3 boxroot_weak_get,
   4 boxroot_weak_create, all misuses there (boxroot.h, "Roots in
   finalizers"); 5 boxroot_delete, 6 boxroot_weak_delete, allowed. */
#include <caml/custom.h>

struct in_finalizer { int kind; void *root; };

static void in_finalizer_finalize(value v)
{
  struct in_finalizer *f = Data_custom_val(v);
  value out;
  boxroot r = f->root;
  switch (f->kind) {
  case 0: boxroot_create(Val_unit); break;
  case 1: boxroot_get(f->root); break;
  case 2: boxroot_modify(&r, Val_unit); break;
  case 3: boxroot_weak_get(f->root, &out); break;
  case 4: boxroot_weak_create(Val_unit); break;
  case 5: boxroot_delete(f->root); break;
  case 6: boxroot_weak_delete(f->root); break;
  }
}

static struct custom_operations in_finalizer_ops = {
  "boxroot.test.debug.in_finalizer", in_finalizer_finalize,
  custom_compare_default, custom_hash_default, custom_serialize_default,
  custom_deserialize_default, custom_compare_ext_default,
  custom_fixed_length_default,
};

value debug_in_finalizer(value kind, value r)
{
  int k = Int_val(kind);
  void *root = to_root(r);
  if (k == 0 || k == 4) announce((void *)Val_unit);
  else if (k < 5) announce(root);
  value v = caml_alloc_custom_mem(&in_finalizer_ops, sizeof(struct in_finalizer),
                                  sizeof(struct in_finalizer));
  struct in_finalizer *f = Data_custom_val(v);
  f->kind = k;
  f->root = root;
  return v;
}

/* Notifying weak roots (weak_notify.c). */
value debug_weak_create_notifying(value v, value word)
{
  boxroot_weak w = boxroot_weak_create_notifying(v, (uintptr_t)Long_val(word));
  if (w == NULL) abort();
  return (value)w | 1;
}

value debug_notifying_word(value w)
{
  return Val_long((long)boxroot_weak_notifying_word(to_weak(w)));
}

/* How many notices this domain has; -1 if one names a root whose
   word is not the one reported. */
value debug_drain(value unit)
{
  (void)unit;
  boxroot_weak w;
  uintptr_t word;
  long n = 0;
  while (boxroot_weak_next_emptied(&w, &word)) {
    if (boxroot_weak_notifying_word(w) != word) return Val_long(-1);
    n++;
  }
  return Val_long(n);
}

value debug_next_emptied_unlocked(value unit)
{
  (void)unit;
  boxroot_weak w;
  uintptr_t word;
  announce(&w);
  caml_enter_blocking_section();
  boxroot_weak_next_emptied(&w, &word);
  caml_leave_blocking_section();
  return Val_unit;
}
