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
_Static_assert(offsetof(pool, count_bias) + sizeof(int) <= CACHE_LINE,
               "the owner's header must fit in one cache line");
_Static_assert(offsetof(pool, shared) == BOXROOT__POOL_SHARED_OFFSET,
               "the fast paths find the shared header line at a fixed offset");
_Static_assert(offsetof(pool, delayed_pending) / CACHE_LINE
               == offsetof(pool, shared) / CACHE_LINE,
               "a remote deletion reads owner_word and pending on one line");

_Static_assert(BOXROOT_FRESH_BATCH % SLOTS_PER_LINE == 0 && POOL_SLOTS % SLOTS_PER_LINE == 0
               && offsetof(pool, slots) % CACHE_LINE == 0,
               "fresh - slots must stay a whole number of cache lines");
_Static_assert(offsetof(pool, slots) - offsetof(pool, block_header) == sizeof(uintptr_t),
               "the block header must be the word just before the first slot");

void boxroot__pool_reset(pool *p)
{
  p->hot.free_list = (void **)p;
  p->hot.counts = 0;
  p->count_bias = 0;
  p->fresh = p->slots;
  p->next = p->prev = NULL; /* on no ring (chunk.c links free pools) */
  p->listed_at = 0; /* in no directory (marking.c) */
}

void boxroot__pool_fill_unused(pool *p)
{
  void *end_link = pool_link((void **)p);
  for (void **s = p->fresh; s < pool_end(p); s++) *s = end_link;
}

int boxroot__pool_thread_fresh(pool *p)
{
  void **start = p->fresh, **end = pool_end(p);
  if (start >= end) return 0;
  void **stop = start + BOXROOT_FRESH_BATCH < end ? start + BOXROOT_FRESH_BATCH : end;
  /* Link [start, stop) in ascending order in front of the current list. */
  void **next = p->hot.free_list;
  for (void **s = stop - 1; s >= start; s--) { *s = pool_link(next); next = s; }
  p->hot.free_list = start;
  p->fresh = stop;
  return 1;
}
