/* Weak roots: values held without being kept alive (API: boxroot.h; the
   fast paths: boxroot_weak_internal.h; version-specific calls: weak.h,
   compat_ocaml5.c, compat_ocaml4.c).

   Where they live. In weak pools: pools as pool.h lays them out, owned
   by a domain like strong pools (free list, counts, owner word,
   delayed-free bitmap), but on each domain's weak rings here, `young`
   (used since the last minor collection) and `old`, never on the rings
   of domain.c. So no strong scan reads them, no marking directory lists
   them (marking.c never sees them, their owner word never has the
   barrier bit), and nothing darkens their values: the major GC does not
   count weak slots as roots. Pools that the domain's weak roots left
   empty stay on its old ring, first in line for reuse, up to
   BOXROOT_FREE_POOLS_KEPT of them at each clearing; the others go back
   to the chunk allocator there.

   Invariants (enforced here unless said otherwise):
   W1 Contents. A weak slot holds a free-list link (pool.h), an OCaml
      value, or BOXROOT__WEAK_EMPTY (a C constant laid out as a block of
      one field whose header no marker marks: no OCaml value equals it, it
      is never young, never in the heap, and a marker that still reads a
      pool recycled from strong to weak use in the same cycle finds in it
      only what marking.c's M2 allows). A weak pool's class is
      BOXROOT__CLASS_WEAK_YOUNG or BOXROOT__CLASS_WEAK_OLD, and only a
      young one holds young values (create allocates from the current
      pool, which is young; boxroot_weak_modify moves a root that would
      put a young value in an old pool, as boxroot_modify does).
   W2 Minor collections promote. The scan hook of a minor collection
      hands every young value of the domain's young weak pools to the
      runtime's promotion, as for a root, then makes those pools old. A
      young value is thus never cleared, even if nothing else points to
      it: it is promoted, and cleared at a later major cycle if it dies,
      which the runtime does with the young keys of ephemerons on OCaml
      5. Being promoted while marking is under way, such a value survives
      that cycle (OCaml 5 promotes into the marked colour, 4.14 into
      black), so it empties no later than the end of the next one.
   W3 Clearing. Each major cycle, between the end of marking (every value
      reachable is marked, finalisers of Gc.finalise included: they run
      before, so a value they resurrect stays, as in OCaml's Weak) and
      the first sweep that may free or reuse memory, every slot whose
      value the cycle left unmarked is set to BOXROOT__WEAK_EMPTY. The
      runtime gives that window a name: OCaml 5's Phase_sweep_ephe (where
      it cleans its own ephemerons), OCaml 4.14's Phase_clean and its
      caml_major_gc_hook, called once marking and cleaning are over and
      before any sweeping. Who clears:
      - OCaml 5, incrementally: each domain clears its own pools in the
        first major slice hook (begin or end) that it runs in
        Phase_sweep_ephe. Slice hooks run on behalf of the domain: in
        its slices, in the opportunistic work it does while it waits in
        a stop-the-world section, or on its backup thread
        (compat_ocaml5.c); never at once with its mutator. A domain leaves
        Phase_sweep_ephe only after running a slice that updates its
        Gc.finalise_last values, and that slice's end hook runs before
        the cycle can end (major_gc.c: the stop-the-world section that
        ends the cycle is entered after the hook).
      - OCaml 5, the fallback: the section that ends the cycle starts
        with a minor collection, still in Phase_sweep_ephe, before the
        colours rotate and sweeping starts. Every domain's minor scan hook
        in CLEANING clears the pools that no slice cleared this cycle
        (a domain that ran no slice hook in the phase, pools adopted
        since). Normally there are none: the pause then costs one test
        per domain (measured by make bench-weak: bench/results/weak/,
        the cycle-ending section with 10^6 weak roots).
      - OCaml 4.14: caml_major_gc_hook clears every pool (one domain; the
        runtime calls it once per cycle, in a slice), unless a minor
        collection in Phase_clean did it first (the same minor scan
        hook as on OCaml 5).
      Each domain records the cycle it last cleared
      (boxroot__compat_weak_cycle), so that it clears once per cycle.
      The owner clears with a compare-and-swap of the dead value, since
      another domain may be modifying that root (boxroot_weak_modify, an
      atomic store): a new value is never overwritten.
   W4 The read barrier (boxroot_weak_get). A weak slot is a pointer that
      the marker never reads, so a value loaded from it while marking is
      under way must be darkened, as the runtime's ephemeron reads do, or
      the snapshot would lose it (a value reachable only weakly when
      marking started, read and stored into a block allocated during
      marking, hence never scanned). Between the end of marking and the
      owner's clearing (W3), a slot may still hold a dead value: the read
      must report it empty. So boxroot_weak_get returns the slot's value
      as it is only for immediates, or while `boxroot__weak_barrier` is
      0, or for a block whose header says that the current cycle marked
      it (the colour bits `boxroot__weak_marked`, copied from the runtime
      with the flag: such a value needs no darkening and is alive);
      otherwise the slow path asks the phase: MARKING darkens the value,
      CLEANING reports an unmarked one as empty. The flag is raised
      by every darkening scan hook (the roots being marked: the cycle
      start on OCaml 4.14 and 5.1-5.4, the minor collection that starts
      marking on 5.5), before any mutator can read a slot of that cycle,
      and lowered by the clearing that ends W3 in a stop-the-world
      section (the minor scan in CLEANING, every domain clearing its own
      pools before any mutator runs again; on 4.14 the minor scan in
      Phase_clean), or by caml_major_gc_hook on 4.14. On OCaml 5.1-5.4
      marking starts in the section that ends the previous cycle, so the
      flag is lowered and raised again there: it is always up, and every
      read of a block takes the slow path (a call, a phase test and the
      darkening's header test). On 5.5 it is down during the sweep-only
      phase; on 4.14 during sweeping and idle.
      Writing a weak slot (create, modify, delete) needs no barrier: a
      weak root keeps nothing alive, so no snapshot counts on its old
      value, and a value written is reachable by the writer.
   W5 Dead values never outlive W3 in a slot: sweeping, compaction (which
      happens after a full cycle, then reads weak slots through the scan
      hook to update the live values, as for roots), free() of large
      blocks and reuse all come later. On OCaml 4.14 a value outside the
      major heap (the page table says so) is never dead.
   Deletion. Local deletion is the inline fast path (the owner word
   never has the barrier bit). Remote and lock-free deletions use the
   delayed-free bitmap with the protocol of remote.c (D1-D3, C1-C3),
   each publishing at once (no runs), with the weak domain's
   `delayed_flag`; owners collect at their minor scans (young pools
   always, old ones when flagged), when they need room, and in each
   clearing. A slot deleted but not collected yet is cleared like a live
   one, harmlessly.
   Domains. A terminating domain (its terminated hook) gives its weak
   pools to the weak orphan rings and is known as terminated from then
   on, even if it never created a weak root, so that it adopts none in
   the collections it still takes part in (they would be lost with it:
   domain.h); the other domains adopt them at their next scan hook, and
   clear them in this cycle's W3 if it is not over (adopting resets the
   adopter's record of W3). The section that ends a cycle scans every
   domain, so orphans never wait past it.

   Cost: create and delete are the strong fast paths on other pools;
   get is one load, a test of the flag and a test of the value (W4);
   each major cycle reads every weak slot handed out once (W3), outside
   stop-the-world sections on OCaml 5. */
#define CAML_INTERNALS
#define CAML_NAME_SPACE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include "asserts.h"
#include "boxroot.h"
#include "boxroot_stats.h"
#include "chunk.h"
#include "domain.h"
#include "marking.h"
#include "remote.h"
#include "status.h"
#include "ticks.h"
#include "weak.h"
#include "window.h"

_Static_assert(BOXROOT__CLASS_WEAK_YOUNG > CLASS_NONE && BOXROOT__CLASS_WEAK_OLD > CLASS_NONE,
               "weak pool classes are distinct from the strong ones (pool.h)");

#define WEAK_YOUNG BOXROOT__CLASS_WEAK_YOUNG
#define WEAK_OLD BOXROOT__CLASS_WEAK_OLD
#define EMPTY BOXROOT__WEAK_EMPTY
#define BITS_PER_WORD (8 * sizeof(uintptr_t))

struct boxroot__pool_hot *boxroot__weak_cursor[BOXROOT__MAX_DOMAINS] = {
  [0 ... BOXROOT__MAX_DOMAINS - 1] = &boxroot__empty_pool,
};
uint32_t boxroot__weak_barrier; /* W4 */
uintptr_t boxroot__weak_marked; /* W4 */
/* W1: the header's colour is 3 << 8, OCaml 5's NOT_MARKABLE and OCaml
   4.14's black, so that a marker that reads it never marks it (a pool
   enlisted for marking as a strong pool may be recycled as a weak pool
   while the marker still reads it: marking.c, M2). */
uintptr_t const boxroot__weak_empty[2] = {
  ((uintptr_t)1 << 10) | ((uintptr_t)3 << 8), /* wosize 1, colour 3 << 8, tag 0 */
  Val_unit,
};

/* A domain's weak state. Only the domain (lock held, or its hooks) reads
   or writes it, except `delayed_flag` (remote deleters, D3) and the
   statistics (read while every domain is stopped: api.c). */
struct weak_domain {
  void const *key;        /* as domain.c's: the owner's key */
  int incarnation, terminated;
  pool *young, *old;      /* rings (W1) */
  uint64_t cleared_cycle; /* 1 + the weak cycle last cleared, or 0 (W3) */
  long cleared, collected, moves, clear_ticks, clear_stw_ticks;
  _Alignas(CACHE_LINE) int delayed_flag;
};

static struct weak_domain *weak_domains[BOXROOT__MAX_DOMAINS];

/* Orphans, and statistics of what is gone, under orphans_lock. */
static pthread_mutex_t orphans_lock = PTHREAD_MUTEX_INITIALIZER;
static pool *orphan_young, *orphan_old;
static int orphans_present; /* atomic */
static long gone_cleared, gone_collected, gone_moves, gone_clear_ticks, gone_clear_stw_ticks;
static long deleted_remote; /* atomic */

/* ---- rings ---- */

static pool **weak_ring(struct weak_domain *wd, int cls)
{
  return cls == WEAK_YOUNG ? &wd->young : &wd->old;
}

static void move_to(struct weak_domain *wd, pool *p, int cls, int at_front)
{
  ring_remove(weak_ring(wd, pool_class(p)), p);
  pool_set_class(p, cls);
  ring_insert(weak_ring(wd, cls), p, at_front);
}

/* Detaches ring `cls` as a NULL-terminated list through `next`. */
static pool *detach(struct weak_domain *wd, int cls)
{
  pool **ring = weak_ring(wd, cls), *head = *ring;
  *ring = NULL;
  if (head == NULL) return NULL;
  head->prev->next = NULL;
  return head;
}

/* Puts a detached pool on the old ring: low pools first (reused first). */
static void place_old(struct weak_domain *wd, pool *p)
{
  p->next = p->prev = NULL;
  pool_set_class(p, WEAK_OLD);
  ring_insert(&wd->old, p, pool_alloc_count(p) < POOL_LOW_MARK);
}

static long ring_fold(pool *head, long (*f)(pool *))
{
  long n = 0;
  if (head != NULL) {
    pool *p = head;
    do { n += f(p); p = p->next; } while (p != head);
  }
  return n;
}

/* ---- domains ---- */

static pool *current_pool(int id)
{
  struct boxroot__pool_hot *p = boxroot__weak_cursor[id];
  return p == &boxroot__empty_pool ? NULL : (pool *)p;
}

static void reset_cursor(int id) { boxroot__weak_cursor[id] = &boxroot__empty_pool; }

/* Domain id's weak state, created on first use: NULL if out of memory,
   or if that domain has terminated. Its lock held, or its hook. */
static struct weak_domain *weak_domain_get(int id)
{
  struct weak_domain *wd = weak_domains[id];
  int incarnation = boxroot__compat_domain_unique_id();
  void const *key = boxroot__compat_domain_key();
  if (boxroot__compat_key_domain(key) != id) key = BOXROOT__NO_OWNER_KEY;
  if (wd == NULL) {
    wd = aligned_alloc(CACHE_LINE, sizeof *wd);
    if (wd == NULL) return NULL;
    *wd = (struct weak_domain){ .key = key, .incarnation = incarnation };
    boxroot__store(&weak_domains[id], wd, RELEASE); /* read by deleters */
  }
  if (wd->key == BOXROOT__NO_OWNER_KEY) wd->key = key;
  if (wd->incarnation != incarnation) {
    wd->incarnation = incarnation;
    wd->terminated = 0;
  }
  return wd->terminated ? NULL : wd;
}

/* ---- deletion (remote.c's protocol) ---- */

void boxroot__weak_delete_local_slow(struct boxroot__pool_hot *hot)
{
  pool *p = (pool *)hot;
  struct weak_domain *wd = weak_domains[pool_owner(p)];
  /* Low or empty, not current: reused first. */
  if (pool_class(p) == WEAK_OLD) move_to(wd, p, WEAK_OLD, 1);
}

static int *weak_delayed_flag(int owner)
{
  struct weak_domain *wd = boxroot__load(&weak_domains[owner], ACQUIRE);
  return wd == NULL ? NULL : &wd->delayed_flag;
}

/* Each deletion published at once (no runs). */
void boxroot__weak_delete_other(boxroot_weak w, void const *key)
{
  (void)key;
  void **slot = (void **)w;
  pool *p = pool_of_slot(slot);
  size_t i = (size_t)(slot - p->slots);
  boxroot__remote_publish(p, &p->delayed_bits[i / BITS_PER_WORD],
                          (uintptr_t)1 << (i % BITS_PER_WORD), weak_delayed_flag);
  boxroot__fetch_add(&deleted_remote, 1, RELAXED);
}

/* Frees the slots of `p` deleted remotely (remote.c's C1-C3; no barrier:
   no marker reads weak pools). The owner. */
static int collect(struct weak_domain *wd, pool *p)
{
  int freed = boxroot__remote_free_delayed(p, NULL);
  wd->collected += freed;
  return freed;
}

/* ---- creation ---- */

/* Makes `p` the current pool; 0 if it has no room. */
static int make_current(struct weak_domain *wd, int id, pool *p)
{
  if (pool_class(p) != WEAK_YOUNG || wd->young != p) move_to(wd, p, WEAK_YOUNG, 1);
  if (p->hot.free_list == (void **)p && !marking_thread_fresh(p)) return 0;
  boxroot__weak_cursor[id] = &p->hot;
  return 1;
}

static pool *refill(struct weak_domain *wd, int id)
{
  pool *p = current_pool(id);
  if (p != NULL) {
    if (marking_thread_fresh(p)) return p;
    if (collect(wd, p) > 0 && p->hot.free_list != (void **)p) return p;
    /* Full: to the back of the young ring. */
    move_to(wd, p, WEAK_YOUNG, 0);
    reset_cursor(id);
  }
  pool *o = wd->old;
  if (o != NULL && pool_alloc_count(o) < POOL_LOW_MARK && make_current(wd, id, o)) return o;
  pool *fresh = boxroot__chunk_alloc_pool();
  if (fresh == NULL) return NULL;
  boxroot__pool_reset(fresh);
  boxroot__store(&fresh->delayed_pending, 0, SEQ_CST);
  for (int i = 0; i < DELAYED_WORDS; i++) boxroot__store(&fresh->delayed_bits[i], 0, SEQ_CST);
  pool_set_owner(fresh, id, wd->key);
  pool_set_class(fresh, WEAK_YOUNG);
  ring_insert(&wd->young, fresh, 1);
  make_current(wd, id, fresh);
  return fresh;
}

boxroot_weak boxroot__weak_create_slow(value v)
{
  if (!boxroot__lock_held_or_fail("boxroot_weak_create: this thread does not hold the OCaml domain lock"))
    return NULL;
  if (!boxroot__running_or_fail()) return NULL;
  int id = boxroot__compat_locked_domain();
  struct weak_domain *wd = weak_domain_get(id);
  if (wd == NULL || refill(wd, id) == NULL) {
    boxroot__fail(ENOMEM, "boxroot_weak_create: out of memory (could not allocate a pool)");
    return NULL;
  }
  return boxroot_weak_create(v);
}

bool boxroot__weak_modify_slow(boxroot_weak *w, value v)
{
  if (!boxroot__lock_held_or_fail("boxroot_weak_modify: this thread does not hold the OCaml domain lock"))
    return false;
  /* A young value into an old pool (W1): move the root. */
  boxroot_weak moved = boxroot_weak_create(v);
  if (moved == NULL) return false;
  boxroot_weak_delete(*w);
  *w = moved;
  weak_domains[boxroot__compat_locked_domain()]->moves++;
  return true;
}

/* ---- the read barrier (W4) ---- */

/* Builds broken on purpose for tests lack one of the two guards. */
#ifdef BOXROOT_TESTING_WEAK_NO_DARKENING
#define READ_DARKENS 0
#else
#define READ_DARKENS 1
#endif
#ifdef BOXROOT_TESTING_WEAK_NO_DEAD_CHECK
#define READ_CHECKS_DEAD 0
#else
#define READ_CHECKS_DEAD 1
#endif

value boxroot__weak_get_slow(boxroot_weak w)
{
  value v = boxroot__load((value *)w, RELAXED);
  BOXROOT__WINDOW(BOXROOT__AT_WEAK_READ, boxroot__compat_locked_domain());
  if (v == EMPTY || !boxroot__compat_weak_read(v, READ_DARKENS, READ_CHECKS_DEAD))
    return EMPTY;
  return v;
}

bool boxroot_weak_upgrade(boxroot_weak w, boxroot *out)
{
  value v;
  if (!boxroot_weak_get(w, &v)) {
    *out = NULL;
    return false;
  }
  *out = boxroot_create(v);
  return true;
}

boxroot_weak boxroot_weak_of_boxroot(boxroot r)
{
  return boxroot_weak_create(boxroot_get(r));
}

/* ---- clearing (W3) ---- */

/* Empties the slots of `p` whose value is dead. The owner. */
static long clear_pool(pool *p)
{
  int remaining = pool_alloc_count(p);
  long cleared = 0;
  for (void **s = p->slots, **end = p->fresh; remaining > 0 && s < end; s++) {
    value v = boxroot__load((value *)s, RELAXED);
    if (pool_slot_is_free(p, (void *)v)) continue;
    remaining--;
    if (Is_block(v) && v != EMPTY && boxroot__compat_weak_is_dead(v)
        && boxroot__cas_strong((value *)s, &v, EMPTY, RELAXED))
      cleared++;
  }
  return cleared;
}

static long retired_creations; /* atomic: of pools given back */

/* Clears every pool of `wd` (W3) and records the cycle. Empty old pools
   beyond BOXROOT_FREE_POOLS_KEPT go back to the chunk allocator. */
/* The weak cycle count, 64 bits wide: 1 + the count is never 0, the
   mark of a domain that has not cleared (test builds may start it
   further on: window.h). */
static uint64_t weak_cycle(void)
{
  return boxroot__compat_weak_cycle() + boxroot__window_cycle_offset();
}

static void clear_domain(struct weak_domain *wd, int in_stw)
{
  long t0 = boxroot__ticks_now();
  pool *list = detach(wd, WEAK_OLD);
  int empty_kept = 0;
  for (pool *p = list, *after; p != NULL; p = after) {
    after = p->next;
    collect(wd, p);
    wd->cleared += clear_pool(p);
    if (pool_alloc_count(p) == 0 && empty_kept++ >= BOXROOT_FREE_POOLS_KEPT) {
#ifdef BOXROOT_TESTING
      for (void **s = p->slots; s < p->fresh; s++) BOXROOT__ASSERT(pool_slot_is_free(p, *s));
#endif
      boxroot__fetch_add(&retired_creations, pool_creations(p), RELAXED);
      pool_set_owner(p, BOXROOT__NO_OWNER, BOXROOT__NO_OWNER_KEY);
      pool_set_class(p, CLASS_NONE);
      p->next = p->prev = NULL;
      boxroot__chunk_free_pool(p, !marking_pools_may_be_marked()); /* M2 */
    } else {
      place_old(wd, p);
    }
  }
  pool *y = wd->young;
  if (y != NULL) {
    pool *p = y;
    do { collect(wd, p); wd->cleared += clear_pool(p); p = p->next; } while (p != y);
  }
  wd->cleared_cycle = weak_cycle() + 1;
  long dt = boxroot__ticks_now() - t0;
  if (in_stw) wd->clear_stw_ticks += dt; else wd->clear_ticks += dt;
}

static int cleared_this_cycle(struct weak_domain *wd)
{
  return wd->cleared_cycle == weak_cycle() + 1;
}

#if BOXROOT__TEST_HOOKS
static int defer_clearing; /* testing.h; atomic */
void boxroot__testing_weak_defer_clearing(int defer)
{
  boxroot__store(&defer_clearing, defer, SEQ_CST);
}
static int clearing_deferred(void) { return boxroot__load(&defer_clearing, SEQ_CST); }
#else
static int clearing_deferred(void) { return 0; }
#endif

void boxroot__weak_slice(void)
{
  if (boxroot_status() != BOXROOT_RUNNING || clearing_deferred()) return;
  if (boxroot__compat_weak_phase() != BOXROOT__WEAK_CLEANING) return;
  int id = boxroot__compat_locked_domain();
  BOXROOT__WINDOW(BOXROOT__AT_SLICE_HOOK, id);
  if (id < 0) return;
  struct weak_domain *wd = weak_domains[id];
  if (wd == NULL || wd->terminated || cleared_this_cycle(wd)) return;
  BOXROOT__WINDOW(BOXROOT__AT_WEAK_CLEARING, id);
  clear_domain(wd, 0);
}

void boxroot__weak_major_end(void)
{
  if (boxroot_status() != BOXROOT_RUNNING) return;
  struct weak_domain *wd = weak_domains[0];
  if (wd != NULL) clear_domain(wd, 0);
  boxroot__store(&boxroot__weak_barrier, 0, RELAXED);
}

/* ---- scanning ---- */

static void adopt_orphans(struct weak_domain *wd, int id)
{
  if (!boxroot__load(&orphans_present, SEQ_CST)) return;
  pthread_mutex_lock(&orphans_lock);
  for (int cls = WEAK_YOUNG; cls <= WEAK_OLD; cls++) {
    pool **from = cls == WEAK_YOUNG ? &orphan_young : &orphan_old;
    while (*from != NULL) {
      pool *p = *from;
      ring_remove(from, p);
      pool_set_owner(p, id, wd->key);
      ring_insert(weak_ring(wd, cls), p, cls == WEAK_OLD && pool_alloc_count(p) < POOL_LOW_MARK);
    }
  }
  boxroot__store(&orphans_present, 0, SEQ_CST);
  pthread_mutex_unlock(&orphans_lock);
  wd->cleared_cycle = 0; /* the orphans may not be cleared yet (W3) */
  boxroot__store(&wd->delayed_flag, 1, SEQ_CST);
}

/* Every value of every pool (compaction, heap verification). */
static void apply_all(pool *head, boxroot__scanner sc)
{
  if (head == NULL) return;
  pool *p = head;
  do {
    int remaining = pool_alloc_count(p);
    for (void **s = p->slots, **end = p->fresh; remaining > 0 && s < end; s++) {
      value v = (value)*s;
      if (pool_slot_is_free(p, (void *)v)) continue;
      remaining--;
      if (Is_block(v) && v != EMPTY) BOXROOT__APPLY(sc, v, s);
    }
    p = p->next;
  } while (p != head);
}

/* W2: promotes the young values of the young pools, which become old. */
static void scan_minor(struct weak_domain *wd, int id, boxroot__scanner sc)
{
  if (boxroot__load(&wd->delayed_flag, SEQ_CST) && boxroot__exchange(&wd->delayed_flag, 0, SEQ_CST)) {
    pool *o = wd->old;
    if (o != NULL) {
      pool *p = o;
      do { collect(wd, p); p = p->next; } while (p != o);
    }
  }
  reset_cursor(id);
  for (pool *p = detach(wd, WEAK_YOUNG), *after; p != NULL; p = after) {
    after = p->next;
    collect(wd, p);
    for (void **s = p->slots, **end = p->fresh; s < end; s++) {
      value v = (value)*s;
      if (boxroot__compat_is_young(v)) BOXROOT__APPLY(sc, v, s);
    }
    place_old(wd, p);
  }
}

void boxroot__weak_scan(int id, boxroot__scanner sc, int minor)
{
  if (boxroot_status() != BOXROOT_RUNNING) return;
  int darken = !minor && BOXROOT__IS_DARKEN(sc);
  /* W4: the roots are being darkened, marking starts. */
  if (darken) {
    uintptr_t marked = boxroot__compat_weak_marked_colour();
    /* The read barrier's header test tells the cleared mark apart by its
       colour alone (OCaml 5). */
    BOXROOT__ASSERT(!BOXROOT__COMPAT_HEADERS_READABLE
                    || (boxroot__weak_empty[0] & BOXROOT__WEAK_COLOUR_MASK) != marked);
    boxroot__store(&boxroot__weak_marked, marked, RELAXED);
    boxroot__store(&boxroot__weak_barrier, 1, RELAXED);
  }
  struct weak_domain *wd = weak_domains[id];
  if (boxroot__load(&orphans_present, SEQ_CST) && wd == NULL) wd = weak_domain_get(id);
  if (wd == NULL || wd->terminated) return;
  adopt_orphans(wd, id);
  if (minor) {
    if (boxroot__compat_weak_phase() == BOXROOT__WEAK_CLEANING) {
      /* The fallback of W3, stop-the-world: every domain runs this
         before any mutator runs again, so the flag can drop (W4).
         Before the promotion: a value just promoted may not be readable
         yet (the runtime copies fields later, an infix header among
         them), and young values are never cleared anyway (W2). */
      if (!cleared_this_cycle(wd)) clear_domain(wd, 1);
      boxroot__store(&boxroot__weak_barrier, 0, RELAXED);
    }
    scan_minor(wd, id, sc);
  } else if (!darken) {
    apply_all(wd->young, sc);
    apply_all(wd->old, sc);
  }
}

/* ---- domains terminating, teardown, statistics ---- */

void boxroot__weak_terminate(int id)
{
  /* Created if need be, so that it is known as terminated: the domain
     takes part in its last collections, and must adopt no orphan there
     (they would be lost with it). */
  struct weak_domain *wd = weak_domain_get(id);
  if (wd == NULL) return;
  reset_cursor(id);
  pthread_mutex_lock(&orphans_lock);
  for (int cls = WEAK_YOUNG; cls <= WEAK_OLD; cls++) {
    pool **from = weak_ring(wd, cls), **to = cls == WEAK_YOUNG ? &orphan_young : &orphan_old;
    while (*from != NULL) {
      pool *p = *from;
      ring_remove(from, p);
      pool_set_owner(p, BOXROOT__NO_OWNER, BOXROOT__NO_OWNER_KEY);
      ring_insert(to, p, 0);
    }
  }
  boxroot__store(&orphans_present, orphan_young != NULL || orphan_old != NULL, SEQ_CST);
  gone_cleared += wd->cleared;
  gone_collected += wd->collected;
  gone_moves += wd->moves;
  gone_clear_ticks += wd->clear_ticks;
  gone_clear_stw_ticks += wd->clear_stw_ticks;
  wd->cleared = wd->collected = wd->moves = wd->clear_ticks = wd->clear_stw_ticks = 0;
  pthread_mutex_unlock(&orphans_lock);
  wd->cleared_cycle = 0;
  wd->terminated = 1;
}

void boxroot__weak_forget_all(void)
{
  for (int i = 0; i < BOXROOT__MAX_DOMAINS; i++) {
    reset_cursor(i);
    free(weak_domains[i]);
    weak_domains[i] = NULL;
  }
  pthread_mutex_lock(&orphans_lock);
  orphan_young = orphan_old = NULL;
  boxroot__store(&orphans_present, 0, SEQ_CST);
  gone_cleared = gone_collected = gone_moves = gone_clear_ticks = gone_clear_stw_ticks = 0;
  boxroot__store(&deleted_remote, 0, RELAXED);
  boxroot__store(&retired_creations, 0, RELAXED);
  pthread_mutex_unlock(&orphans_lock);
  boxroot__store(&boxroot__weak_barrier, 0, RELAXED);
}

static long one(pool *p) { (void)p; return 1; }
static long in_use(pool *p) { return pool_alloc_count(p); }
static long creations(pool *p) { return pool_creations(p); }

static void sum_rings(pool *a, pool *b, long *pools, long *slots, long *created)
{
  *pools += ring_fold(a, one) + ring_fold(b, one);
  *slots += ring_fold(a, in_use) + ring_fold(b, in_use);
  *created += ring_fold(a, creations) + ring_fold(b, creations);
}

void boxroot__weak_add_stats(struct boxroot_stats *out)
{
  long pools = 0, slots = 0, created = 0, cleared, collected, moves, ticks, stw_ticks;
  pthread_mutex_lock(&orphans_lock);
  sum_rings(orphan_young, orphan_old, &pools, &slots, &created);
  cleared = gone_cleared; collected = gone_collected; moves = gone_moves;
  ticks = gone_clear_ticks; stw_ticks = gone_clear_stw_ticks;
  pthread_mutex_unlock(&orphans_lock);
  for (int i = 0; i < BOXROOT__MAX_DOMAINS; i++) {
    struct weak_domain *wd = boxroot__load(&weak_domains[i], ACQUIRE);
    if (wd == NULL) continue;
    sum_rings(wd->young, wd->old, &pools, &slots, &created);
    cleared += wd->cleared;
    collected += wd->collected;
    moves += wd->moves;
    ticks += wd->clear_ticks;
    stw_ticks += wd->clear_stw_ticks;
  }
  (void)moves;
  long remote = boxroot__load(&deleted_remote, RELAXED);
  out->weak_roots_alive = slots - (remote - collected);
  out->weak_created = created + boxroot__load(&retired_creations, RELAXED);
  out->weak_deleted_remote = remote;
  out->weak_cleared = cleared;
  out->weak_pools = pools;
  out->weak_clear_ns = boxroot__ticks_to_ns(ticks);
  out->weak_clear_stw_ns = boxroot__ticks_to_ns(stw_ticks);
  out->pools_handed_out -= pools;
}
