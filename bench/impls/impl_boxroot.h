/* Boxroot: this repository's library (boxroot/). */
#define IMPL_NAME "boxroot"
#include "impl_boxroot_api.h"
#include "boxroot_stats.h"

/* Pools that ever existed at once: every pool carved from a chunk is
   either handed out to a domain or waiting in the chunk allocator. */
static inline long impl_pools_used(void)
{
  struct boxroot_stats s;
  if (!boxroot_get_stats(&s)) return 0;
  return s.pools_handed_out + s.chunk_free_pools_committed + s.chunk_free_pools_decommitted;
}
