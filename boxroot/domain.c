/* Per-domain rings and the pool-selection policy (invariants in domain.h). */
#include <pthread.h>
#include <stdlib.h>
#include "chunk.h"
#include "domain.h"
#include "remote.h"

struct boxroot_domain *boxroot_domains[BOXROOT_MAX_DOMAINS];

/* Its free list is empty (it ends at the pool's own address), so the
   create fast path falls through to the slow path without a NULL test. */
struct boxroot_pool_hot boxroot_empty_pool = {
  .free_list = (void **)&boxroot_empty_pool, .counts = 0,
  .owner = BOXROOT_NO_OWNER, .cls = CLASS_NONE, .owner_key = BOXROOT_NO_OWNER_KEY,
};

struct boxroot_alloc_cursor boxroot_alloc_cursor[BOXROOT_MAX_DOMAINS] = {
  [0 ... BOXROOT_MAX_DOMAINS - 1] = { .pool = &boxroot_empty_pool },
};

#if BOXROOT_MULTICORE
static struct boxroot_pool_hot *const no_pool = &boxroot_empty_pool;
__thread struct boxroot_thread_cursor boxroot_thread_cursor
  __attribute__((tls_model("initial-exec"))) = {
  .key = BOXROOT_NO_OWNER_KEY, .pool = &no_pool,
};
#endif

void domain_point_thread_cursor(int id)
{
#if BOXROOT_MULTICORE
  boxroot_thread_cursor.key = boxroot_compat_lock_key();
  boxroot_thread_cursor.pool = &boxroot_alloc_cursor[id].pool;
#else
  (void)id; /* one domain: boxroot_create reads its cursor directly */
#endif
}

static pthread_mutex_t domains_lock = PTHREAD_MUTEX_INITIALIZER;

/* Creations made in pools since given back to the chunk allocator, which
   resets them (statistics: boxroot.c sums these and the live pools'). */
static atomic_long retired_creations;

static void retire_pool(pool *p)
{
  atomic_fetch_add_explicit(&retired_creations, pool_creations(p), memory_order_relaxed);
  chunk_free_pool(p);
}

long domain_retired_creations(void)
{
  return atomic_load_explicit(&retired_creations, memory_order_relaxed);
}

/* ---- rings: circular, doubly linked, `*ring` is the head ---- */

static pool **ring_for(struct boxroot_domain *d, int cls)
{
  return cls == CLASS_YOUNG ? &d->young : cls == CLASS_OLD ? &d->old : &d->free;
}

static void ring_insert(pool **ring, pool *p, int at_front)
{
  pool *head = *ring;
  if (head == NULL) {
    p->next = p->prev = p;
    *ring = p;
    return;
  }
  p->next = head;
  p->prev = head->prev;
  head->prev->next = p;
  head->prev = p;
  if (at_front) *ring = p;
}

static void ring_remove(pool **ring, pool *p)
{
  if (p->next == p) {
    *ring = NULL;
  } else {
    p->prev->next = p->next;
    p->next->prev = p->prev;
    if (*ring == p) *ring = p->next;
  }
  p->next = p->prev = NULL;
}

static void move_to(struct boxroot_domain *d, pool *p, int cls, int at_front)
{
  if (p->hot.cls != CLASS_NONE) ring_remove(ring_for(d, p->hot.cls), p);
  pool_set_class(p, cls);
  ring_insert(ring_for(d, cls), p, at_front);
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
  void const *key = boxroot_compat_domain_key();
  return boxroot_compat_key_domain(key) == id ? key : BOXROOT_NO_OWNER_KEY;
}

static struct boxroot_domain *domain_get_any(int id)
{
  struct boxroot_domain *d = boxroot_domains[id];
  int incarnation = boxroot_compat_domain_unique_id();
  if (d != NULL) {
    if (d->key == BOXROOT_NO_OWNER_KEY) d->key = own_key(id);
    if (d->incarnation != incarnation) {
      /* The id was reused. The rings were emptied at termination. */
      d->incarnation = incarnation;
      d->terminated = 0;
    }
    return d;
  }
  d = aligned_alloc(CACHE_LINE, sizeof *d);
  if (d == NULL) return NULL;
  *d = (struct boxroot_domain){ .id = id, .incarnation = incarnation,
                                .key = own_key(id) };
  atomic_init(&d->delayed_flag, 0);
  /* Other threads read this slot (remote.c) without the domain lock. */
  __atomic_store_n(&boxroot_domains[id], d, __ATOMIC_RELEASE);
  return d;
}

struct boxroot_domain *domain_get(int id)
{
  struct boxroot_domain *d = domain_get_any(id);
  return d == NULL || d->terminated ? NULL : d;
}

static void release_free_pool(struct boxroot_domain *d, pool *p)
{
  /* A pool kept on the free ring keeps its free list: reusing it then
     costs nothing, where a reset would thread every slot again. */
  if (d->free_count < FREE_POOLS_KEPT) {
    move_to(d, p, CLASS_FREE, 1);
    d->free_count++;
  } else {
    pool_set_owner(p, BOXROOT_NO_OWNER, BOXROOT_NO_OWNER_KEY);
    if (p->hot.cls != CLASS_NONE) ring_remove(ring_for(d, p->hot.cls), p);
    pool_set_class(p, CLASS_NONE);
    retire_pool(p);
  }
}

/* Puts `p` (currently on no ring) where its occupancy calls for. */
static void place(struct boxroot_domain *d, pool *p, int cls)
{
  if (pool_alloc_count(p) == 0 && p != domain_current_pool(d)) {
    release_free_pool(d, p);
  } else {
    move_to(d, p, cls, pool_alloc_count(p) < POOL_LOW_MARK);
  }
}

void domain_pool_count_dropped(struct boxroot_domain *d, pool *p)
{
  pool *current = domain_current_pool(d);
  if (p == current) {
    /* Keep the current pool as it is, even empty: resetting it here
       would make the next creation thread fresh slots again, at every
       emptying (once per call for function-local roots). The next scan
       resets the cursor and then frees or resets the pool (place). */
    return;
  }
  if (pool_alloc_count(p) == 0) {
    release_free_pool(d, p);
  } else if (pool_alloc_count(p) < POOL_LOW_MARK) {
    if (p->hot.cls == CLASS_OLD) {
      move_to(d, p, CLASS_OLD, 1);
    } else if (p->hot.cls == CLASS_YOUNG && current != NULL) {
      /* Right after the current pool: the next one to allocate from. */
      ring_remove(&d->young, p);
      ring_insert(&d->young, p, 1);
      ring_remove(&d->young, current);
      ring_insert(&d->young, current, 1);
    }
  }
}

void boxroot_delete_local_slow(struct boxroot_pool_hot *hot)
{
  domain_pool_count_dropped(boxroot_domains[hot->owner], (pool *)hot);
}

static int make_current(struct boxroot_domain *d, pool *p)
{
  if (p->hot.cls != CLASS_YOUNG || d->young != p) move_to(d, p, CLASS_YOUNG, 1);
  if (p->hot.free_list == (void **)p && !pool_thread_fresh(p)) return 0;
  boxroot_alloc_cursor[d->id].pool = &p->hot;
  return 1;
}

pool *domain_refill(struct boxroot_domain *d)
{
  pool *p = domain_current_pool(d);
  if (p != NULL) {
    if (pool_thread_fresh(p)) return p;
    if (remote_collect(d, p, BOXROOT_MULTICORE ? (void *)Caml_state : NULL) > 0
        && p->hot.free_list != (void **)p) return p;
    /* Full: behind every young pool that may still have room. */
    ring_remove(&d->young, p);
    ring_insert(&d->young, p, 0);
    domain_reset_cursor(d->id);
  }
  pool *y = d->young;
  if (y != NULL && y != p && pool_has_room(y) && make_current(d, y)) return y;
  pool *o = d->old;
  if (o != NULL && pool_alloc_count(o) < POOL_LOW_MARK && make_current(d, o)) {
    d->stats.pools_demoted++;
    return o;
  }
  pool *f = d->free;
  if (f != NULL) {
    d->free_count--;
    if (make_current(d, f)) return f;
  }
  pool *fresh = chunk_alloc_pool();
  if (fresh == NULL) return NULL;
  pool_reset(fresh);
  atomic_store(&fresh->delayed_pending, 0);
  for (int i = 0; i < DELAYED_WORDS; i++) atomic_store(&fresh->delayed_bits[i], 0);
  pool_set_class(fresh, CLASS_NONE);
  pool_set_owner(fresh, d->id, d->key);
  make_current(d, fresh);
  return fresh;
}

pool *domain_detach_ring(struct boxroot_domain *d, int cls)
{
  pool **ring = ring_for(d, cls);
  pool *head = *ring;
  *ring = NULL;
  if (head == NULL) return NULL;
  /* The young ring holds the current pool at its head, then the pools
     that filled up, in the order they filled (domain_refill moves a full
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

void domain_place(struct boxroot_domain *d, pool *p, int new_cls)
{
  p->next = p->prev = NULL;
  place(d, p, new_cls);
}

void domain_resort_ring(struct boxroot_domain *d, int cls, int new_cls)
{
  for (pool *p = domain_detach_ring(d, cls), *after; p != NULL; p = after) {
    after = p->next;
    domain_place(d, p, new_cls);
  }
}

/* ---- orphans ---- */

static pool *orphan_young, *orphan_old;
static atomic_int orphans_present;

static void orphan_all(struct boxroot_domain *d)
{
  domain_reset_cursor(d->id);
  /* Nobody will scan a free pool: give those back now. */
  while (d->free != NULL) {
    pool *p = d->free;
    ring_remove(&d->free, p);
    pool_set_class(p, CLASS_NONE);
    retire_pool(p);
  }
  d->free_count = 0;
  pthread_mutex_lock(&domains_lock);
  for (int cls = CLASS_YOUNG; cls <= CLASS_OLD; cls++) {
    pool **from = ring_for(d, cls), **to = cls == CLASS_YOUNG ? &orphan_young : &orphan_old;
    while (*from != NULL) {
      pool *p = *from;
      ring_remove(from, p);
      pool_set_owner(p, BOXROOT_NO_OWNER, BOXROOT_NO_OWNER_KEY);
      ring_insert(to, p, 0);
    }
  }
  atomic_store(&orphans_present, orphan_young != NULL || orphan_old != NULL);
  pthread_mutex_unlock(&domains_lock);
}

void domain_terminate(int id)
{
  if (boxroot_domains[id] == NULL) return; /* never used boxroot */
  struct boxroot_domain *d = domain_get_any(id);
  orphan_all(d);
  d->terminated = 1;
}

void domain_adopt_orphans(struct boxroot_domain *d)
{
  if (!atomic_load(&orphans_present)) return;
  pthread_mutex_lock(&domains_lock);
  for (int cls = CLASS_YOUNG; cls <= CLASS_OLD; cls++) {
    pool **from = cls == CLASS_YOUNG ? &orphan_young : &orphan_old;
    while (*from != NULL) {
      pool *p = *from;
      ring_remove(from, p);
      pool_set_owner(p, d->id, d->key);
      /* Orphans keep their class: a young orphan may hold young values. */
      ring_insert(ring_for(d, cls), p, 0);
      d->stats.pools_adopted++;
    }
  }
  atomic_store(&orphans_present, 0);
  /* Their delayed frees may have been signalled to the dead domain. */
  atomic_store(&d->delayed_flag, 1);
  pthread_mutex_unlock(&domains_lock);
}

void domain_orphan_counts(long *pools, long *roots, long *creations)
{
  *pools = *roots = *creations = 0;
  pthread_mutex_lock(&domains_lock);
  pool *heads[2] = { orphan_young, orphan_old };
  for (int i = 0; i < 2; i++) {
    pool *p = heads[i];
    if (p == NULL) continue;
    do {
      (*pools)++;
      *roots += pool_alloc_count(p);
      *creations += pool_creations(p);
      p = p->next;
    } while (p != heads[i]);
  }
  pthread_mutex_unlock(&domains_lock);
}

void domain_forget_all(void)
{
  for (int i = 0; i < BOXROOT_MAX_DOMAINS; i++) {
    domain_reset_cursor(i);
    free(boxroot_domains[i]);
    boxroot_domains[i] = NULL;
  }
  pthread_mutex_lock(&domains_lock);
  orphan_young = orphan_old = NULL;
  atomic_store(&retired_creations, 0);
  atomic_store(&orphans_present, 0);
  pthread_mutex_unlock(&domains_lock);
}
