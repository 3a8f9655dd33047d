/* Weak roots: values held without being kept alive (API: boxroot.h; the
   fast paths: boxroot_weak_internal.h; version-specific calls: weak.h,
   compat_ocaml5.c, compat_ocaml4.c).

   Where they live. In weak pools: pools as pool.h lays them out, owned
   by a domain like strong pools (free list, counts, owner word,
   delayed-free bitmap), but on each domain's weak rings (weak_domain.c), `young`
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
   pools to the weak orphan rings, as it does its strong ones, and adopts
   none in the collections it still takes part in; another domain adopts
   them at the start of its scan in the first of them, a minor one, and
   so promotes their young values there (W2) as the terminated domain's
   minor heap is emptied (domain.h says why one always does), and clears
   them in this cycle's W3 if it is not over (adopting resets the
   adopter's record of W3).

   Cost: create and delete are the strong fast paths on other pools;
   get is one load, a test of the flag and a test of the value (W4);
   each major cycle reads every weak slot handed out once (W3), outside
   stop-the-world sections on OCaml 5.
   Notifying weak roots, which report their emptying: weak_notify.c
   (N1-N6), on top of these rules.
   Where the rules are enforced: weak_domain.c keeps each domain's weak
   state and rings (W1), deletion and the orphans of terminated domains;
   weak_clearing.c promotes (W2), clears (W3) and raises and lowers the
   read barrier's flag (W4); this file creates and modifies roots (W1)
   and holds the read barrier's slow path (W4). */
#define CAML_INTERNALS
#define CAML_NAME_SPACE
#include <errno.h>
#include "boxroot.h"
#include "chunk.h"
#include "marking.h"
#include "status.h"
#include "weak.h"
#include "weak_domain.h"
#include "weak_notify.h"
#include "window.h"

#define EMPTY BOXROOT__WEAK_EMPTY

/* W4. Relaxed: both change only in scan hooks and stop-the-world
   sections, before the mutators that read them run again (atomics.h);
   every hook writes the same colour. */
uint32_t boxroot__weak_barrier;
uintptr_t boxroot__weak_marked;
/* W1: the header's colour is 3 << 8, OCaml 5's NOT_MARKABLE and OCaml
   4.14's black, so that a marker that reads it never marks it (a pool
   enlisted for marking as a strong pool may be recycled as a weak pool
   while the marker still reads it: marking.c, M2). */
uintptr_t const boxroot__weak_empty[2] = {
  ((uintptr_t)1 << 10) | ((uintptr_t)3 << 8), /* wosize 1, colour 3 << 8, tag 0 */
  Val_unit,
};


/* ---- creation ---- */

/* Makes `p` the current pool; 0 if it has no room. */
static int make_current(struct weak_domain *wd, int id, pool *p)
{
  if (pool_class(p) != WEAK_YOUNG || wd->young != p) weak_move_to(wd, p, WEAK_YOUNG, 1);
  if (!pool_has_free(p) && !marking_thread_fresh(p)) return 0;
  boxroot__weak_cursor[id] = &p->hot;
  return 1;
}

static pool *refill(struct weak_domain *wd, int id, void const *key)
{
  pool *p = weak_current_pool(id);
  if (p != NULL) {
    if (marking_thread_fresh(p)) return p;
    if (weak_collect(wd, p) > 0 && pool_has_free(p)) return p;
    /* Full: to the back of the young ring. */
    weak_move_to(wd, p, WEAK_YOUNG, 0);
    weak_reset_cursor(id);
  }
  pool *o = wd->old;
  if (o != NULL && pool_alloc_count(o) < POOL_LOW_MARK && make_current(wd, id, o)) return o;
  pool *fresh = boxroot__weak_pool_new(wd, id, key, NULL); /* plain (weak_notify.c, N1) */
  if (fresh == NULL) return NULL;
  make_current(wd, id, fresh);
  return fresh;
}

boxroot_weak boxroot__weak_create_slow(value v)
{
  int id = boxroot__locked_domain_or_fail("boxroot_weak_create: this thread does not hold the OCaml domain lock");
  if (id < 0) return NULL;
  if (!boxroot__running_or_fail()) return NULL;
  struct boxroot_domain *d = boxroot__domain_get(id);
  pool *p = d == NULL ? NULL : refill(&boxroot__weak_domains[id], id, d->key);
  if (p == NULL) {
    boxroot__fail(ENOMEM, "boxroot_weak_create: no pool for new roots (out of memory, "
                  "or this domain has terminated)");
    return NULL;
  }
  /* Without the fast path's test of the lock, as boxroot__create_slow. */
  return boxroot__weak_pool_take(&p->hot, v);
}

bool boxroot__weak_modify_slow(boxroot_weak *w, value v)
{
  int id = boxroot__locked_domain_or_fail("boxroot_weak_modify: this thread does not hold the OCaml domain lock");
  if (id < 0) return false;
  /* A young value into an old pool (W1): move the root, a notifying one
     with its word (weak_notify.c, N5). */
  void **slot = (void **)boxroot__weak_slot_of(*w);
  pool *p = pool_of_slot(slot);
  boxroot_weak moved = p->notify != NULL
    ? boxroot__notify_create(v, p->notify->word[notify_index(p, slot)])
    : boxroot_weak_create(v);
  if (moved == NULL) return false;
  boxroot_weak_delete(*w);
  *w = moved;
  boxroot__weak_domains[id].moves++;
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
  value v = boxroot__load(boxroot__weak_slot_of(w), RELAXED);
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
