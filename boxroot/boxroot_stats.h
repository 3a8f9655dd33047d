/* Introspection: what boxroot holds and what it did.

   Counts of roots and deletions are exact: `created` counts slots handed
   out, `deleted_*` slots given back, so `roots_alive` is the number of
   live roots. A boxroot_modify that moves its root (a young value into
   an old pool) counts as one creation and one deletion, and also in
   `modify_moves`: boxroot_create calls = created - modify_moves.
   A deletion by another thread is counted when it happens, but its slot
   stays in use (`slots_in_use`) until the owning domain collects it
   (`delayed_frees_collected`), at its next scan of that pool.
   Scans are counted per domain: one collection scans every domain.
   "Major" scans are every scan that is not for a minor collection: the
   start of each major cycle, and compactions. */
#ifndef BOXROOT_STATS_H
#define BOXROOT_STATS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct boxroot_stats {
  long roots_alive;            /* created minus deleted */
  long created;                /* slots handed out */
  long deleted_local;          /* by the domain owning the root's pool */
  long deleted_remote_domain;  /* by another domain */
  long deleted_purely_remote;  /* by a thread holding no domain lock */
  long modify_moves;           /* roots moved by boxroot_modify */
  long slots_in_use;           /* includes deletions not yet collected */
  long delayed_frees_collected;/* remote deletions collected by owners */
  long pools_young, pools_old, pools_free; /* on the domains' rings */
  long pools_orphaned;         /* left by terminated domains */
  long pools_demoted;          /* old pools reused for allocation */
  long pools_adopted;          /* orphans taken over by a domain */
  long minor_scans, major_scans;       /* summed over domains */
  long minor_slots_scanned, major_slots_scanned;
  long minor_scan_ns, major_scan_ns;   /* time in the scan hook */
  long chunks, reserved_bytes, huge_page_chunks;
  long pools_handed_out;       /* pools out of the chunk allocator */
  long chunk_free_pools_committed, chunk_free_pools_decommitted;
};

/* Fills `*out`. Exact when no other domain is running boxroot
   operations concurrently (e.g. in a single-domain program, or while the
   caller knows the others are idle); otherwise a close snapshot. Needs
   the domain lock. Returns false if boxroot is not running. */
bool boxroot_get_stats(struct boxroot_stats *out);

/* sizeof(struct boxroot_stats), for bindings that mirror the struct
   (the Rust crate checks its layout against it). */
extern const size_t boxroot_stats_size;

#ifdef __cplusplus
}
#endif

#endif
