/* The chunk allocator: where pools come from.

   Pools must be aligned to their size. Instead of posix_memalign, we
   reserve chunks of address space with mmap, aligned to CHUNK_ALIGN (a
   huge page, so that a chunk can later be backed by transparent huge
   pages), and carve pools out of them. Free pools are kept for reuse;
   beyond FREE_POOLS_COMMITTED_MAX of them, their memory is given back to
   the OS with madvise(MADV_DONTNEED).

   Invariant: a pool's address range stays mapped from its first
   allocation until boxroot_teardown. A thread that deleted a root
   remotely may still touch the pool's delayed-free area after the pool
   was emptied and recycled (remote.c); that must never fault. */
#ifndef BOXROOT_CHUNK_H
#define BOXROOT_CHUNK_H

#include <stddef.h>
#include "pool.h"

/* A pool-sized, pool-aligned block, or NULL with errno set. Thread-safe. */
pool *chunk_alloc_pool(void);
/* Gives a pool back for reuse. Thread-safe. */
void chunk_free_pool(pool *p);
/* Unmaps every chunk. Only at teardown. */
void chunk_release_all(void);
/* Whether `addr` lies in memory that this allocator reserved. O(number of
   chunks); for diagnostics, not for fast paths. */
int chunk_contains(void const *addr);

struct chunk_stats {
  size_t chunks, reserved_bytes, pools_handed_out, free_pools_committed,
         free_pools_decommitted;
};
void chunk_get_stats(struct chunk_stats *out);

#endif /* BOXROOT_CHUNK_H */
