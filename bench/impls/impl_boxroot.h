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

/* Every counter of struct boxroot_stats, from the library's one list of
   them (BOXROOT_STATS_FIELDS, boxroot_stats.h). */
static inline void impl_stats_fields(char *buf, size_t size)
{
  struct boxroot_stats s;
  size_t k = 0;
  if (size) buf[0] = 0;
  if (!boxroot_get_stats(&s)) return;
#define BENCH_STAT_FIELD(name, doc) \
  if (k < size) k += snprintf(buf + k, size - k, " stat_" #name "=%ld", (long)s.name);
  BOXROOT_STATS_FIELDS(BENCH_STAT_FIELD)
#undef BENCH_STAT_FIELD
}
