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
   OCaml 5's cycle start: no pool is touched; the domain's directory is
   darkened as one block and the stamp changes (marking.c), so the
   section's work does not depend on the number of roots or pools.
   Other major scans (compaction, heap verification, OCaml 4.14's cycle
   start): every allocated slot of every pool, stopping in each pool once
   its count of allocated slots has been seen.
   Every scan first adopts orphan pools, except on a terminated domain,
   which takes part in its last collections but must not take pools with
   it (domain.h): an adopted young pool keeps its class, so that its
   young values are promoted in the same scan. Minor scans then move the
   aging hand of marking.c, and they and the slot-by-slot scans reset the
   current pool, so that a domain that creates no root between two
   collections scans nothing at the next minor collection. Then each
   ring is read in one pass (scan_ring): a pool's
   delayed frees are collected, its slots scanned, and it is put back
   where its occupancy calls for, while the next pool's first lines are
   already being fetched: a major scan over many pools is bound by
   memory, not by instructions (BOXROOT_SCAN_PREFETCH_SLOTS).

   The hooks that call boxroot__scan_domain, and how they tell minor from
   major scans, are version-specific (compat_ocaml5.c, compat_ocaml4.c). */
#define CAML_INTERNALS
#define CAML_NAME_SPACE
#include "boxroot.h"
#include "domain.h"
#include "invariants.h"
#include "marking.h"
#include "remote.h"
#include "ticks.h"
#include "window.h"

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

/* Prefetch distance: tunables.h. */
#define SCAN_PREFETCH_SLOTS BOXROOT_SCAN_PREFETCH_SLOTS

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

static long scan_pool_young(pool *p, boxroot__scanner sc)
{
  uintnat start = BOXROOT__YOUNG_START, end = BOXROOT__YOUNG_END;
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
      if (BOXROOT__UNLIKELY(is_young_block(v, base, half_limit)))
        BOXROOT__APPLY(sc, (value)v, &line[i]);
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
long scan_pool_all_with(pool *p, boxroot__scanner sc, int darken)
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
      if (darken) BOXROOT__DARKEN(sc, (value)v, s); else BOXROOT__APPLY(sc, (value)v, s);
    }
  }
  return s - p->slots;
}

/* How a scan visits a pool. */
enum scan_kind {
  SCAN_YOUNG,   /* minor collection: young values, slot by slot */
  SCAN_ALL      /* compaction, heap verification, OCaml 4.14's cycle
                   start: every value, slot by slot */
};

static long scan_pool(pool *p, boxroot__scanner sc, enum scan_kind kind)
{
  if (kind == SCAN_YOUNG) return scan_pool_young(p, sc);
  return BOXROOT__IS_DARKEN(sc) ? scan_pool_all_with(p, sc, 1)
                                : scan_pool_all_with(p, sc, 0);
}

/* One pass over ring `cls`: collect each pool's delayed frees, scan it,
   and put it back as `new_cls` where its occupancy calls for.
   `barrier_state`: the scanned domain's state, on whose mark stack the
   values of collected deletions are darkened while needed (marking.c,
   M3), or NULL (no barrier: slot-by-slot scans, OCaml 4.14). */
static long scan_ring(struct boxroot_domain *d, int cls, int new_cls,
                      boxroot__scanner sc, enum scan_kind kind,
                      boxroot__domain_state *barrier_state)
{
  long scanned = 0;
  for (pool *p = boxroot__domain_detach_ring(d, cls), *after; p != NULL; p = after) {
    after = p->next;
    if (after != NULL) prefetch_pool(after, SCAN_PREFETCH_SLOTS);
    domain_collect_remote(d, p, barrier_state);
    /* An empty pool holds no value: the young ring keeps a few until
       this scan (domain.h). */
    if (pool_alloc_count(p) > 0) scanned += scan_pool(p, sc, kind);
    boxroot__domain_place(d, p, new_cls);
  }
  return scanned;
}

static long collect_ring(struct boxroot_domain *d, pool *head, boxroot__domain_state *barrier_state)
{
  long freed = 0;
  if (head != NULL) {
    pool *p = head;
    do {
      freed += domain_collect_remote(d, p, barrier_state);
      p = p->next;
    } while (p != head);
  }
  return freed;
}

static void scan_minor(struct boxroot_domain *d, boxroot__scanner sc, boxroot__domain_state *domain_state)
{
  int *flag = remote_owner_flag(d->id);
  if (boxroot__load(flag, SEQ_CST) && boxroot__exchange(flag, 0, SEQ_CST)
      && collect_ring(d, d->old, domain_state) > 0)
    boxroot__domain_resort_ring(d, CLASS_OLD, CLASS_OLD);
  /* Afterwards no root is young: every young pool becomes old. */
  d->stats.minor_slots_scanned +=
    scan_ring(d, CLASS_YOUNG, CLASS_OLD, sc, SCAN_YOUNG, domain_state);
  d->stats.minor_scans++;
}

/* The aging hand's visit (marking.c, S): the pool's delayed frees are
   collected, so that every pool is within a bounded number of cycles
   (remote.c, D3). */
struct aging { struct boxroot_domain *d; boxroot__domain_state *state; };
static void collect_aged(pool *p, void *data)
{
  struct aging *a = data;
  if (domain_collect_remote(a->d, p, a->state) > 0)
    boxroot__domain_pool_count_dropped(a->d, p);
}

/* Every pool, slot by slot: compaction, verification, and OCaml 4.14's
   cycle start. Delayed frees collected here need no barrier: no marking
   under way holds a pool then. */
static void scan_major(struct boxroot_domain *d, boxroot__scanner sc)
{
  boxroot__store(remote_owner_flag(d->id), 0, SEQ_CST);
  long scanned = scan_ring(d, CLASS_YOUNG, CLASS_YOUNG, sc, SCAN_ALL, NULL);
  scanned += scan_ring(d, CLASS_OLD, CLASS_OLD, sc, SCAN_ALL, NULL);
  d->stats.major_slots_scanned += scanned;
  d->stats.major_scans++;
}

/* Pools that could not be listed (marking.c, M0) are listed now or, if
   memory is still short, darkened slot by slot. */
static long darken_unlisted(struct boxroot_domain *d, boxroot__scanner sc)
{
  long scanned = 0;
  for (int cls = CLASS_YOUNG; cls <= CLASS_OLD; cls++) {
    pool *head = *domain_ring(d, cls), *p = head;
    if (head == NULL) continue;
    do {
      if (!boxroot__marking_list_again(p, d->id)) scanned += scan_pool_all_with(p, sc, 1);
      p = p->next;
    } while (p != head);
  }
  return scanned;
}

/* OCaml 5's cycle start: the domain's directory is darkened, as one
   block, and the stamp changes (marking.c); no pool is touched. */
static void scan_darken(struct boxroot_domain *d, boxroot__scanner sc,
                        boxroot__domain_state *domain_state)
{
  if (boxroot__marking_unlisted(d->id) > 0)
    d->stats.major_slots_scanned += darken_unlisted(d, sc);
  boxroot__marking_start(d->id, domain_state);
  d->stats.major_scans++;
}

#if BOXROOT__TEST_HOOKS
static int adoption_deferred; /* testing.h; atomic */
void boxroot__testing_adopt_at_compaction_only(int on)
{
  boxroot__store(&adoption_deferred, on, SEQ_CST);
}
static int adoption_at_darkening_only; /* testing.h; atomic */
void boxroot__testing_adopt_at_darkening_only(int on)
{
  boxroot__store(&adoption_at_darkening_only, on, SEQ_CST);
}
static int adoption_deferred_at(int minor, int darkening)
{
#ifdef BOXROOT_TESTING_NO_ADOPTION_AT_MINOR_SCAN /* a broken build for tests */
  if (minor) return 1;
#endif
  int only = boxroot__load(&adoption_at_darkening_only, SEQ_CST);
  if (only) return only == 2 || !darkening;
  return (minor || darkening) && boxroot__load(&adoption_deferred, SEQ_CST);
}
#else
static int adoption_deferred_at(int minor, int darkening) { (void)minor; (void)darkening; return 0; }
#endif

void boxroot__scan_domain(int id, boxroot__scanner sc, int minor, boxroot__domain_state *domain_state)
{
  if (boxroot_status() != BOXROOT_RUNNING) return;
  BOXROOT__WINDOW(BOXROOT__AT_SCAN_HOOK, id);
  int darkening = !minor && boxroot__compat_marks_pools_as_blocks() && BOXROOT__IS_DARKEN(sc);
#ifndef BOXROOT_TESTING_LATE_STAMP_SWITCH /* a broken build for tests */
  if (darkening) boxroot__marking_switch_stamp();
#endif
  boxroot__marking_observe(domain_state);
  /* First publish the deletions of other domains' roots that this domain
     gathered, even if it owns no pool (remote.c). */
  boxroot__remote_flush(id);
  struct boxroot_domain *d = boxroot__domain_get(id);
  /* Terminated: it owns no pool, and must not adopt (domain.h). */
  if (d == NULL) return;
  if (!adoption_deferred_at(minor, darkening)) boxroot__domain_adopt_orphans(d, domain_state, minor);
  if (minor) {
    /* boxroot_modify's moves of old values (api.c) start again. */
    boxroot__alloc_cursor[id].old_value_moves = 0;
    struct aging a = { d, domain_state };
    boxroot__marking_age(id, collect_aged, &a);
  }
  /* A minor collection with no young pool and no delayed free has
     nothing to do: the common case of a domain that created no root
     since the last one. Return before reading the clock. */
  if (minor && d->young == NULL && !boxroot__load(remote_owner_flag(d->id), SEQ_CST)) {
    d->stats.minor_scans++;
    return;
  }
  long t0 = boxroot__ticks_now();
  if (darkening) {
    scan_darken(d, sc, domain_state);
    d->stats.major_scan_ticks += boxroot__ticks_now() - t0;
    boxroot__check_domain(d); /* test builds only */
    return;
  }
  domain_reset_cursor(id);
  if (minor) {
    scan_minor(d, sc, domain_state);
    d->stats.minor_scan_ticks += boxroot__ticks_now() - t0;
  } else {
    scan_major(d, sc);
    d->stats.major_scan_ticks += boxroot__ticks_now() - t0;
  }
  boxroot__check_domain(d); /* test builds only */
}

