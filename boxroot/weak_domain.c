/* Each domain's weak pools: its weak state and rings, deletion by other
   threads, the orphans of terminated domains, and the statistics. The
   rules (weak.c): the rings, W1; "Deletion" and "Domains", at its end. */
#include <pthread.h>
#include "asserts.h"
#include "boxroot_stats.h"
#include "chunk.h"
#include "ticks.h"
#include "weak_domain.h"
#include "notify_side.h"

_Static_assert(BOXROOT__CLASS_WEAK_YOUNG > CLASS_NONE && BOXROOT__CLASS_WEAK_OLD > CLASS_NONE,
               "weak pool classes are distinct from the strong ones (pool.h)");

#define BITS_PER_WORD (8 * sizeof(uintptr_t))

struct boxroot__pool_hot *boxroot__weak_cursor[BOXROOT__MAX_DOMAINS] = {
  [0 ... BOXROOT__MAX_DOMAINS - 1] = &boxroot__empty_pool,
};

struct weak_domain boxroot__weak_domains[BOXROOT__MAX_DOMAINS];

/* Orphans, and statistics of what is gone, under orphans_lock. */
static pthread_mutex_t orphans_lock = PTHREAD_MUTEX_INITIALIZER;
static pool *orphan_young, *orphan_old;
/* The notices of terminated domains, adopted with their pools
   (weak_notify.c, N4). */
static pool *orphan_emptied_head, *orphan_emptied_tail;
static int orphans_present; /* as domain.c's */
static long gone_cleared, gone_collected, gone_moves, gone_clear_ticks, gone_clear_stw_ticks;
static long deleted_remote; /* atomic, relaxed (statistics) */
static long retired_creations; /* atomic, relaxed (statistics): of pools given back */

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

static void adopt_orphans(struct weak_domain *wd, int id, void const *key)
{
  if (!boxroot__load(&orphans_present, SEQ_CST)) return;
#ifdef BOXROOT_TESTING_WEAK_ORPHANS_UNADOPTED /* a broken build for tests */
  return;
#endif
  pthread_mutex_lock(&orphans_lock);
  for (int cls = WEAK_YOUNG; cls <= WEAK_OLD; cls++) {
    pool **from = cls == WEAK_YOUNG ? &orphan_young : &orphan_old;
    while (*from != NULL) {
      pool *p = *from;
      ring_remove(from, p);
      pool_set_owner(p, id, key);
      ring_insert(weak_ring(wd, cls, pool_notifying(p)), p,
                  cls == WEAK_OLD && pool_alloc_count(p) < POOL_LOW_MARK);
    }
  }
  notify_splice(&wd->emptied_head, &wd->emptied_tail, &orphan_emptied_head,
                &orphan_emptied_tail);
  boxroot__store(&orphans_present, 0, SEQ_CST);
  pthread_mutex_unlock(&orphans_lock);
  wd->cleared_cycle = 0; /* the orphans may not be cleared yet (W3) */
  boxroot__store(&wd->delayed_flag, 1, SEQ_CST);
}

struct weak_domain *boxroot__weak_domain_adopting(int id)
{
  struct boxroot_domain *d = boxroot__domain_get(id);
#ifdef BOXROOT_TESTING_WEAK_TERMINATED_ADOPTS /* a broken build for tests */
  if (d == NULL) d = &boxroot__domains[id];
#endif
  if (d == NULL) return NULL;
  struct weak_domain *wd = &boxroot__weak_domains[id];
  adopt_orphans(wd, id, d->key);
  return wd;
}

pool *boxroot__weak_pool_new(struct weak_domain *wd, int id, void const *key,
                             struct boxroot__notify_side *side)
{
  pool *fresh = boxroot__chunk_alloc_pool();
  if (fresh == NULL) return NULL;
  boxroot__pool_reset(fresh);
  boxroot__store(&fresh->delayed_pending, 0, SEQ_CST);
  for (int i = 0; i < DELAYED_WORDS; i++) boxroot__store(&fresh->delayed_bits[i], 0, SEQ_CST);
  fresh->notify = side;
  pool_set_owner(fresh, id, key);
  pool_set_class(fresh, WEAK_YOUNG);
  ring_insert(weak_ring(wd, WEAK_YOUNG, side != NULL), fresh, 1);
  return fresh;
}

void boxroot__weak_pool_retire(pool *p, int decommit)
{
#ifdef BOXROOT_TESTING
  for (void **s = p->slots; s < p->fresh; s++) BOXROOT__ASSERT(pool_slot_is_free(p, *s));
#endif
  boxroot__fetch_add(&retired_creations, pool_creations(p), RELAXED);
  boxroot__notify_release(p);
  pool_set_owner(p, BOXROOT__NO_OWNER, BOXROOT__NO_OWNER_KEY);
  pool_set_class(p, CLASS_NONE);
  p->next = p->prev = NULL;
  boxroot__chunk_free_pool(p, decommit);
}

/* ---- deletion (remote.c's protocol) ---- */

void boxroot__weak_delete_local_slow(struct boxroot__pool_hot *hot)
{
  pool *p = (pool *)hot;
  struct weak_domain *wd = &boxroot__weak_domains[pool_owner(p)];
  /* Low or empty, not current: reused first. */
  if (pool_class(p) == WEAK_OLD) weak_move_to(wd, p, WEAK_OLD, 1);
}

static int *weak_delayed_flag(int owner)
{
  return &boxroot__weak_domains[owner].delayed_flag;
}

/* Each deletion published at once (no runs). */
void boxroot__weak_delete_other(boxroot_weak w, void const *key)
{
  (void)key;
  void **slot = (void **)boxroot__weak_slot_of(w);
  pool *p = pool_of_slot(slot);
  size_t i = (size_t)(slot - p->slots);
  boxroot__remote_publish(p, &p->delayed_bits[i / BITS_PER_WORD],
                          (uintptr_t)1 << (i % BITS_PER_WORD), weak_delayed_flag);
  boxroot__fetch_add(&deleted_remote, 1, RELAXED);
}

void boxroot__weak_terminate(int id, int alone)
{
  if (alone) return; /* the last domain keeps its pools (domain.h) */
  struct weak_domain *wd = &boxroot__weak_domains[id];
  weak_reset_cursor(id);
  wd->ncurrent = NULL;
  pthread_mutex_lock(&orphans_lock);
  for (int cls = WEAK_YOUNG; cls <= WEAK_OLD; cls++) {
    pool **to = cls == WEAK_YOUNG ? &orphan_young : &orphan_old;
    for (int notifying = 0; notifying <= 1; notifying++) {
      pool **from = weak_ring(wd, cls, notifying);
      while (*from != NULL) {
        pool *p = *from;
        ring_remove(from, p);
        pool_set_owner(p, BOXROOT__NO_OWNER, BOXROOT__NO_OWNER_KEY);
        ring_insert(to, p, 0);
      }
    }
  }
  notify_splice(&orphan_emptied_head, &orphan_emptied_tail, &wd->emptied_head,
                &wd->emptied_tail);
  boxroot__store(&orphans_present, orphan_young != NULL || orphan_old != NULL, SEQ_CST);
  gone_cleared += wd->cleared;
  gone_collected += wd->collected;
  gone_moves += wd->moves;
  gone_clear_ticks += wd->clear_ticks;
  gone_clear_stw_ticks += wd->clear_stw_ticks;
  wd->cleared = wd->collected = wd->moves = wd->clear_ticks = wd->clear_stw_ticks = 0;
  pthread_mutex_unlock(&orphans_lock);
  wd->cleared_cycle = 0;
}

void boxroot__weak_forget_all(void)
{
  for (int i = 0; i < BOXROOT__MAX_DOMAINS; i++) {
    struct weak_domain *wd = &boxroot__weak_domains[i];
    weak_reset_cursor(i);
    wd->nyoung = wd->nold = wd->ncurrent = NULL;
    wd->emptied_head = wd->emptied_tail = NULL;
  }
  /* weak_notify.c, N6: the pools are unmapped next, not their records. */
  boxroot__notify_release_all();
  pthread_mutex_lock(&orphans_lock);
  orphan_young = orphan_old = NULL;
  orphan_emptied_head = orphan_emptied_tail = NULL;
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
    struct weak_domain *wd = &boxroot__weak_domains[i];
    sum_rings(wd->young, wd->old, &pools, &slots, &created);
    sum_rings(wd->nyoung, wd->nold, &pools, &slots, &created);
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
