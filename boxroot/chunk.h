/* The chunk allocator: where pools come from, and which addresses are ours.

   Pools must be aligned to their size. Instead of posix_memalign, we
   reserve chunks of address space with mmap, aligned to CHUNK_ALIGN (a
   huge page, so that a chunk can be backed by transparent huge pages),
   and carve pools out of them. Free pools are kept for reuse; beyond
   BOXROOT_FREE_POOLS_COMMITTED_MAX of them, their memory is given back to the OS
   with madvise, a whole page at a time: pages of 4 to 64 KiB may hold
   several pools, which must then all be free (chunk.c).

   A page table (a BiBoP, as in "Efficient 'out of heap' pointers for
   multicore OCaml", OCaml Workshop 2022) maps every CHUNK_ALIGN-sized region
   of the address space to the chunk that covers it, if any, in two
   dependent loads from the high bits of an address; each chunk records
   which of its pools are handed out. So `boxroot__chunk_classify` tells in O(1),
   without a lock, whether an address lies in a pool in use. The debug
   build (debug.c) checks every root with it.

   Huge pages: with BOXROOT_HUGE_PAGES=N in the environment (N >= 1),
   once N chunks exist every chunk is advised MADV_HUGEPAGE, so that a
   program holding many roots scans them with fewer TLB misses. Off by
   default (see BOXROOT_HUGE_PAGES_DEFAULT_THRESHOLD in tunables.h).

   Invariants:
   - A pool's address range stays mapped from its first allocation until
     boxroot_teardown. A thread that deleted a root remotely may still
     touch the pool's delayed-free area after the pool was emptied and
     recycled (remote.c), and the GC's marker may still read its slots
     (marking.c); that must never fault, nor read zeros while the marker
     may read it.
   - A region's page-table entry is set before any pool of its chunk is
     handed out, and cleared only at teardown. A pool's in-use bit is set
     before `boxroot__chunk_alloc_pool` returns it and cleared when it is given
     back. */
#ifndef BOXROOT_CHUNK_H
#define BOXROOT_CHUNK_H

#include <stddef.h>
#include "pool.h"

/* A pool-sized, pool-aligned block, or NULL with errno set. Thread-safe. */
pool *boxroot__chunk_alloc_pool(void);
/* Gives a pool back for reuse. Thread-safe. `may_decommit`: whether its
   memory may go back to the OS, beyond BOXROOT_FREE_POOLS_COMMITTED_MAX
   free pools; the caller says no while the GC's marker may still read
   pools, which would read a decommitted pool's zeros as pointers
   (marking.c, M2). */
void boxroot__chunk_free_pool(pool *p, int may_decommit);
#if BOXROOT__IN_DEBUG_BUILD
/* The debug build's side table of `p` (a pool handed out): one word per
   slot, indexed as `p->slots`, which the leak report fills with each
   root's creation site (leaks.c). Mapped with the pool's chunk, zero at
   first, never moved; outside the pool, so that its layout is the
   release build's. */
uintptr_t *boxroot__chunk_side_table(pool *p);
/* Calls `visit(p, arg)` for every pool handed out, with the allocator's
   lock held: `visit` must not allocate or free pools. */
void boxroot__chunk_visit_pools(void (*visit)(pool *p, void *arg), void *arg);
#endif
/* Unmaps every chunk and clears the page table. Only at teardown. */
void boxroot__chunk_release_all(void);

enum chunk_address_class {
  CHUNK_ADDRESS_FOREIGN,   /* not in any chunk */
  CHUNK_ADDRESS_POOL_FREE, /* in a chunk, in a pool not handed out */
  CHUNK_ADDRESS_POOL_USED  /* in a pool handed out by boxroot__chunk_alloc_pool */
};
/* Where `addr` lies. O(1), lock-free, callable from any thread. The
   answer may be stale by the time it returns if another thread is
   allocating or freeing that very pool concurrently. */
enum chunk_address_class boxroot__chunk_classify(void const *addr);
/* Whether `addr` lies in memory that this allocator reserved. O(1). */
static inline int chunk_contains(void const *addr)
{
  return boxroot__chunk_classify(addr) != CHUNK_ADDRESS_FOREIGN;
}

struct chunk_stats {
  size_t chunks, reserved_bytes, pools_handed_out, free_pools_committed,
         free_pools_decommitted, huge_page_chunks;
};
void boxroot__chunk_get_stats(struct chunk_stats *out);

#endif /* BOXROOT_CHUNK_H */
