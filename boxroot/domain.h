/* Per-domain state: the rings of pools a domain owns, and the slow paths
   that move pools between them.

   Each domain owns three rings: young pools (scanned at every minor
   collection, the only ones allocated from), old pools (scanned at major
   collections only) and free pools (never scanned). Pools that a
   terminated domain left behind wait on the shared orphan rings until a
   domain adopts them at the start of its next scan.

   Termination (OCaml 5). The terminated hook runs on the terminating
   domain before its last collections, in which it still takes part
   (runtime/domain.c, boxroot__domain_terminate). So from the hook on, the domain
   is marked terminated: it gives its pools to the orphan rings, adopts
   none at its remaining scans (they would be lost with it), and gets no
   pool for new roots (creation fails). Its rings stay empty. A later
   domain that reuses its id is a new incarnation (OCaml's unique_id) and
   starts afresh.

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
   - A pool with no root is on the free ring or back in the chunk
     allocator, except the current pool, which stays current until the
     next scan. */
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
  void const *key;  /* boxroot__compat_domain_key() of domain id */
  int incarnation;  /* unique_id of the OCaml domain last seen with this id */
  int terminated;   /* that incarnation ran its terminated hook */
  pool *young, *old, *free;
  int free_count;
  struct domain_stats stats;
  /* Set by remote deleters when one of our pools got delayed frees
     (remote.c, D3: sequentially consistent, as the protocol's other
     words); on its own line since other threads write it. */
  _Alignas(CACHE_LINE) int delayed_flag;
};

extern struct boxroot_domain *boxroot__domains[BOXROOT__MAX_DOMAINS];
extern struct boxroot__pool_hot boxroot__empty_pool;

/* The state of domain `id`, created on first use; NULL if out of memory
   or if that domain has terminated. The caller holds that domain's lock,
   or is its scan hook. */
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
/* The calling domain terminates: its pools go to the orphan rings. */
void boxroot__domain_terminate(int id);
/* Takes every orphan pool, if any. Stop-the-world only: the scan hook of
   `d`, whose state is `domain_state` (NULL on OCaml 4.14). */
void boxroot__domain_adopt_orphans(struct boxroot_domain *d, boxroot__domain_state *domain_state);
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
/* Teardown: forgets every domain and orphan (pools are unmapped by the
   chunk allocator). */
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
/* Calls `visit` on every orphan pool, under the orphans' lock: the scan
   of a domain that cannot adopt them (scan.c). Stop-the-world only. */
void boxroot__domain_visit_orphans(void (*visit)(pool *p, void *data), void *data);

/* Sums over the orphan rings, under their lock. */
void boxroot__domain_orphan_counts(long *pools, long *roots, long *creations);
/* Creations counted by pools since given back to the chunk allocator. */
long boxroot__domain_retired_creations(void);

#endif /* BOXROOT_DOMAIN_H */
