/* C side of the weak-root tests (Weak_test). A weak root crosses into
   OCaml disguised as an immediate (its address with bit 0 set), as
   strong roots do in ../stubs.c. */
#define CAML_NAME_SPACE
#define CAML_INTERNALS
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <caml/alloc.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include <caml/signals.h>
#include "boxroot.h"
#include "boxroot_stats.h"
#include "testing.h"
#include "weak.h"

static value of_weak(boxroot_weak w) { return (value)w | 1; }
static boxroot_weak to_weak(value v) { return (boxroot_weak)(v & ~(value)1); }
static value of_root(boxroot r) { return (value)r | 1; }

static void raise_error(char const *op)
{
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s (errno %d: %s)", op, boxroot_error_string(),
           errno, strerror(errno));
  caml_failwith(msg);
}

value weak_test_create(value v)
{
  boxroot_weak w = boxroot_weak_create(v);
  if (w == NULL) raise_error("boxroot_weak_create");
  return of_weak(w);
}

value weak_test_get(value w)
{
  CAMLparam1(w);
  CAMLlocal1(v);
  if (!boxroot_weak_get(to_weak(w), &v)) CAMLreturn(Val_none);
  CAMLreturn(caml_alloc_some(v));
}

/* Whether the slot holds the cleared mark, without the read barrier: a
   test's view that does not darken. */
value weak_test_peek_empty(value w)
{
  return Val_bool(*boxroot__weak_slot_of(to_weak(w)) == BOXROOT__WEAK_EMPTY);
}

value weak_test_modify(value w, value v)
{
  boxroot_weak r = to_weak(w);
  if (!boxroot_weak_modify(&r, v)) raise_error("boxroot_weak_modify");
  return of_weak(r);
}

value weak_test_delete(value w)
{
  boxroot_weak_delete(to_weak(w));
  return Val_unit;
}

static void *delete_in_thread(void *w)
{
  boxroot_weak_delete(w);
  return NULL;
}

/* From a thread the runtime never saw, holding no lock. */
value weak_test_delete_foreign(value w)
{
  pthread_t t;
  caml_enter_blocking_section();
  pthread_create(&t, NULL, delete_in_thread, to_weak(w));
  pthread_join(t, NULL);
  caml_leave_blocking_section();
  return Val_unit;
}

value weak_test_upgrade(value w)
{
  CAMLparam1(w);
  boxroot r;
  if (!boxroot_weak_upgrade(to_weak(w), &r)) CAMLreturn(Val_none);
  if (r == NULL) raise_error("boxroot_weak_upgrade");
  CAMLreturn(caml_alloc_some(of_root(r)));
}

value weak_test_of_boxroot(value r)
{
  boxroot_weak w = boxroot_weak_of_boxroot((boxroot)(r & ~(value)1));
  if (w == NULL) raise_error("boxroot_weak_of_boxroot");
  return of_weak(w);
}

/* How many of the weak roots `ws.(lo .. hi-1)` read full, in one call:
   no allocation, no poll, so no collection runs meanwhile. */
value weak_test_count_full(value ws, value lo, value hi)
{
  long n = 0;
  for (long i = Long_val(lo); i < Long_val(hi); i++) {
    value v;
    if (boxroot_weak_get(to_weak(Field(ws, i)), &v)) n++;
  }
  return Val_long(n);
}

/* weak.h's phases: 0 idle, 1 marking, 2 cleaning. */
value weak_test_phase(value unit)
{
  (void)unit;
  return Val_int(boxroot__compat_weak_phase());
}

value weak_test_defer_clearing(value b)
{
  boxroot__testing_weak_defer_clearing(Bool_val(b));
  return Val_unit;
}

/* Every scan hook of domain `domain` waits `ms` ms at its start (a
   window point: window.h), so that the other domains' hooks in the same
   stop-the-world section run first; `ms` = 0 stops that. */
#include <time.h>
#include "window.h"
static int delayed_domain;
static long delay_ms;
static void delay_scans(int point, int domain, void *data)
{
  (void)data;
  if (point != BOXROOT__AT_SCAN_HOOK || domain != delayed_domain) return;
  struct timespec t = { delay_ms / 1000, (delay_ms % 1000) * 1000000 };
  nanosleep(&t, NULL);
}

value weak_test_delay_scans(value domain, value ms)
{
  delayed_domain = Int_val(domain);
  delay_ms = Long_val(ms);
  boxroot__testing_window_callback(delay_ms > 0 ? delay_scans : NULL, NULL);
  return Val_unit;
}

#include "pool.h"
value weak_test_debug(value w)
{
  void **slot = (void **)boxroot__weak_slot_of(to_weak(w));
  pool *p = pool_of_slot(slot);
  value v = *(value *)slot;
  fprintf(stderr, "slot %p pool %p owner %d cls %d count %d fresh %ld young %d v %p\n",
          (void *)slot, (void *)p, pool_owner(p), pool_class(p), pool_alloc_count(p),
          (long)(p->fresh - p->slots), boxroot__compat_is_young(v), (void *)v);
  return Val_unit;
}

/* Notifying weak roots (weak_notify.c). */
value weak_test_create_notifying(value v, value word)
{
  boxroot_weak w = boxroot_weak_create_notifying(v, (uintptr_t)Long_val(word));
  if (w == NULL) raise_error("boxroot_weak_create_notifying");
  return of_weak(w);
}

/* Some (root, word) for the next root that emptied, or None. */
value weak_test_next_emptied(value unit)
{
  CAMLparam1(unit);
  CAMLlocal1(pair);
  boxroot_weak w;
  uintptr_t word;
  if (!boxroot_weak_next_emptied(&w, &word)) CAMLreturn(Val_none);
  pair = caml_alloc_tuple(2);
  Store_field(pair, 0, of_weak(w));
  Store_field(pair, 1, Val_long((long)word));
  CAMLreturn(caml_alloc_some(pair));
}

value weak_test_notifying_word(value w)
{
  return Val_long((long)boxroot_weak_notifying_word(to_weak(w)));
}

/* ---- Reading weak roots in the window of W4, from a slice hook ----
   Armed for cycle `c` (cycles completed so far) and the arming domain,
   the end of that domain's first major slice of cycle c+1 in the
   cleaning phase reads every weak root of the array, in one pass. The
   cycle cannot end before: on OCaml 5 it ends only once every domain
   has run a slice of its own in Phase_sweep_ephe (major_gc.c,
   is_complete_phase_sweep_ephe), and after that slice's end hook; on
   4.14, Phase_clean lasts several slices (the test's ephemerons). */
#include <stdatomic.h>
#include <stdlib.h>
#include <caml/domain_state.h>
#include <caml/misc.h>
#include "ocaml_compat.h"

static boxroot_weak *window_roots;
static long window_count, window_cycle;
static _Atomic(void *) window_domain; /* read by every domain's hook */
static atomic_long window_full = -1; /* -1: not read yet */
static caml_timing_hook previous_slice_end_hook;

static void read_in_window(void)
{
  if (previous_slice_end_hook != NULL) previous_slice_end_hook();
  if ((void *)Caml_state != atomic_load(&window_domain)) return;
  if (window_roots == NULL || atomic_load(&window_full) >= 0) return;
  if (boxroot__compat_weak_phase() != BOXROOT__WEAK_CLEANING
      || (long)boxroot__compat_weak_cycle() != window_cycle) return;
  long n = 0;
  for (long i = 0; i < window_count; i++) {
    value v;
    if (boxroot_weak_get(window_roots[i], &v)) n++;
  }
  atomic_store(&window_full, n);
}

/* Arms the reading above for the weak roots `ws` and cycle `cycle`;
   the hook is chained in front of the others once. */
value weak_test_arm_window_read(value ws, value cycle)
{
  static int installed;
  free(window_roots);
  window_count = Wosize_val(ws);
  window_roots = malloc(window_count * sizeof *window_roots);
  if (window_roots == NULL) caml_raise_out_of_memory();
  for (long i = 0; i < window_count; i++) window_roots[i] = to_weak(Field(ws, i));
  window_cycle = Long_val(cycle);
  atomic_store(&window_domain, (void *)Caml_state);
  atomic_store(&window_full, -1);
  if (!installed) {
    installed = 1;
#if OCAML_VERSION_MAJOR >= 5
    previous_slice_end_hook = atomic_exchange(&caml_major_slice_end_hook, read_in_window);
#else
    previous_slice_end_hook = caml_major_slice_end_hook;
    caml_major_slice_end_hook = read_in_window;
#endif
  }
  return Val_unit;
}

/* How many weak roots read full in the window, -1 if not read yet. */
value weak_test_window_read(value unit)
{
  (void)unit;
  return Val_long(atomic_load(&window_full));
}

value weak_test_disarm_window_read(value unit)
{
  (void)unit;
  free(window_roots);
  window_roots = NULL;
  return Val_unit;
}
