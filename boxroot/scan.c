/* Scanning: how the GC finds the roots in our pools.

   The runtime calls our scan hook once per domain at every minor
   collection and at the start of every major cycle (and for compaction
   and heap verification), always in a stop-the-world section, on the
   domain's own thread or on its backup thread while the domain is in a
   blocking section. Either way it runs on behalf of the domain that owns
   the rings it scans, and no thread holds that domain's lock meanwhile,
   so it may change the rings. Threads holding no lock can still delete
   remotely: that protocol (remote.c) never conflicts with a scan.

   Minor scan: only young pools may point into a minor heap (domain.h).
   We test youth ourselves in a tight loop over each young pool, up to
   its first never-used slot; free slots point into the pool, never into
   a minor heap, so they need no separate test. Afterwards no root is
   young, so every young pool becomes old, ordered by occupancy.
   Major scan: every allocated slot of every pool, stopping in each pool
   once its count of allocated slots has been seen.
   Both scans first adopt orphan pools (except on a terminated domain,
   which takes part in its last collections but must not take pools with
   it: domain.h) and reset the current pool, so that a domain that creates
   no root between two collections scans nothing at the next minor
   collection. Then each ring is read in one pass (scan_ring): a pool's
   delayed frees are collected, its slots scanned, and it is put back
   where its occupancy calls for, while the next pool's first lines are
   already being fetched: a major scan over many pools is bound by
   memory, not by instructions (SCAN_PREFETCH_SLOTS).

   OCaml 4.14: one domain, scanned by the thread holding the master lock.
   The hook tells minor from major scans by the scanning action: only the
   minor collection passes caml_oldify_one; the major cycle start
   (caml_darken) and compaction (caml_invert_root, which must see each
   root exactly once) go through caml_do_roots. The blocking-section
   hooks below track who holds the master lock (ocaml_compat.h). */
#define _GNU_SOURCE /* pthread_getattr_np */
#define CAML_INTERNALS
#define CAML_NAME_SPACE
#include <time.h>
#include <caml/mlvalues.h>
#include <caml/roots.h>
#include <caml/major_gc.h>
#include <caml/misc.h>
#include "boxroot.h"
#include "domain.h"
#include "marking.h"
#include "remote.h"
#include "scan.h"

#if BOXROOT_MULTICORE
#include <caml/domain.h>
typedef struct { scanning_action f; void *data; } scanner;
#define APPLY(sc, v, slot) ((sc).f((sc).data, (v), (volatile value *)(slot)))
#define DARKEN(sc, v, slot) caml_darken((sc).data, (v), (volatile value *)(slot))
#define YOUNG_START ((uintnat)caml_minor_heaps_start)
#define YOUNG_END ((uintnat)caml_minor_heaps_end)
#else
#include <pthread.h>
#include <caml/minor_gc.h>
#include <caml/signals.h>
typedef struct { scanning_action f; } scanner;
#define APPLY(sc, v, slot) ((sc).f((v), (value *)(slot)))
#define DARKEN(sc, v, slot) caml_darken((v), (value *)(slot))
#define YOUNG_START ((uintnat)Caml_state_field(young_start))
#define YOUNG_END ((uintnat)Caml_state_field(young_end))
#endif

static long now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long)t.tv_sec * 1000000000L + t.tv_nsec;
}

#if defined(__x86_64__)
#include <x86intrin.h>
static inline long now_ticks(void) { return (long)__rdtsc(); }
#else
static inline long now_ticks(void) { return now_ns(); }
#endif

/* The tick rate is measured between setup and each conversion: the
   longer the program has run, the closer the estimate. */
static long calibration_ticks, calibration_ns;

static void calibrate(void)
{
  calibration_ns = now_ns();
  calibration_ticks = now_ticks();
}

long scan_ticks_to_ns(long ticks)
{
  long dt = now_ticks() - calibration_ticks, dns = now_ns() - calibration_ns;
  if (dt <= 0 || dns <= 0) return ticks;
  return (long)((double)ticks * ((double)dns / (double)dt));
}

/* Is_block(v) && Is_young(v), i.e. v even and start < v < end, as one
   comparison (start and end are even): x = v - (start + 2) rotated right
   by one bit is x / 2 for even x and has its top bit set for odd x
   (immediates),
   so young blocks are exactly the values whose rotation is below
   (end - start) / 2 - 1. Free slots hold links into their own pool, never
   inside a minor heap. */
static inline int is_young_block(uintnat v, uintnat base, uintnat half_limit)
{
  uintnat x = v - base;
  return ((x >> 1) | (x << (8 * sizeof(uintnat) - 1))) < half_limit;
}

/* How far ahead of the scanning loops we ask for memory, in slots.
   Without it a major scan of many pools stalls on nearly every line
   (the hardware prefetcher alone kept up with only about half of the
   scan's pace here). Chosen with bench/src/latency.ml, 10^7 roots
   (`latency.exe n=10000000 minors=1 majors=15`, median major cycle,
   3 interleaved runs): no prefetch 26-31 ms, 16 slots 34 ms, 64 slots
   19-22 ms, 128 slots 16-21 ms, 256 slots 15-17 ms, 512 slots 16-18 ms;
   upstream 0.4 15-21 ms. */
#define SCAN_PREFETCH_SLOTS 256

/* The start of the next pool to scan, which the in-loop prefetch of the
   current pool cannot reach: its header line (ring links, count), its
   line of delayed frees (remote.c), its first slots. */
static inline void prefetch_pool(pool *p, int slots)
{
  __builtin_prefetch(&p->header_line);
  __builtin_prefetch(&p->delayed_pending);
  for (int i = 0; i < slots; i += SLOTS_PER_LINE)
    __builtin_prefetch(&p->slots[i]);
}

static long scan_pool_young(pool *p, scanner sc)
{
  uintnat start = YOUNG_START, end = YOUNG_END;
  uintnat base = start + 2, half_limit = (end - start) / 2 - 1;
  void **stop = p->fresh;
  /* The tight loop that most minor scans are: few slots hold young
     values, so it runs one load, one subtraction, one rotation and one
     well-predicted branch per slot, and one prefetch per line (stop is
     a whole number of lines past p->slots: pool.c). */
  for (void **line = p->slots; line < stop; line += SLOTS_PER_LINE) {
    __builtin_prefetch(line + SCAN_PREFETCH_SLOTS);
#pragma GCC unroll 8
    for (int i = 0; i < SLOTS_PER_LINE; i++) {
      uintnat v = (uintnat)line[i];
      if (BOXROOT_UNLIKELY(is_young_block(v, base, half_limit)))
        APPLY(sc, (value)v, &line[i]);
    }
  }
  return stop - p->slots;
}

/* `darken`: sc.f is the major GC's darkening function, called directly.
   Measured with bench/src/latency.ml (n = 10^5 and 10^6, 5 interleaved
   runs, median major cycle): the indirect call cost 0.20 -> 0.13 ms and
   1.75 -> 1.31 ms (upstream 0.4: 0.15 and 1.49 ms); most of the time
   was spent entering caml_darken through the pointer. */
static inline __attribute__((always_inline))
long scan_pool_all_with(pool *p, scanner sc, int darken)
{
  int remaining = pool_alloc_count(p);
  void **s = p->slots, **end = p->fresh;
  /* Every allocated slot lies below p->fresh and the count covers them
     all (delayed frees included), so the loop stops after the last one.
     The bound `end` is for immediates that look like free-list links
     (pool.h), which are not counted down. */
  for (; remaining > 0 && s < end; s++) {
    __builtin_prefetch(s + SCAN_PREFETCH_SLOTS);
    void *v = *s;
    if (pool_slot_is_free(p, v)) continue;
    remaining--;
    if (Is_block((value)v)) {
      if (darken) DARKEN(sc, (value)v, s); else APPLY(sc, (value)v, s);
    }
  }
  return s - p->slots;
}

/* How a scan visits a pool. */
enum scan_kind {
  SCAN_YOUNG,   /* minor collection: young values, slot by slot */
  SCAN_ALL,     /* compaction, heap verification, OCaml 4.14's cycle
                   start: every value, slot by slot */
  SCAN_DARKEN   /* OCaml 5's cycle start: the pool as one block (marking.c) */
};

static enum scan_kind major_scan_kind(scanner sc)
{
#if BOXROOT_MULTICORE
  if (sc.f == (scanning_action)caml_darken) return SCAN_DARKEN;
#endif
  (void)sc;
  return SCAN_ALL;
}

static long scan_pool(pool *p, scanner sc, enum scan_kind kind)
{
  switch (kind) {
  case SCAN_YOUNG: return scan_pool_young(p, sc);
#if BOXROOT_MULTICORE
  case SCAN_DARKEN: return marking_darken_pool(p, sc.data);
#endif
  default:
    return sc.f == (scanning_action)caml_darken ? scan_pool_all_with(p, sc, 1)
                                                : scan_pool_all_with(p, sc, 0);
  }
}

/* One pass over ring `cls`: collect each pool's delayed frees, scan it,
   and put it back as `new_cls` where its occupancy calls for.
   `barrier_state`: the domain state to darken collected values with
   (marking.c, M3), or NULL. */
static long scan_ring(struct boxroot_domain *d, int cls, int new_cls,
                      scanner sc, enum scan_kind kind, void *barrier_state)
{
  long scanned = 0;
  /* Darkening a pool reads its first line of slots only. */
  int prefetch = kind == SCAN_DARKEN ? SLOTS_PER_LINE : SCAN_PREFETCH_SLOTS;
  for (pool *p = domain_detach_ring(d, cls), *after; p != NULL; p = after) {
    after = p->next;
    if (after != NULL) prefetch_pool(after, prefetch);
    remote_collect(d, p, barrier_state);
    scanned += scan_pool(p, sc, kind);
    domain_place(d, p, new_cls);
  }
  return scanned;
}

static long collect_ring(struct boxroot_domain *d, pool *head, void *barrier_state)
{
  long freed = 0;
  if (head != NULL) {
    pool *p = head;
    do { freed += remote_collect(d, p, barrier_state); p = p->next; } while (p != head);
  }
  return freed;
}

static void scan_minor(struct boxroot_domain *d, scanner sc, void *domain_state)
{
  if (atomic_load(&d->delayed_flag) && atomic_exchange(&d->delayed_flag, 0)
      && collect_ring(d, d->old, domain_state) > 0)
    domain_resort_ring(d, CLASS_OLD, CLASS_OLD);
  /* Afterwards no root is young: every young pool becomes old. */
  d->stats.minor_slots_scanned +=
    scan_ring(d, CLASS_YOUNG, CLASS_OLD, sc, SCAN_YOUNG, domain_state);
  d->stats.minor_scans++;
}

/* Every pool, at the cycle start or for compaction or verification.
   Delayed frees collected here need no barrier: at the cycle start they
   precede the snapshot (marking.c), and the others scan slot by slot. */
static void scan_major(struct boxroot_domain *d, scanner sc)
{
  atomic_store(&d->delayed_flag, 0);
  enum scan_kind kind = major_scan_kind(sc);
  long scanned = scan_ring(d, CLASS_YOUNG, CLASS_YOUNG, sc, kind, NULL);
  scanned += scan_ring(d, CLASS_OLD, CLASS_OLD, sc, kind, NULL);
  d->stats.major_slots_scanned += scanned;
  d->stats.major_scans++;
}

/* `domain_state`: the state of domain `id` (OCaml 5), for the barrier. */
static void scan_domain(int id, scanner sc, int minor, void *domain_state)
{
  if (boxroot_status() != BOXROOT_RUNNING) return;
  marking_observe_phase();
  struct boxroot_domain *d = domain_get(id);
  /* Out of memory: it cannot own any pool. Terminated: it owns none,
     and must not adopt. */
  if (d == NULL) return;
  domain_adopt_orphans(d);
  /* A minor collection with no young pool and no delayed free has
     nothing to do: the common case of a domain that created no root
     since the last one. Return before reading the clock. */
  if (minor && d->young == NULL && !atomic_load(&d->delayed_flag)) {
    d->stats.minor_scans++;
    return;
  }
  long t0 = now_ticks();
  domain_reset_cursor(id);
  if (minor) {
    scan_minor(d, sc, domain_state);
    d->stats.minor_scan_ticks += now_ticks() - t0;
  } else {
    scan_major(d, sc);
    d->stats.major_scan_ticks += now_ticks() - t0;
  }
}

#if BOXROOT_MULTICORE

static scan_roots_hook previous_scan_hook;
static caml_timing_hook previous_terminated_hook;

static void scan_hook(scanning_action f, scanning_action_flags flags,
                      void *data, caml_domain_state *domain)
{
  if (previous_scan_hook != NULL) previous_scan_hook(f, flags, data, domain);
  scan_domain(domain->id, (scanner){ f, data },
              (flags & SCANNING_ONLY_YOUNG_VALUES) != 0, domain);
}

/* Runs on the terminating domain, lock held, before its last minor
   collection: the other domains adopt the orphans in that collection's
   scans, while the terminating one adopts none (domain.h). */
static void terminated_hook(void)
{
  if (previous_terminated_hook != NULL) previous_terminated_hook();
  if (boxroot_status() != BOXROOT_RUNNING) return;
  domain_terminate(Caml_state->id);
}

void scan_install_hooks(void)
{
  calibrate();
  previous_scan_hook = atomic_exchange(&caml_scan_roots_hook, scan_hook);
  previous_terminated_hook = atomic_exchange(&caml_domain_terminated_hook, terminated_hook);
}

void scan_remove_hooks(void)
{
  scan_roots_hook mine = scan_hook;
  atomic_compare_exchange_strong(&caml_scan_roots_hook, &mine, previous_scan_hook);
  caml_timing_hook mine_t = terminated_hook;
  atomic_compare_exchange_strong(&caml_domain_terminated_hook, &mine_t, previous_terminated_hook);
}

#else /* OCaml 4.14 */

/* Lock tracking (protocol in ocaml_compat.h). The epochs and hook
   pointers are written only by the thread holding the master lock; a
   thread reads its own epoch, and the global ones, which change only
   while it does not hold the lock and therefore does not rely on them. */
__thread int boxroot_compat_thread_epoch; /* 0: never seen by our hooks */
int boxroot_compat_lock_epoch;            /* 0 before setup, then >= 1 */
#define RELEASED_THROUGH_OUR_HOOK (-1)

/* This thread's stack, [lo, hi); lo = hi = 0 until known. */
static __thread uintptr_t stack_lo, stack_hi;

static int in_my_stack(void const *p)
{
  if (stack_hi == 0) {
    pthread_attr_t attr;
    void *base;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return 0;
    int ok = pthread_attr_getstack(&attr, &base, &size) == 0;
    pthread_attr_destroy(&attr);
    if (!ok) return 0;
    stack_lo = (uintptr_t)base;
    stack_hi = (uintptr_t)base + size;
  }
  return (uintptr_t)p >= stack_lo && (uintptr_t)p < stack_hi;
}

/* Whether the runtime's own record of the lock holder is this thread.
   systhreads restores, at every acquisition (through any path), the
   holder's top of stack (native code) or its interpreter's exception
   buffer (bytecode), both in the holder's stack; the other is NULL. */
static int runtime_says_i_hold_the_lock(void)
{
  void const *holder_mark = Caml_state_field(top_of_stack);
  if (holder_mark == NULL) holder_mark = Caml_state_field(external_raise);
  return holder_mark != NULL && in_my_stack(holder_mark);
}

static void (*previous_scan_hook)(scanning_action);
static void (*previous_enter_blocking)(void);
static void (*previous_leave_blocking)(void);

void boxroot_compat_enter_blocking_hook(void)
{
  boxroot_compat_thread_epoch = RELEASED_THROUGH_OUR_HOOK;
  previous_enter_blocking();
}

static void leave_blocking_hook(void)
{
  previous_leave_blocking();
  boxroot_compat_thread_epoch = boxroot_compat_lock_epoch;
}

static int blocking_hooks_are_ours(void)
{
  return caml_enter_blocking_section_hook == boxroot_compat_enter_blocking_hook
      && caml_leave_blocking_section_hook == leave_blocking_hook;
}

/* Puts our blocking-section hooks on top of the current ones, and records
   that the calling thread, which must hold the master lock, holds it. */
static void install_blocking_hooks(void)
{
  if (!blocking_hooks_are_ours()) {
    if (caml_enter_blocking_section_hook != boxroot_compat_enter_blocking_hook) {
      previous_enter_blocking = caml_enter_blocking_section_hook;
      caml_enter_blocking_section_hook = boxroot_compat_enter_blocking_hook;
    }
    if (caml_leave_blocking_section_hook != leave_blocking_hook) {
      previous_leave_blocking = caml_leave_blocking_section_hook;
      caml_leave_blocking_section_hook = leave_blocking_hook;
    }
    /* Void the epochs of threads that may have released the lock
       through the hooks that replaced ours. */
    boxroot_compat_lock_epoch++;
  }
  boxroot_compat_thread_epoch = boxroot_compat_lock_epoch;
}

/* The hooks miss the acquisitions of threads that were already waiting
   for the lock in systhreads' hook when ours were installed (and these
   threads keep the lock through Thread.yield): ask the runtime, unless
   this thread released the lock through our hook since. The runtime's
   record is stale while the lock is free after a release: trusted only
   for releases that bypassed our enter hook, i.e. at thread exit (the gap
   in ocaml_compat.h), before setup, or through systhreads' hook before
   ours were taken back. There only a caller that does not hold the lock,
   against the API's rule, would be misjudged. */
int boxroot_compat_lock_held_slow(void)
{
  if (boxroot_compat_locked_domain() >= 0) return 1;
  if (boxroot_compat_thread_epoch == RELEASED_THROUGH_OUR_HOOK
      && blocking_hooks_are_ours()) return 0;
  if (!runtime_says_i_hold_the_lock()) return 0;
  if (boxroot_status() == BOXROOT_RUNNING) install_blocking_hooks();
  return 1;
}

static void scan_hook(scanning_action f)
{
  if (previous_scan_hook != NULL) previous_scan_hook(f);
  /* The GC runs on the thread that holds the lock: a safe point to take
     the blocking-section hooks back if systhreads replaced them. */
  if (!blocking_hooks_are_ours()) install_blocking_hooks();
  /* The minor collection is the only caller with caml_oldify_one; the
     others (major cycle start, compaction) need every root once. */
  scan_domain(0, (scanner){ f }, f == caml_oldify_one, NULL);
}

void scan_install_hooks(void)
{
  calibrate();
  previous_scan_hook = caml_scan_roots_hook;
  caml_scan_roots_hook = scan_hook;
  install_blocking_hooks();
}

void scan_remove_hooks(void)
{
  if (caml_scan_roots_hook == scan_hook) caml_scan_roots_hook = previous_scan_hook;
  if (caml_enter_blocking_section_hook == boxroot_compat_enter_blocking_hook)
    caml_enter_blocking_section_hook = previous_enter_blocking;
  if (caml_leave_blocking_section_hook == leave_blocking_hook)
    caml_leave_blocking_section_hook = previous_leave_blocking;
}

#endif
