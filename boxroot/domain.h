/* Per-domain state: the rings of pools a domain owns, and the slow paths
   that move pools between them.

   Each domain owns three rings: young pools (scanned at every minor
   collection, the only ones allocated from), old pools (scanned at major
   collections only) and free pools (never scanned). Pools that a
   terminated domain left behind wait on the shared orphan rings until a
   domain adopts them at the start of its next scan.

   Every domain id has its state from the start: a static array, whose
   pages the operating system maps (zero) only when touched, so that
   getting a domain's state needs no memory and cannot fail, in a hook
   least of all. A domain's first use of its id (OCaml's unique_id tells
   incarnations apart) resets what the previous incarnation left.

   Termination (OCaml 5). The terminated hook runs on the terminating
   domain before its last collections, in which it still takes part
   (runtime/domain.c, caml_domain_terminate). From the hook on, the
   domain is marked terminated: it gives its pools to the orphan rings,
   adopts none at its remaining scans (they would be lost with it), and
   gets no pool for new roots (creation fails). Another domain always
   adopts them in the first collection after the hook, at the start of
   its scan, before it promotes: the young values they hold are promoted
   there, as the terminated domain's minor heap is emptied. (On 5.5 that
   collection may be one whose section darkens roots, where a domain
   that left root marking early terminates before another reaches its
   darkening scan: the adopter lists them UNMARKED with the stamp 0
   (marking.c, M1) while they still hold young values, which the marker
   skips, and which the terminated domain's last minor collection
   promotes.) For every
   running domain scans in every collection (each stop-the-world section
   that scans roots starts with a minor collection, in which the
   terminating domain's minor heap is emptied at the latest), and the
   main domain does not terminate before the others: 5.1-5.4 never run
   its hook, 5.5 does in caml_shutdown, only once it is alone. The last
   domain (caml_domain_alone in its hook: no domain is left to spawn
   another) keeps its pools instead, and scans them as its own in its
   last collections.

   What other threads read without the owner's lock (relaxed loads):
   - `owner`, by boxroot_delete to pick the local path. It changes when a
     domain takes a pool from the chunk allocator (no root in it yet, so
     no deleter), when a terminating domain orphans it (to NO_OWNER), and
     when a domain adopts it in a stop-the-world section. A stale read
     gives another domain's id or NO_OWNER, hence the remote path, which
     is always safe; a thread reads its own domain's id only if that
     domain set it, which its lock or the stop-the-world barrier orders.
   - `cls`, by boxroot_modify on a root of any domain: a young pool turns
     old only in a scan (stop-the-world), which the modifying thread
     reaches only after its write; a stale "old" only sends a young value
     to the slow path, which moves the root: correct either way.
   Nothing else: the statistics read a domain's rings and `stats` only on
   its behalf, while no thread can change them (their read protocol:
   boxroot_get_stats in api.c).

   Invariants (enforced in domain.c):
   - Only the owner domain changes its rings and its pools' free lists,
     while holding its domain lock or during a stop-the-world section
     (where the scan hook runs on its behalf).
   - The current pool (boxroot__alloc_cursor[id].pool) is the head of the
     young ring, or the empty pool. Its count is biased by
     CURRENT_POOL_COUNT_BIAS (pool.h, `count_bias`): emptying the current
     pool, which a function-local root does at each call, moves nothing,
     and with the bias boxroot_delete does not even test for it
     (boxroot_internal.h). Only the cursor's two setters below change
     the bias.
   - Old pools with fewer than POOL_LOW_MARK roots come first in the old
     ring, so the head tells whether a pool can be demoted.
   - Young pools that became low or empty since the last scan sit right
     after the current pool, where boxroot__domain_refill takes them in
     order (a young orphan adopted by a scan may break the order until
     the scan places it).
   - A pool with no root is on the free ring or back in the chunk
     allocator, except the current pool, which stays current until the
     next scan, and at most BOXROOT_FREE_POOLS_KEPT young pools emptied
     since the last scan (`empty_young` counts them), which stay on the
     young ring, listed (marking.c, M0), until they are current again or
     the next scan places them: emptying and refilling a pool then leaves
     and joins no directory. */
#ifndef BOXROOT_DOMAIN_H
#define BOXROOT_DOMAIN_H

#include "asserts.h"
#include "pool.h"
#include "remote.h"

struct domain_stats {
  long minor_scans, major_scans;
  long minor_slots_scanned, major_slots_scanned;
  long minor_scan_ticks, major_scan_ticks; /* ticks.h */
  long pools_demoted, pools_adopted;
  long delayed_frees_collected;
};

struct boxroot_domain {
  int id;
  int terminated;   /* the incarnation below ran its terminated hook */
  void const *key;  /* boxroot__compat_domain_key() of domain id */
  uintnat incarnation; /* 1 + unique_id of the OCaml domain last seen with
                          this id; 0: never used */
  pool *young, *old, *free;
  int free_count;
  int empty_young;  /* young pools with no root, other than the current one (above) */
  struct domain_stats stats;
};

/* Every domain id's state (above): 128 bytes each, 512 KiB in all, of
   which only the pages of the ids in use are ever touched (and 256 KiB
   of flags in remote.c). */
extern struct boxroot_domain boxroot__domains[BOXROOT__MAX_DOMAINS];
extern struct boxroot__pool_hot boxroot__empty_pool;

/* The state of domain `id`, reset at the first use by a new incarnation
   of that id; NULL once that incarnation has terminated. The caller
   holds that domain's lock, or is its hook. */
struct boxroot_domain *boxroot__domain_get(int id);

static inline pool *domain_current_pool(struct boxroot_domain *d)
{
  struct boxroot__pool_hot *p = boxroot__alloc_cursor[d->id].pool;
  return p == &boxroot__empty_pool ? NULL : (pool *)p;
}
/* Any bias that is not a multiple of BOXROOT__LOW_COUNT would do:
   boxroot__delete_local's test fires when the count's low bits are 0. */
#define CURRENT_POOL_COUNT_BIAS 1
static inline void domain_reset_cursor(int id)
{
  struct boxroot__pool_hot *current = boxroot__alloc_cursor[id].pool;
  if (current != &boxroot__empty_pool) pool_set_count_bias((pool *)current, 0);
  boxroot__alloc_cursor[id].pool = &boxroot__empty_pool;
}
static inline void domain_set_cursor(int id, pool *p)
{
  domain_reset_cursor(id);
  pool_set_count_bias(p, CURRENT_POOL_COUNT_BIAS);
  boxroot__alloc_cursor[id].pool = &p->hot;
}

/* Makes the current pool one with a free slot. NULL if out of memory. */
pool *boxroot__domain_refill(struct boxroot_domain *d);
/* The usual case of boxroot__domain_refill, for a thread that holds
   domain `id`'s lock: the current pool is full and the next pool on the
   young ring has free slots, which becomes current. NULL if it is not
   that case (then boxroot__domain_refill). */
pool *boxroot__domain_refill_next(int id);
/* After `p`'s count dropped (local delete or collected delayed frees):
   moves it to the ring its occupancy calls for. */
void boxroot__domain_pool_count_dropped(struct boxroot_domain *d, pool *p);
/* Detaches ring `cls` and puts each pool back where its occupancy calls
   for, as class `new_cls` (young pools become old after a minor scan). */
void boxroot__domain_resort_ring(struct boxroot_domain *d, int cls, int new_cls);
/* The same in two steps, so that a scan visits each pool once: detach
   returns the ring as a NULL-terminated list through `next`, in the
   order to visit (for the young ring, the order in which its pools were
   first used); each pool then goes back with boxroot__domain_place. */
pool *boxroot__domain_detach_ring(struct boxroot_domain *d, int cls);
void boxroot__domain_place(struct boxroot_domain *d, pool *p, int new_cls);
/* The calling domain terminates (its terminated hook): its pools go to
   the orphan rings, unless `alone` (no other domain runs). */
void boxroot__domain_terminate(int id, int alone);
/* Takes every orphan pool, if any. Stop-the-world only: the scan hook of
   `d`, whose state is `domain_state` (NULL on OCaml 4.14), at a minor
   scan or not (marking.c, M1). */
void boxroot__domain_adopt_orphans(struct boxroot_domain *d, boxroot__domain_state *domain_state,
                                   int minor);
/* Frees the slots of `p` whose deletion was delayed (remote.c), and
   counts them in `d`'s statistics (the derived counts of
   boxroot_get_stats need every one). Owner `d` only. */
static inline int domain_collect_remote(struct boxroot_domain *d, pool *p,
                                        boxroot__domain_state *barrier_state)
{
  BOXROOT__ASSERT(pool_owner(p) == d->id); /* only the owner frees slots */
  int freed = boxroot__remote_free_delayed(p, barrier_state);
  d->stats.delayed_frees_collected += freed;
  return freed;
}
/* Teardown: resets the cursors and forgets the orphans. The states keep
   their rings of pools that the chunk allocator unmaps next: nothing
   reads them once torn down (no hook runs any more, compat_ocaml5.c). */
void boxroot__domain_forget_all(void);

/* The head of ring `cls` (CLASS_YOUNG, CLASS_OLD or CLASS_FREE) of `d`. */
static inline pool **domain_ring(struct boxroot_domain *d, int cls)
{
  return cls == CLASS_YOUNG ? &d->young : cls == CLASS_OLD ? &d->old : &d->free;
}
/* Sums over `d`'s rings: pools per class (indexed by CLASS_YOUNG,
   CLASS_OLD, CLASS_FREE), slots in use, creations. On `d`'s behalf
   (above). */
void boxroot__domain_counts(struct boxroot_domain *d, long pools[3], long *roots,
                            long *creations);
/* Sums over the orphan rings, under their lock. */
void boxroot__domain_orphan_counts(long *pools, long *roots, long *creations);
/* Creations counted by pools since given back to the chunk allocator. */
long boxroot__domain_retired_creations(void);

#endif /* BOXROOT_DOMAIN_H */
