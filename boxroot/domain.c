/* Per-domain rings and the pool-selection policy (invariants in domain.h). */
#include <pthread.h>
#include "asserts.h"
#include "chunk.h"
#include "domain.h"
#include "marking.h"
#include "remote.h"
#include "window.h"

struct boxroot_domain boxroot__domains[BOXROOT__MAX_DOMAINS];

/* Its free list is empty (it ends at the pool's own address), so the
   create fast path takes the slow path without a test of the cursor. */
struct boxroot__pool_hot boxroot__empty_pool = {
  .free_link = (char *)&boxroot__empty_pool + BOXROOT__COMPAT_LINK_TAG, .counts = 0,
};

/* A line each (the struct's size), but only if the array starts on one:
   domains write their cursors all the time. */
struct boxroot__alloc_cursor boxroot__alloc_cursor[BOXROOT__MAX_DOMAINS]
__attribute__((aligned(BOXROOT__CACHE_LINE))) = {
  [0 ... BOXROOT__MAX_DOMAINS - 1] = { .pool = &boxroot__empty_pool },
};

static pthread_mutex_t domains_lock = PTHREAD_MUTEX_INITIALIZER;

/* Creations made in pools since given back to the chunk allocator, which
   resets them (statistics: api.c sums these and the live pools'). */
static long retired_creations; /* atomic, relaxed (statistics) */

static void retire_pool(pool *p)
{
  boxroot__fetch_add(&retired_creations, pool_creations(p), RELAXED);
  boxroot__chunk_free_pool(p, !marking_pools_may_be_marked()); /* M2 */
}

long boxroot__domain_retired_creations(void)
{
  return boxroot__load(&retired_creations, RELAXED);
}

/* ---- rings (pool.h) ---- */

static void move_to(struct boxroot_domain *d, pool *p, int cls, int at_front)
{
  if (pool_class(p) != CLASS_NONE) ring_remove(domain_ring(d, pool_class(p)), p);
  pool_set_class(p, cls);
  ring_insert(domain_ring(d, cls), p, at_front);
}

/* ---- domains ---- */

/* The key of domain `id` if this thread runs for it, as it should (lock
   held, or its scan or termination hook). Otherwise a key that matches no
   thread: deletions from its pools then all take the remote path, which is
   always safe, where a wrong key would let another domain free slots
   without synchronisation. The runtime keeps one state per id, so the key
   of an id does not change across incarnations. */
static void const *own_key(int id)
{
  void const *key = boxroot__compat_domain_key();
  return boxroot__compat_key_domain(key) == id ? key : BOXROOT__NO_OWNER_KEY;
}

struct boxroot_domain *boxroot__domain_get(int id)
{
  struct boxroot_domain *d = &boxroot__domains[id];
  uintnat incarnation = boxroot__compat_domain_unique_id() + 1;
  if (d->incarnation != incarnation) {
    /* A new incarnation: the previous one emptied the rings as it
       terminated (or never had any). */
    d->id = id;
    d->incarnation = incarnation;
    d->terminated = 0;
    d->empty_young = 0;
    /* Room for the stamp above the key (boxroot_internal.h). */
    BOXROOT__ASSERT(((uintptr_t)own_key(id) & ~BOXROOT__KEY_MASK) == 0);
  }
  if (d->key == NULL || d->key == BOXROOT__NO_OWNER_KEY) d->key = own_key(id);
  return d->terminated ? NULL : d;
}

/* Puts `p`, owned by `d`, empty and in no directory, on the free ring or
   back in the chunk allocator. */
static void shelve_free_pool(struct boxroot_domain *d, pool *p)
{
  /* A pool kept on the free ring keeps its free list: reusing it then
     costs nothing, where a reset would thread every slot again. */
  if (d->free_count < BOXROOT_FREE_POOLS_KEPT) {
    move_to(d, p, CLASS_FREE, 1);
    d->free_count++;
  } else {
    pool_set_owner(p, BOXROOT__NO_OWNER, BOXROOT__NO_OWNER_KEY);
    if (pool_class(p) != CLASS_NONE) ring_remove(domain_ring(d, pool_class(p)), p);
    pool_set_class(p, CLASS_NONE);
    retire_pool(p);
  }
}

static void release_free_pool(struct boxroot_domain *d, pool *p)
{
  /* Free pools hold no value: the marker need not read them
     (marking.c, M0). */
  boxroot__marking_leave(p, d->id);
  shelve_free_pool(d, p);
}

/* Puts `p` (currently on no ring) where its occupancy calls for. */
static void place(struct boxroot_domain *d, pool *p, int cls)
{
  BOXROOT__ASSERT(pool_class(p) == CLASS_NONE);
  if (pool_alloc_count(p) == 0 && p != domain_current_pool(d)) {
    release_free_pool(d, p);
  } else {
    move_to(d, p, cls, pool_alloc_count(p) < POOL_LOW_MARK);
  }
}

/* Young pool `p`, which has room, among the next ones to allocate from:
   the pools with room sit together right after the current pool, where
   boxroot__domain_refill takes them in order (domain.h). */
static void put_next(struct boxroot_domain *d, pool *p, pool *current)
{
  if (current == NULL || p->prev == current) return;
  ring_remove(&d->young, p);
  ring_insert(&d->young, p, 1);
  ring_remove(&d->young, current);
  ring_insert(&d->young, current, 1);
}

static inline void count_dropped(struct boxroot_domain *d, pool *p)
{
  int count = pool_alloc_count(p);
  if (count >= POOL_LOW_MARK) return;
  if (pool_class(p) == CLASS_YOUNG) {
    /* Already among the pools with room, behind another one or the
       current pool: so is each pool as a batch of roots is deleted in
       the order it was created, its predecessor emptied first. */
    int placed = pool_alloc_count(p->prev) < POOL_LOW_MARK;
    if (count > 0 && placed) return;
    pool *current = domain_current_pool(d);
    /* Keep the current pool as it is, even empty: resetting it here
       would make the next creation thread fresh slots again, at every
       emptying (once per call for function-local roots). The next scan
       resets the cursor and then frees or resets the pool (place). */
    if (p == current) return;
    /* An emptied young pool stays listed and on the young ring until it
       is current again or the next scan: refilling from it then leaves
       and joins no directory (M0) and takes no free ring. */
    if (count == 0) {
      if (d->empty_young >= BOXROOT_FREE_POOLS_KEPT) {
        release_free_pool(d, p);
        return;
      }
      d->empty_young++;
    }
    if (!placed) put_next(d, p, current);
  } else if (count == 0) { /* the current pool is young (domain.h) */
    release_free_pool(d, p);
  } else if (pool_class(p) == CLASS_OLD) {
    move_to(d, p, CLASS_OLD, 1);
  }
}

void boxroot__domain_pool_count_dropped(struct boxroot_domain *d, pool *p)
{
  count_dropped(d, p);
}

void boxroot__delete_local_slow(struct boxroot__pool_hot *hot)
{
  count_dropped(&boxroot__domains[boxroot__pool_owner_locked(hot)], (pool *)hot);
}

static int make_current(struct boxroot_domain *d, pool *p)
{
  if (pool_class(p) != CLASS_YOUNG || d->young != p) move_to(d, p, CLASS_YOUNG, 1);
  if (!pool_has_free(p) && !marking_thread_fresh(p)) return 0;
  domain_set_cursor(d->id, p);
  return 1;
}

pool *boxroot__domain_refill_next(int id)
{
  pool *p = (pool *)boxroot__alloc_cursor[id].pool;
  /* No current pool: before the domain's first root, after a scan, a
     termination or the teardown (each resets the cursor). */
  if (p == (pool *)&boxroot__empty_pool) return NULL;
  if (pool_has_free(p)) return p;
  /* Fresh slots to thread, or delayed frees that may be collected: the
     general path. */
  if (p->fresh < pool_end(p) || boxroot__load(remote_owner_flag(id), SEQ_CST)) return NULL;
  pool *next = p->next;
  if (!pool_has_free(next)) return NULL; /* also when next == p */
  /* As boxroot__domain_refill does: the ring turns by one. */
  struct boxroot_domain *d = &boxroot__domains[id];
  d->young = next;
  d->empty_young -= pool_alloc_count(next) == 0;
  domain_set_cursor(id, next);
  return next;
}

pool *boxroot__domain_refill(struct boxroot_domain *d)
{
  pool *p = domain_current_pool(d);
  if (p != NULL) {
    /* Room after all: a thread that did not know the cursor yet (its
       first creation) comes here whatever the pool holds. */
    if (pool_has_free(p) || marking_thread_fresh(p)) return p;
    /* A pool holds delayed frees only once its owner's flag is raised
       (remote.c, D3), until the next scan collects them: with the flag
       down, none of these pools has any to give back. A deletion that
       raises it meanwhile is collected by that scan. */
    int remote = boxroot__load(remote_owner_flag(d->id), SEQ_CST);
    if (remote && domain_collect_remote(d, p, boxroot__compat_state()) > 0
        && pool_has_free(p)) return p;
    /* Full: behind every young pool that may still have room. It heads
       the ring (domain.h): the ring turns by one. */
    BOXROOT__ASSERT(d->young == p);
    d->young = p->next;
    domain_reset_cursor(d->id);
    /* Roots handed to other domains come back as delayed frees, mostly
       in the pools filled last (just before p on the ring): reuse those
       slots rather than take another pool (tunables.h). */
    pool *q = p->prev;
    for (int k = 0; remote && k < BOXROOT_RECLAIM_YOUNG_POOLS && q != p; k++, q = q->prev)
      if (domain_collect_remote(d, q, boxroot__compat_state()) > 0 && make_current(d, q)) return q;
  }
  pool *y = d->young;
  if (y != NULL && y != p && pool_has_room(y)) {
    int was_empty = pool_alloc_count(y) == 0;
    if (make_current(d, y)) {
      d->empty_young -= was_empty;
      return y;
    }
  }
  pool *o = d->old;
  if (o != NULL && pool_alloc_count(o) < POOL_LOW_MARK && make_current(d, o)) {
    d->stats.pools_demoted++;
    return o;
  }
  pool *f = d->free;
  if (f != NULL) {
    d->free_count--;
    boxroot__marking_join(f, d->id, boxroot__compat_state(), JOIN_EMPTY);
    if (make_current(d, f)) return f;
  }
  pool *fresh = boxroot__chunk_alloc_pool();
  if (fresh == NULL) return NULL;
  boxroot__pool_reset(fresh);
  boxroot__pool_fill_unused(fresh);
  boxroot__store(&fresh->delayed_pending, 0, SEQ_CST);
  for (int i = 0; i < DELAYED_WORDS; i++) boxroot__store(&fresh->delayed_bits[i], 0, SEQ_CST);
  pool_set_class(fresh, CLASS_NONE);
  pool_set_owner(fresh, d->id, d->key);
  boxroot__marking_join(fresh, d->id, boxroot__compat_state(), JOIN_EMPTY);
  make_current(d, fresh); /* a fresh pool always has room */
  return fresh;
}

pool *boxroot__domain_detach_ring(struct boxroot_domain *d, int cls)
{
  pool **ring = domain_ring(d, cls);
  pool *head = *ring;
  *ring = NULL;
  /* Its caller places every pool again (place): the empty ones go. */
  if (cls == CLASS_YOUNG) d->empty_young = 0;
  if (head == NULL) return NULL;
  /* The young ring holds the current pool at its head, then the pools
     that filled up, in the order they filled (boxroot__domain_refill moves a full
     pool to the tail). Visiting it head first promotes pools in the
     order they were first used, which is mostly ascending addresses
     (chunk.c carves pools in order); the old ring keeps the order in which
     pools arrived. */
  head->prev->next = NULL;
  for (pool *p = head; p != NULL; p = p->next) {
    p->prev = NULL;
    pool_set_class(p, CLASS_NONE);
  }
  return head;
}

void boxroot__domain_place(struct boxroot_domain *d, pool *p, int new_cls)
{
  p->next = p->prev = NULL;
  place(d, p, new_cls);
}

void boxroot__domain_resort_ring(struct boxroot_domain *d, int cls, int new_cls)
{
  for (pool *p = boxroot__domain_detach_ring(d, cls), *after; p != NULL; p = after) {
    after = p->next;
    boxroot__domain_place(d, p, new_cls);
  }
}

/* ---- orphans ---- */

static pool *orphan_young, *orphan_old;
/* Written under domains_lock, read without it as a hint: a reader that
   sees 1 takes the lock, which orders what it reads next. That a scan
   sees the 1 of a termination before it is the runtime's ordering of
   the terminated hook before that scan, not this flag's order.
   SEQ_CST: off every fast path. */
static int orphans_present;

static void orphan_all(struct boxroot_domain *d)
{
  domain_reset_cursor(d->id);
  /* Nobody will scan a free pool: give those back now. */
  while (d->free != NULL) {
    pool *p = d->free;
    ring_remove(&d->free, p);
    pool_set_class(p, CLASS_NONE);
    pool_set_owner(p, BOXROOT__NO_OWNER, BOXROOT__NO_OWNER_KEY);
    retire_pool(p);
  }
  d->free_count = 0;
  pthread_mutex_lock(&domains_lock);
  for (int cls = CLASS_YOUNG; cls <= CLASS_OLD; cls++) {
    pool **from = domain_ring(d, cls), **to = cls == CLASS_YOUNG ? &orphan_young : &orphan_old;
    while (*from != NULL) {
      pool *p = *from;
      ring_remove(from, p);
      boxroot__marking_leave(p, d->id);
      pool_set_owner(p, BOXROOT__NO_OWNER, BOXROOT__NO_OWNER_KEY);
      ring_insert(to, p, 0);
    }
  }
  d->empty_young = 0;
  boxroot__store(&orphans_present, orphan_young != NULL || orphan_old != NULL, SEQ_CST);
  pthread_mutex_unlock(&domains_lock);
}

void boxroot__domain_terminate(int id, int alone)
{
  /* Deletions it gathered go to their pools first, even if it never
     created a root, and later ones at once (remote.c). */
  boxroot__remote_terminate(id);
  struct boxroot_domain *d = boxroot__domain_get(id);
  if (d == NULL || alone) return; /* the last domain keeps its pools (domain.h) */
  orphan_all(d);
  d->terminated = 1;
}

void boxroot__domain_adopt_orphans(struct boxroot_domain *d, boxroot__domain_state *domain_state,
                                   int minor)
{
  if (!boxroot__load(&orphans_present, SEQ_CST)) return;
  BOXROOT__WINDOW(BOXROOT__AT_ADOPTION, d->id);
  pthread_mutex_lock(&domains_lock);
  for (int cls = CLASS_YOUNG; cls <= CLASS_OLD; cls++) {
    pool **from = cls == CLASS_YOUNG ? &orphan_young : &orphan_old;
    while (*from != NULL) {
      pool *p = *from;
      ring_remove(from, p);
      pool_set_owner(p, d->id, d->key);
      d->stats.pools_adopted++;
      if (pool_alloc_count(p) == 0) {
        /* The terminated domain's current pool, emptied, or a young
           pool it kept empty (domain.h): it holds no value, and its new
           owner keeps no empty pool on a ring but its own. */
        pool_set_class(p, CLASS_NONE);
        shelve_free_pool(d, p);
        continue;
      }
      boxroot__marking_join(p, d->id, domain_state,
                            minor ? JOIN_AT_MINOR_SCAN : JOIN_AT_OTHER_SCAN);
      /* Orphans keep their class: a young orphan may hold young values.
         Low old pools go first, as on every old ring. */
      ring_insert(domain_ring(d, cls), p,
                  cls == CLASS_OLD && pool_alloc_count(p) < POOL_LOW_MARK);
    }
  }
  boxroot__store(&orphans_present, 0, SEQ_CST);
  /* Their delayed frees may have been signalled to the dead domain. */
  boxroot__store(remote_owner_flag(d->id), 1, SEQ_CST);
  pthread_mutex_unlock(&domains_lock);
}

/* Adds ring `head`'s pools, slots in use and creations to the sums. */
static void sum_ring(pool *head, long *pools, long *roots, long *creations)
{
  if (head == NULL) return;
  pool *p = head;
  do {
    (*pools)++;
    *roots += pool_alloc_count(p);
    *creations += pool_creations(p);
    p = p->next;
  } while (p != head);
}

void boxroot__domain_orphan_counts(long *pools, long *roots, long *creations)
{
  *pools = *roots = *creations = 0;
  pthread_mutex_lock(&domains_lock);
  sum_ring(orphan_young, pools, roots, creations);
  sum_ring(orphan_old, pools, roots, creations);
  pthread_mutex_unlock(&domains_lock);
}

void boxroot__domain_counts(struct boxroot_domain *d, long pools[3], long *roots,
                            long *creations)
{
  *roots = *creations = 0;
  for (int cls = CLASS_YOUNG; cls <= CLASS_FREE; cls++) {
    pools[cls] = 0;
    sum_ring(*domain_ring(d, cls), &pools[cls], roots, creations);
  }
}

void boxroot__domain_forget_all(void)
{
  for (int i = 0; i < BOXROOT__MAX_DOMAINS; i++) {
    domain_reset_cursor(i);
    boxroot__alloc_cursor[i].run_bits = 0; /* every root is gone */
  }
  pthread_mutex_lock(&domains_lock);
  orphan_young = orphan_old = NULL;
  boxroot__store(&retired_creations, 0, RELAXED);
  boxroot__store(&orphans_present, 0, SEQ_CST);
  pthread_mutex_unlock(&domains_lock);
}
