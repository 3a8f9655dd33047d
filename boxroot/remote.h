/* Deletion by a thread that does not own the root's pool. */
#ifndef BOXROOT_REMOTE_H
#define BOXROOT_REMOTE_H

#include "pool.h"


/* Frees the slots of `p` whose deletion was delayed (C1-C3). Its owner
   only (its lock held, or its scan hook). Returns how many; the caller
   then fixes the pool's ring position if it matters, and counts them
   (domain_collect_remote, domain.h). `barrier_state`: the domain state on
   whose mark stack the deletion barrier darkens the values freed while
   their pool's stamp is not current (marking.c, M3), or NULL
   (slot-by-slot scans). Step C1 inline: the owner asks at every refill
   of its current pool, for up to BOXROOT_RECLAIM_YOUNG_POOLS + 1 pools,
   which mostly have no deletion pending. */
int boxroot__remote_collect(pool *p, boxroot__domain_state *barrier_state);
static inline int boxroot__remote_free_delayed(pool *p, boxroot__domain_state *barrier_state)
{
  if (boxroot__load(&p->delayed_pending, SEQ_CST) == 0) return 0;   /* C1 */
  return boxroot__remote_collect(p, barrier_state);
}

/* Domain `id`'s flag (D3, sequentially consistent: store buffering,
   atomics.h), which a deletion in one of its pools raises:
   on a line of its own, since other threads write it. */
extern struct boxroot__remote_flag { _Alignas(CACHE_LINE) int raised; }
  boxroot__remote_flags[BOXROOT__MAX_DOMAINS];
static inline int *remote_owner_flag(int id) { return &boxroot__remote_flags[id].raised; }

/* Publishes the deletions of the slots `bits` of `word`, a word of
   `p`'s delayed-free bitmap (D1-D3), for pools whose owner's flag is not
   a boxroot_domain's: `owner_flag(owner)` is that flag, or NULL (weak
   pools: weak.c). */
void boxroot__remote_publish(pool *p, uintptr_t *word, uintptr_t bits,
                             int *(*owner_flag)(int owner));

/* Publishes the deletions that domain `dom` gathered in its cursor
   (remote.c). Its lock held, or its scan or termination hook. */
void boxroot__remote_flush(int dom);
/* Domain `dom` terminates (its terminated hook, lock held): publishes
   its run, and makes each of its later deletions publish at once. */
void boxroot__remote_terminate(int dom);
/* How many deletions the domain of cursor `c` gathered and has not
   published yet (statistics; racy unless its lock is held). */
static inline long remote_unpublished(struct boxroot__alloc_cursor const *c)
{
  uintptr_t bits = c->run_bits;
  return bits == 0 ? 0 : __builtin_popcountl(bits); /* a libgcc call */
}

/* Deletions so far by threads holding no domain lock. */
long boxroot__remote_purely_remote_deletes(void);

#endif
