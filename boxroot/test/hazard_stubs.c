/* C side of the hazard tests (test_hazard.ml, test_hazard_domains.ml,
   test_marking_rules.ml): the window between a cycle start and the
   marker's first read of the pools, opened on purpose.

   A test holds back a domain's darkening (testing.h: its directory stays
   off its mark stack until it releases it), starts marking, drops roots,
   then releases: the marker reads the pools after the drops, whatever
   the schedule. The cycle must still be in its main marking phase at the
   release. It is, by construction, while some domain with ephemerons to
   mark (a Weak array of its own: the tests' watch arrays) has run no
   major slice of its own since marking started: a domain marks its
   ephemerons only in its own slices, and the phase ends only once every
   domain has (major_gc.c, is_complete_phase_sweep_and_mark_main). So the
   domain that starts marking does it here, in C, and goes on in C until
   it releases: it polls nowhere, and it leads the collections it starts
   (a stop-the-world section's leader runs no slice afterwards; the
   others do, at the end of its handler: domain.c, stw_handler). */
#define CAML_NAME_SPACE
#define CAML_INTERNALS
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <caml/alloc.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include <caml/minor_gc.h>
#include <caml/signals.h>
#include "boxroot.h"
#if BOXROOT_MULTICORE
#include <caml/domain.h>
#include <caml/major_gc.h>
#endif
#if defined(BOXROOT_TESTING) || defined(BOXROOT_TESTING_WINDOWS)
#include "domain.h"
#include "testing.h"
#include "window.h"
#endif

static boxroot to_root(value v) { return (boxroot)(v & ~(value)1); }

struct batch { boxroot *roots; long lo, hi; };

static void *delete_batch(void *arg)
{
  struct batch *b = arg;
  for (long i = b->lo; i < b->hi; i++) boxroot_delete(b->roots[i]);
  return NULL;
}

/* Deletes roots.(lo .. hi-1) from a thread the runtime never saw (no
   lock: purely remote deletions). */
static void delete_from_foreign_thread(boxroot *roots, long lo, long hi)
{
  struct batch b = { roots, lo, hi };
  pthread_t t;
  pthread_create(&t, NULL, delete_batch, &b);
  pthread_join(t, NULL);
}

/* The roots of `roots`, an array of immediates, in a C array. */
static boxroot *roots_of(value roots)
{
  mlsize_t n = Wosize_val(roots);
  boxroot *r = malloc((n + 1) * sizeof *r);
  if (r == NULL) caml_raise_out_of_memory();
  for (mlsize_t i = 0; i < n; i++) r[i] = to_root(Field(roots, i));
  return r;
}

value hazard_delete_foreign(value roots, value lo, value hi)
{
  boxroot *r = roots_of(roots);
  caml_enter_blocking_section();
  delete_from_foreign_thread(r, Long_val(lo), Long_val(hi));
  caml_leave_blocking_section();
  free(r);
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

/* ---- Marking, started and held ---- */

static void sleep_us(long us)
{
  struct timespec t = { us / 1000000, (us % 1000000) * 1000 };
  nanosleep(&t, NULL);
}

/* The GC's phase, for failure messages. */
value hazard_phase(value unit)
{
  (void)unit;
#if !BOXROOT_MULTICORE
  return caml_copy_string("OCaml 4.14");
#else
  switch (caml_gc_phase) {
#if OCAML_VERSION_MINOR >= 5
  case Phase_sweep_main: return caml_copy_string("sweep (before marking)");
#endif
  case Phase_sweep_and_mark_main: return caml_copy_string("main marking");
  case Phase_mark_final: return caml_copy_string("final marking");
  case Phase_sweep_ephe: return caml_copy_string("ephemeron sweep (marking over)");
  default: return caml_copy_string("?");
  }
#endif
}

/* Starts a cycle's marking from C: on OCaml 5.5, completes the cycle if
   it marks already, then asks for marking, as the runtime does at the
   end of the sweep-only phase, and empties the minor heaps, whose
   section darkens the roots; before 5.5, completes the cycle, whose
   successor darkens the roots as it starts. No major slice runs on this
   domain afterwards (it leads the sections: see above). Whether the main
   marking phase is on. OCaml 4.14: nothing (pools are marked slot by
   slot), true. */
static int start_marking(void)
{
#if !BOXROOT_MULTICORE
  return 1;
#else
#if OCAML_VERSION_MINOR >= 5
  if (caml_gc_phase != Phase_sweep_main) caml_finish_major_cycle(0);
  atomic_store_explicit(&caml_gc_mark_phase_requested, 1, memory_order_release);
  caml_empty_minor_heaps_once();
#elif OCAML_VERSION_MINOR >= 2
  caml_finish_major_cycle(0);
#else
  caml_finish_major_cycle();
#endif
  return caml_gc_phase == Phase_sweep_and_mark_main;
#endif
}

value hazard_start_marking(value unit)
{
  (void)unit;
  return Val_bool(start_marking());
}

/* A minor collection that this domain leads, with no slice after it. */
static void collect_minor(void)
{
#if BOXROOT_MULTICORE
  caml_empty_minor_heaps_once();
#else
  caml_minor_collection();
#endif
}

value hazard_minor(value unit)
{
  (void)unit;
  collect_minor();
  return Val_unit;
}

/* This domain's marker empties its mark stack (it has read its
   directory, if held back: none). */
value hazard_finish_marking(value unit)
{
  (void)unit;
#if BOXROOT_MULTICORE
  caml_finish_marking();
#endif
  return Val_unit;
}

value hazard_hold_darkening(value domain, value on)
{
#if defined(BOXROOT_TESTING) || defined(BOXROOT_TESTING_WINDOWS)
  boxroot__testing_hold_darkening(Int_val(domain), Bool_val(on));
#else
  (void)domain; (void)on;
#endif
  return Val_unit;
}

static int release_darkening(void)
{
#if defined(BOXROOT_TESTING) || defined(BOXROOT_TESTING_WINDOWS)
  return boxroot__testing_release_darkening();
#else
  return -1;
#endif
}

/* 1: released in the main marking phase; 0: too late (the pools were not
   marked in this cycle); -1: none held (OCaml 4.14). */
value hazard_release_darkening(value unit)
{
  (void)unit;
  return Val_int(release_darkening());
}

value hazard_domain_id(value unit)
{
  (void)unit;
#if BOXROOT_MULTICORE
  return Val_int(Caml_state->id);
#else
  return Val_int(0);
#endif
}

/* ---- Flags between domains ----
   A domain waiting in C takes part in the sections that others start
   (so that nobody waits for it), and runs no slice of its own. */

#define FLAGS 16
static atomic_long flags[FLAGS];

value hazard_set_flag(value i, value v)
{
  atomic_store(&flags[Int_val(i) % FLAGS], Long_val(v));
  return Val_unit;
}

static void wait_flag(int i, long v)
{
  for (long k = 0; atomic_load(&flags[i % FLAGS]) != v; k++) {
#if BOXROOT_MULTICORE
    caml_handle_incoming_interrupts();
    if (k < 1000) sched_yield(); else sleep_us(50);
#else
    caml_enter_blocking_section();
    sleep_us(50);
    caml_leave_blocking_section();
#endif
  }
}

value hazard_wait_flag(value i, value v)
{
  wait_flag(Int_val(i), Long_val(v));
  return Val_unit;
}

/* ---- test_hazard's rounds ---- */

/* The helper (another domain, a systhread on OCaml 4.14) deletes the
   batch it is handed: flag 0 holds its first index (-1: none), flag 1
   counts the batches done, flag 2 stops it. */
static boxroot *helper_roots;
static atomic_long helper_hi;

value hazard_helper(value unit)
{
  (void)unit;
  while (atomic_load(&flags[2]) == 0) {
    long lo = atomic_load(&flags[0]);
    if (lo < 0) {
#if BOXROOT_MULTICORE
      caml_handle_incoming_interrupts();
      sched_yield();
#else
      caml_enter_blocking_section();
      sleep_us(20);
      caml_leave_blocking_section();
#endif
      continue;
    }
    long hi = atomic_load(&helper_hi);
    for (long i = lo; i < hi; i++) boxroot_delete(helper_roots[i]);
    atomic_store(&flags[0], -1);
    atomic_fetch_add(&flags[1], 1);
  }
  return Val_unit;
}

static int window_status;

value hazard_window_status(value unit)
{
  (void)unit;
  return Val_int(window_status);
}

/* One round of test_hazard, with this domain's darkening held back (the
   caller holds it): marking starts; each root's value is copied into a
   block allocated during marking (born marked, never scanned); then the
   roots, in four quarters of n, are deleted locally, modified to an
   immediate, deleted by the helper, deleted by a thread without any
   lock; two minor collections collect the remote deletions (the
   helper's last run is published in the first, at its scan); then the
   directory is released. Returns the copies; window_status tells what
   happened: -2 marking never started, then release_darkening's result. */
value hazard_round(value roots, value n_v)
{
  CAMLparam1(roots);
  CAMLlocal1(hidden);
  long n = Long_val(n_v), total = 4 * n;
  boxroot *r = roots_of(roots);
  if (!start_marking()) {
    window_status = -2;
    free(r);
    CAMLreturn(Atom(0));
  }
  hidden = caml_alloc_shr(total, 0);
  for (long i = 0; i < total; i++) caml_initialize(&Field(hidden, i), boxroot_get(r[i]));
  helper_roots = r;
  atomic_store(&helper_hi, 3 * n);
  long done = atomic_load(&flags[1]);
  atomic_store(&flags[0], 2 * n);
#if !BOXROOT_MULTICORE
  caml_enter_blocking_section();
#endif
  while (atomic_load(&flags[1]) == done) sched_yield();
  delete_from_foreign_thread(r, 3 * n, 4 * n);
#if !BOXROOT_MULTICORE
  caml_leave_blocking_section();
#endif
  for (long i = 0; i < n; i++) boxroot_delete(r[i]);
  /* boxroot_modify may move a root (api.c): the array names it
     afterwards. Each holds its index, which test_hazard.ml checks. */
  for (long i = n; i < 2 * n; i++) {
    if (!boxroot_modify(&r[i], Val_long(i))) caml_failwith("boxroot_modify");
    Field(roots, i) = (value)r[i] | 1; /* an immediate */
  }
  collect_minor();
  collect_minor();
  window_status = release_darkening();
  free(r);
  CAMLreturn(hidden);
}

/* ---- Another domain in the window (test_hazard_domains.ml) ---- */

/* Marking starts, then each root of `roots` has its value copied into a
   block allocated during marking (born marked, never scanned), which is
   returned; 0 with window_status -2 if marking never started. */
static value copy_during_marking(value roots)
{
  CAMLparam1(roots); /* starting marking collects */
  CAMLlocal1(hidden);
  mlsize_t total = Wosize_val(roots);
  if (!start_marking()) {
    window_status = -2;
    CAMLreturnT(value, 0);
  }
  hidden = caml_alloc_shr(total, 0);
  for (mlsize_t i = 0; i < total; i++)
    caml_initialize(&Field(hidden, i), boxroot_get(to_root(Field(roots, i))));
  CAMLreturn(hidden);
}

/* With this domain's darkening held back (the caller holds it): marking
   starts; each root's value is copied into a block allocated during
   marking; flag `go` is set to 1, and this domain waits for flag `done`
   to be 1, taking part in the sections others start (another domain
   acts meanwhile); two minor collections collect the remote deletions;
   the directory is released. Returns the copies; window_status as for
   hazard_round. */
value hazard_window_other(value roots, value go, value done)
{
  CAMLparam1(roots);
  CAMLlocal1(hidden);
  hidden = copy_during_marking(roots);
  if (hidden == 0) CAMLreturn(Atom(0));
  atomic_store(&flags[Int_val(go) % FLAGS], 1);
  wait_flag(Int_val(done), 1);
  collect_minor();
  collect_minor();
  window_status = release_darkening();
  CAMLreturn(hidden);
}

/* ---- test_marking_rules.ml ---- */

/* With this domain's darkening held back (the caller holds it): marking
   starts; each root's value is copied into a block allocated during
   marking; every root is deleted; the directory is released. Returns
   the copies; window_status as for hazard_round. */
value hazard_delete_in_window(value roots)
{
  CAMLparam1(roots);
  CAMLlocal1(hidden);
  hidden = copy_during_marking(roots);
  if (hidden == 0) CAMLreturn(Atom(0));
  for (mlsize_t i = 0; i < Wosize_val(roots); i++) boxroot_delete(to_root(Field(roots, i)));
  window_status = release_darkening();
  CAMLreturn(hidden);
}

/* As hazard_delete_in_window, but each root is overwritten with () by
   boxroot_modify instead of deleted: the deletion barrier must darken the
   old value. */
value hazard_modify_in_window(value roots)
{
  CAMLparam1(roots);
  CAMLlocal1(hidden);
  /* Adoption waits for the darkening of the cycle that marks here: the
     orphans wait through the rest of the current cycle, whose marking
     the worker finished. */
#if BOXROOT_MULTICORE && OCAML_VERSION_MINOR >= 5
  if (caml_gc_phase != Phase_sweep_main) caml_finish_major_cycle(0);
#endif
#if defined(BOXROOT_TESTING) || defined(BOXROOT_TESTING_WINDOWS)
  boxroot__testing_adopt_at_darkening_only(1);
#endif
  hidden = copy_during_marking(roots);
  if (hidden == 0) CAMLreturn(Atom(0));
  for (mlsize_t i = 0; i < Wosize_val(roots); i++) {
    boxroot r = to_root(Field(roots, i));
    boxroot_modify(&r, Val_unit);
    Field(roots, i) = (value)r | 1; /* it may have moved; an immediate */
  }
  window_status = release_darkening();
  CAMLreturn(hidden);
}

/* Marking starts, this domain's marker empties its mark stack (it has
   read its directory), then a root is created for each value of
   `values` into `roots` (immediates): the pools they take join the
   directory after the marker read it. Whether the main marking phase
   was on throughout. */
value hazard_create_after_marker(value values, value roots)
{
  if (!start_marking()) return Val_false;
#if BOXROOT_MULTICORE
  caml_finish_marking();
#endif
  for (mlsize_t i = 0; i < Wosize_val(values); i++) {
    boxroot r = boxroot_create(Field(values, i));
    if (r == NULL) caml_failwith("boxroot_create");
    Field(roots, i) = (value)r | 1;
  }
#if BOXROOT_MULTICORE
  return Val_bool(caml_gc_phase == Phase_sweep_and_mark_main);
#else
  return Val_true;
#endif
}

/* ---- test_stale_marker.ml ---- */

static void create_immediates(value roots)
{
  for (mlsize_t i = 0; i < Wosize_val(roots); i++) {
    boxroot r = boxroot_create(Val_long(i));
    if (r == NULL) caml_failwith("boxroot_create");
    Field(roots, i) = (value)r | 1;
  }
}

/* Roots of immediates into `roots` (immediates): no allocation. */
value hazard_create_immediates(value roots)
{
  create_immediates(roots);
  return Val_unit;
}

/* Run by a domain whose darkening is held back: marking starts; a root
   of an immediate is created into each field of `more`, growing its
   directory; if `free_first`, every root of `first` is deleted, flag
   `go` set, and flag `done` awaited (another domain takes the pools
   given back meanwhile), then the directory is released. Returns
   release_darkening's result (1 if not released), or -2 if marking never
   started. */
value hazard_owner_window(value first, value more, value free_first, value go, value done)
{
  if (!start_marking()) return Val_int(-2);
  create_immediates(more);
  if (!Bool_val(free_first)) return Val_int(1);
  for (mlsize_t i = 0; i < Wosize_val(first); i++) boxroot_delete(to_root(Field(first, i)));
  atomic_store(&flags[Int_val(go) % FLAGS], 1);
  wait_flag(Int_val(done), 1);
  return Val_int(release_darkening());
}

/* The terminating owner's scans wait, while its pools are orphans, until
   another domain adopted them (up to 60 s), in the same section: the
   adopter reaches them first, not the terminated domain's visit of the
   orphans nobody adopts (scan.c), which would darken their values in a
   build that does not darken them as they join (test/broken/adopt).
   `domain`: the owner's id; -1 disarms. */
static atomic_int adoption_first_for = -1;

#if defined(BOXROOT_TESTING) || defined(BOXROOT_TESTING_WINDOWS)
static long orphan_pools(void)
{
  long pools, roots, creations;
  boxroot__domain_orphan_counts(&pools, &roots, &creations);
  return pools;
}

static void wait_for_adoption(int point, int domain, void *data)
{
  (void)data;
  if (point != BOXROOT__AT_SCAN_HOOK || domain != atomic_load(&adoption_first_for)) return;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (orphan_pools() > 0) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > 60) return;
    sched_yield();
  }
}
#endif

value hazard_adoption_first(value domain)
{
  atomic_store(&adoption_first_for, Int_val(domain));
#if defined(BOXROOT_TESTING) || defined(BOXROOT_TESTING_WINDOWS)
  boxroot__testing_window_callback(Int_val(domain) >= 0 ? wait_for_adoption : NULL, NULL);
#endif
  return Val_unit;
}

/* Sets flag `go` (a domain terminates), waits until a domain adopted its
   pools (window point "adoption": this domain's in its last
   collection), then deletes roots.(0 .. k-1) and creates the roots of
   `grow` (immediates), in the pools freed. */
value hazard_after_adoption(value go, value roots, value k, value grow)
{
#if defined(BOXROOT_TESTING) || defined(BOXROOT_TESTING_WINDOWS)
  long seen = boxroot__testing_window_visits(BOXROOT__AT_ADOPTION);
#else
  long seen = 0;
#endif
  atomic_store(&flags[Int_val(go) % FLAGS], 1);
#if defined(BOXROOT_TESTING) || defined(BOXROOT_TESTING_WINDOWS)
  while (boxroot__testing_window_visits(BOXROOT__AT_ADOPTION) == seen) {
#if BOXROOT_MULTICORE
    caml_handle_incoming_interrupts();
#endif
    sched_yield();
  }
#endif
  for (long i = 0; i < Long_val(k); i++) boxroot_delete(to_root(Field(roots, i)));
  create_immediates(grow);
  return Val_unit;
}
