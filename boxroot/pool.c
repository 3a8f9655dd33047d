/* Pool initialisation and the fresh-slot cursor (invariants in pool.h). */
#include "pool.h"

_Static_assert(POOL_SLOTS <= DELAYED_WORDS * 8 * (int)sizeof(uintptr_t),
               "the delayed-free bitmap must cover every slot");
_Static_assert(POOL_SLOTS > BOXROOT__LOW_COUNT && POOL_SLOTS < 2 * BOXROOT__LOW_COUNT,
               "boxroot_delete's single test needs LOW_COUNT < slots < 2 * LOW_COUNT");
_Static_assert(POOL_SLOTS < (1 << BOXROOT__COUNT_BITS),
               "the count of slots in use must fit below the creations (boxroot.h)");
_Static_assert((BOXROOT__LOW_COUNT & (BOXROOT__LOW_COUNT - 1)) == 0,
               "BOXROOT__LOW_COUNT must be a power of two");
_Static_assert(offsetof(pool, hot.free_link) >= sizeof(void *)
               && offsetof(pool, hot.counts) >= sizeof(void *),
               "boxroot_create's stores must not be at offset 0 (boxroot__free_slot)");
_Static_assert(offsetof(pool, delayed_bits) == CACHE_LINE,
               "the owner's header must fit in one cache line");
_Static_assert(offsetof(pool, shared) == BOXROOT__POOL_SHARED_OFFSET,
               "the fast paths find the shared header line at a fixed offset");
_Static_assert(offsetof(pool, delayed_pending) / CACHE_LINE
               == offsetof(pool, shared) / CACHE_LINE,
               "a remote deletion reads owner_word and pending on one line");

_Static_assert(BOXROOT_DEBUG_QUARANTINE >= 1 && BOXROOT_DEBUG_QUARANTINE < POOL_SLOTS,
               "the quarantine's length is a 16-bit count of a pool's slots");

_Static_assert(BOXROOT_FRESH_BATCH % SLOTS_PER_LINE == 0 && POOL_SLOTS % SLOTS_PER_LINE == 0
               && offsetof(pool, slots) % CACHE_LINE == 0,
               "fresh - slots must stay a whole number of cache lines");
_Static_assert(offsetof(pool, slots) - offsetof(pool, block_header) == sizeof(uintptr_t),
               "the block header must be the word just before the first slot");

void boxroot__pool_reset(pool *p)
{
  p->hot.free_link = pool_link((void **)p);
  p->hot.counts = 0;
  p->hot.count_bias = 0;
  p->fresh = p->slots;
  p->next = p->prev = NULL; /* on no ring (chunk.c links free pools) */
  p->listed_at = 0; /* in no directory (marking.c) */
#if BOXROOT__IN_DEBUG_BUILD
  p->quarantined = 0;
#endif
}

void boxroot__pool_fill_unused(pool *p)
{
  /* Odd, as OCaml 5's marker needs: the end of the list's link there. */
  void *odd = (void *)((uintptr_t)p | 1);
  for (void **s = p->fresh; s < pool_end(p); s++) *s = odd;
}

int boxroot__pool_thread_fresh(pool *p)
{
  void **start = p->fresh, **end = pool_end(p);
  if (start >= end) return 0;
  void **stop = start + BOXROOT_FRESH_BATCH < end ? start + BOXROOT_FRESH_BATCH : end;
  /* Link [start, stop) in ascending order in front of the current list. */
  void *next = p->hot.free_link;
  for (void **s = stop - 1; s >= start; s--) {
    *s = next;
    next = pool_link(boxroot__free_entry(s));
  }
  p->hot.free_link = next;
  p->fresh = stop;
  return 1;
}

#if BOXROOT__IN_DEBUG_BUILD
void boxroot__pool_quarantine(struct boxroot__pool_hot *hot, void **slot)
{
  pool *p = (pool *)hot;
  uint16_t index = (uint16_t)(slot - p->slots);
  /* Atomic stores, as every write of a slot the marker may read. */
  boxroot__store(slot, pool_link((void **)p), RELAXED);
  if (p->quarantined == 0)
    p->hot.quarantine_oldest = index;
  else
    boxroot__store(&p->slots[p->hot.quarantine_newest], pool_link(slot), RELAXED);
  p->hot.quarantine_newest = index;
  if (++p->quarantined <= BOXROOT_DEBUG_QUARANTINE) return;
  /* The quarantine links slots by their addresses; the free list by
     their entries. */
  void **oldest = &p->slots[p->hot.quarantine_oldest];
  p->hot.quarantine_oldest = (uint16_t)(pool_unlink(*oldest) - p->slots);
  p->quarantined--;
  boxroot__store(oldest, p->hot.free_link, RELAXED);
  p->hot.free_link = pool_link(boxroot__free_entry(oldest));
}
#endif
