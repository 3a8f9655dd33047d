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

/* Every counter of struct boxroot_stats (boxroot_stats.h), in its order. */
#define BENCH_BOXROOT_STATS(X) X(roots_alive) X(created) X(deleted_local) \
  X(deleted_remote_domain) X(deleted_purely_remote) X(modify_moves) \
  X(slots_in_use) X(delayed_frees_collected) X(pools_young) X(pools_old) \
  X(pools_free) X(pools_orphaned) X(pools_demoted) X(pools_adopted) \
  X(minor_scans) X(major_scans) X(minor_slots_scanned) X(major_slots_scanned) \
  X(minor_scan_ns) X(major_scan_ns) X(chunks) X(reserved_bytes) \
  X(huge_page_chunks) X(pools_handed_out) X(chunk_free_pools_committed) \
  X(chunk_free_pools_decommitted)

static inline void impl_stats_fields(char *buf, size_t size)
{
  struct boxroot_stats s;
  size_t k = 0;
  if (size) buf[0] = 0;
  if (!boxroot_get_stats(&s)) return;
#define BENCH_STAT_FIELD(name) \
  if (k < size) k += snprintf(buf + k, size - k, " stat_" #name "=%ld", (long)s.name);
  BENCH_BOXROOT_STATS(BENCH_STAT_FIELD)
#undef BENCH_STAT_FIELD
}
