/* Per-domain state: the rings of pools a domain owns, and the slow paths
   that move pools between them.

   Each domain owns three rings: young pools (scanned at every minor
   collection, the only ones allocated from), old pools (scanned at major
   collections only) and free pools (never scanned). Pools that a
   terminated domain left behind wait on the shared orphan rings until a
   domain adopts them at the start of its next scan.

   Termination (OCaml 5). The terminated hook runs on the terminating
   domain before its last collections, in which it still takes part
   (runtime/domain.c, domain_terminate). So from the hook on, the domain
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

   Invariants (enforced in domain.c):
   - Only the owner domain changes its rings and its pools' free lists,
     while holding its domain lock or during a stop-the-world section
     (where the scan hook runs on its behalf).
   - The current pool (boxroot_alloc_cursor[id].pool) is the head of the
     young ring, or the empty pool.
   - Old pools with fewer than POOL_LOW_MARK roots come first in the old
     ring, so the head tells whether a pool can be demoted.
   - A pool with no root is on the free ring or back in the chunk
     allocator, except the current pool, which stays current until the
     next scan. */
#ifndef BOXROOT_DOMAIN_H
#define BOXROOT_DOMAIN_H

#include <stdatomic.h>
#include "pool.h"

/* Free pools a domain keeps for itself before giving them back to the
   chunk allocator: enough to absorb a burst of creations after a
   collection without taking the chunk lock. Checked with `bench/tune.py
   free-pools-kept` (bench/results/tune/README.md): keeping none makes
   create+delete with 10^5..10^6 roots alive 21-23% slower (+4.9%
   instructions in boxroot); 2, 8 and 32 do not differ on any benchmark
   (identical instruction counts). 8 is kept, a wash, for bursts larger
   than the benchmarks': at most 96 KiB of idle pools more than 2. */
#ifndef FREE_POOLS_KEPT /* overridden by bench/tune.py */
#define FREE_POOLS_KEPT 8
#endif

struct domain_stats {
  long minor_scans, major_scans;
  long minor_slots_scanned, major_slots_scanned;
  long minor_scan_ticks, major_scan_ticks; /* scan_clock_ticks() units */
  long pools_demoted, pools_adopted;
  long delayed_frees_collected;
};

struct boxroot_domain {
  int id;
  void const *key;  /* boxroot_compat_domain_key() of domain id */
  int incarnation;  /* unique_id of the OCaml domain last seen with this id */
  int terminated;   /* that incarnation ran its terminated hook */
  pool *young, *old, *free;
  int free_count;
  struct domain_stats stats;
  /* Set by remote deleters when one of our pools got delayed frees
     (remote.c); on its own line since other threads write it. */
  _Alignas(CACHE_LINE) atomic_int delayed_flag;
};

extern struct boxroot_domain *boxroot_domains[BOXROOT_MAX_DOMAINS];
extern struct boxroot_pool_hot boxroot_empty_pool;

/* The state of domain `id`, created on first use; NULL if out of memory
   or if that domain has terminated. The caller holds that domain's lock,
   or is its scan hook. */
struct boxroot_domain *domain_get(int id);

static inline pool *domain_current_pool(struct boxroot_domain *d)
{
  struct boxroot_pool_hot *p = boxroot_alloc_cursor[d->id].pool;
  return p == &boxroot_empty_pool ? NULL : (pool *)p;
}
static inline void domain_reset_cursor(int id)
{
  boxroot_alloc_cursor[id].pool = &boxroot_empty_pool;
}

/* Points this thread's cursor cache (boxroot.h, OCaml 5 only) at domain
   `id`'s cursor; the thread holds that domain's lock. */
void domain_point_thread_cursor(int id);
/* Makes the current pool one with a free slot. NULL if out of memory. */
pool *domain_refill(struct boxroot_domain *d);
/* After `p`'s count dropped (local delete or collected delayed frees):
   moves it to the ring its occupancy calls for. */
void domain_pool_count_dropped(struct boxroot_domain *d, pool *p);
/* Detaches ring `cls` and puts each pool back where its occupancy calls
   for, as class `new_cls` (young pools become old after a minor scan). */
void domain_resort_ring(struct boxroot_domain *d, int cls, int new_cls);
/* The same in two steps, so that a scan visits each pool once: detach
   returns the ring as a NULL-terminated list through `next`, in the
   order to visit (for the young ring, the order in which its pools were
   first used); each pool then goes back with domain_place. */
pool *domain_detach_ring(struct boxroot_domain *d, int cls);
void domain_place(struct boxroot_domain *d, pool *p, int new_cls);
/* The calling domain terminates: its pools go to the orphan rings. */
void domain_terminate(int id);
/* Takes every orphan pool, if any. Stop-the-world only. */
void domain_adopt_orphans(struct boxroot_domain *d);
/* Teardown: forgets every domain and orphan (pools are unmapped by the
   chunk allocator). */
void domain_forget_all(void);

/* Ring traversal for scanning and statistics. */
static inline pool *domain_ring(struct boxroot_domain *d, int cls)
{
  return cls == CLASS_YOUNG ? d->young : cls == CLASS_OLD ? d->old : d->free;
}
/* Sums over the orphan rings, under their lock. */
void domain_orphan_counts(long *pools, long *roots, long *creations);
/* Creations counted by pools since given back to the chunk allocator. */
long domain_retired_creations(void);

#endif /* BOXROOT_DOMAIN_H */
