/* Introspection: what boxroot holds and what it did. */
#ifndef BOXROOT_STATS_H
#define BOXROOT_STATS_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct boxroot_stats {
  long roots_alive;            /* created minus deleted */
  long created, deleted_local, deleted_remote_domain, deleted_purely_remote;
  long slots_in_use;           /* includes deletions not yet collected */
  long pools_young, pools_old, pools_free, pools_orphaned;
  long pools_demoted, pools_adopted, delayed_frees_collected;
  long minor_scans, major_scans;       /* summed over domains */
  long minor_slots_scanned, major_slots_scanned;
  long minor_scan_ns, major_scan_ns;
  long chunks, reserved_bytes, pools_handed_out;
  long chunk_free_pools_committed, chunk_free_pools_decommitted;
};

/* Fills `*out`. Exact when no other domain is running boxroot
   operations concurrently (e.g. in a single-domain program, or while the
   caller knows the others are idle); otherwise a close snapshot. Needs
   the domain lock. Returns false if boxroot is not running. */
bool boxroot_get_stats(struct boxroot_stats *out);

#ifdef __cplusplus
}
#endif

#endif
