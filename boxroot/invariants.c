/* The ring walker of test builds (invariants.h). */
#ifdef BOXROOT_TESTING
#include "asserts.h"
#include "domain.h"
#include "invariants.h"
#include "directory.h"
#include "testing.h"

#define CHECK(e) BOXROOT__ASSERT(e)

/* pool.h: free slots link inside the pool below `fresh`; the free list
   and the allocated slots (delayed frees included) partition the slots
   handed out. */
static void check_pool(pool *p)
{
  CHECK(p->fresh >= p->slots && p->fresh <= pool_end(p));
  CHECK((p->fresh - p->slots) % SLOTS_PER_LINE == 0);
  int handed_out = (int)(p->fresh - p->slots), free_slots = 0;
  for (void **e = pool_unlink(p->hot.free_link); e != (void **)p; e = pool_unlink(*boxroot__free_slot(e))) {
    void **s = boxroot__free_slot(e);
    CHECK(pool_of_slot(e) == p && s >= p->slots && s < p->fresh);
    CHECK(pool_slot_is_free(p, *s));
    CHECK(++free_slots <= handed_out);
  }
#if BOXROOT__IN_DEBUG_BUILD
  void **q = &p->slots[p->hot.quarantine_oldest];
  for (int i = 0; i < p->quarantined; i++, q = pool_unlink(*q)) {
    CHECK(q >= p->slots && q < p->fresh);
    CHECK(pool_slot_is_free(p, *q));
    CHECK(++free_slots <= handed_out);
  }
#endif
  CHECK(pool_alloc_count(p) + free_slots == handed_out);
  for (void **s = p->fresh; s < pool_end(p); s++) CHECK(((uintptr_t)*s & 1) == 1);
}

/* domain.h: each ring is a well-linked circle of pools of its class owned
   by `d`; old pools with few roots come first; on a scanned ring, only the
   current pool and the young ring's counted empty pools may be empty; the
   free ring counts its pools. Returns the ring's length; `*empty`: its
   empty pools other than the current one. */
static int check_ring(struct boxroot_domain *d, int cls, pool *current, int *empty)
{
  pool *head = *domain_ring(d, cls);
  int length = 0, seen_high = 0;
  *empty = 0;
  if (head == NULL) return 0;
  pool *p = head;
  do {
    CHECK(p->next->prev == p && p->prev->next == p);
    CHECK(pool_class(p) == cls);
    CHECK((boxroot__load(&p->shared.cls_word, RELAXED) & ~BOXROOT__KEY_MASK) == pool_stamp(p));
    CHECK(boxroot__load(&p->shared.owner, RELAXED) == d->id);
    CHECK(boxroot__owner_word_key(boxroot__owner_word_relaxed(&p->shared)) == d->key);
    CHECK(boxroot__directory_check_listed(p, d->id, cls != CLASS_FREE));
    check_pool(p);
    int count = pool_alloc_count(p);
    if (p != current && count == 0) ++*empty;
    if (cls == CLASS_FREE) CHECK(count == 0);
    if (cls == CLASS_OLD) {
      if (count >= POOL_LOW_MARK) seen_high = 1;
      else CHECK(!seen_high);
    }
    length++;
    p = p->next;
  } while (p != head);
  return length;
}

void boxroot__check_domain(struct boxroot_domain *d)
{
  if (d == NULL) return;
  pool *current = domain_current_pool(d);
  if (current != NULL) CHECK(d->young == current);
  int empty;
  check_ring(d, CLASS_YOUNG, current, &empty);
  CHECK(empty == d->empty_young && d->empty_young <= BOXROOT_FREE_POOLS_KEPT);
  check_ring(d, CLASS_OLD, current, &empty);
  CHECK(empty == 0);
  CHECK(check_ring(d, CLASS_FREE, current, &empty) == d->free_count);
  CHECK(d->free_count <= BOXROOT_FREE_POOLS_KEPT);
}

int boxroot__testing_check_invariants(void)
{
  int id = boxroot__compat_locked_domain();
  if (id < 0 || boxroot_status() != BOXROOT_RUNNING) return 0;
  boxroot__check_domain(boxroot__domain_get(id));
  return 1;
}

#endif /* BOXROOT_TESTING */
