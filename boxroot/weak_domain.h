/* Each domain's weak pools: its weak state and rings, deletion by other
   threads, the orphans of terminated domains, and the statistics. The
   protocol (W1-W5): weak.c. */
#ifndef BOXROOT_WEAK_DOMAIN_H
#define BOXROOT_WEAK_DOMAIN_H

#include "boxroot.h"
#include "domain.h"
#include "pool.h"
#include "remote.h"

#define WEAK_YOUNG BOXROOT__CLASS_WEAK_YOUNG
#define WEAK_OLD BOXROOT__CLASS_WEAK_OLD

/* A domain's weak state. Only the domain (lock held, or its hooks) reads
   or writes it, except `delayed_flag` (remote deleters, D3) and the
   statistics (read while every domain is stopped: api.c). Its key,
   incarnation and termination are the domain's (domain.h). */
struct weak_domain {
  pool *young, *old;      /* rings (W1) */
  uint64_t cleared_cycle; /* 1 + the weak cycle last cleared, or 0 (W3) */
  long cleared, collected, moves, clear_ticks, clear_stw_ticks;
  /* Notifying roots (weak_notify.c): their pools' rings, apart from the
     plain ones so that a plain root never takes a slot with a side
     record; their current pool, or NULL; the pools with notices (N2),
     first and last, or NULL. */
  pool *nyoung, *nold, *ncurrent;
  pool *emptied_head, *emptied_tail;
  long emptied_reported;
  _Alignas(CACHE_LINE) int delayed_flag;
};

/* Every domain id's weak state, as domain.h's states: 192 bytes each,
   768 KiB in all, touched only for the ids in use. */
extern struct weak_domain boxroot__weak_domains[BOXROOT__MAX_DOMAINS];

/* Domain id's weak state, NULL if that domain has terminated. Its lock
   held, or its hook. */
static inline struct weak_domain *boxroot__weak_domain_get(int id)
{
  return boxroot__domain_get(id) == NULL ? NULL : &boxroot__weak_domains[id];
}

/* Domain id's weak state at its scan hook, with the orphans of
   terminated domains adopted (they are cleared in this cycle's W3 if it
   is not over); NULL if that domain has terminated. */
struct weak_domain *boxroot__weak_domain_adopting(int id);

/* A new pool of domain id (owner key `key`), at the front of its young
   ring: a notifying one with side records `side` (weak_notify.c, N1), or
   a plain one if NULL. NULL if no pool could be had (out of memory). The
   owner, lock held. */
pool *boxroot__weak_pool_new(struct weak_domain *wd, int id, void const *key,
                             struct boxroot__notify_side *side);

/* `p`, emptied by the clearing, goes back to the chunk allocator
   (`decommit`: whether its memory may be decommitted, marking.c, M2). */
void boxroot__weak_pool_retire(pool *p, int decommit);

/* The domain-termination hook (compat_ocaml5.c), after
   boxroot__domain_terminate: domain id's weak pools become orphans,
   unless `alone` (domain.h). */
void boxroot__weak_terminate(int id, int alone);
/* Teardown: resets the cursors and forgets the orphans (as domain.h's
   states, the weak states keep rings that are unmapped next). */
void boxroot__weak_forget_all(void);
/* Adds the weak counters to `out`, while no domain runs (api.c's
   read protocol of the statistics). */
struct boxroot_stats;
void boxroot__weak_add_stats(struct boxroot_stats *out);

/* Whether `p` is a pool of notifying roots (weak_notify.c). */
static inline int pool_notifying(pool const *p) { return p->notify != NULL; }

/* The ring of class `cls` for plain (`notifying` 0) or notifying pools. */
static inline pool **weak_ring(struct weak_domain *wd, int cls, int notifying)
{
  if (notifying) return cls == WEAK_YOUNG ? &wd->nyoung : &wd->nold;
  return cls == WEAK_YOUNG ? &wd->young : &wd->old;
}

static inline void weak_move_to(struct weak_domain *wd, pool *p, int cls, int at_front)
{
  ring_remove(weak_ring(wd, pool_class(p), pool_notifying(p)), p);
  pool_set_class(p, cls);
  ring_insert(weak_ring(wd, cls, pool_notifying(p)), p, at_front);
}

/* Detaches ring `cls` as a NULL-terminated list through `next`. */
static inline pool *weak_detach(struct weak_domain *wd, int cls, int notifying)
{
  pool **ring = weak_ring(wd, cls, notifying), *head = *ring;
  *ring = NULL;
  if (head == NULL) return NULL;
  head->prev->next = NULL;
  return head;
}

/* Puts a detached pool on the old ring: low pools first (reused first). */
static inline void weak_place_old(struct weak_domain *wd, pool *p)
{
  p->next = p->prev = NULL;
  pool_set_class(p, WEAK_OLD);
  ring_insert(weak_ring(wd, WEAK_OLD, pool_notifying(p)), p, pool_alloc_count(p) < POOL_LOW_MARK);
}

/* Domain id's current weak pool, NULL if none. */
static inline pool *weak_current_pool(int id)
{
  struct boxroot__pool_hot *p = boxroot__weak_cursor[id];
  return p == &boxroot__empty_pool ? NULL : (pool *)p;
}

static inline void weak_reset_cursor(int id) { boxroot__weak_cursor[id] = &boxroot__empty_pool; }

/* Frees the slots of `p` deleted remotely (remote.c's C1-C3; no barrier:
   no marker reads weak pools). The owner. */
static inline int weak_collect(struct weak_domain *wd, pool *p)
{
  int freed = boxroot__remote_free_delayed(p, NULL);
  wd->collected += freed;
  return freed;
}

#endif
