/* The API's slow paths, teardown and statistics. The fast paths are
   inline in boxroot.h; setup, status and errors: status.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "barrier.h"
#include "boxroot.h"
#include "boxroot_stats.h"
#include "chunk.h"
#include "domain.h"
#include "leaks.h"
#include "marking.h"
#include "remote.h"
#include "status.h"
#include "ticks.h"
#include "weak_domain.h"

/* What boxroot holds, given back with the hooks removed, the highest
   layer first: marking must be over before the pools go. */
static void release_everything(void)
{
  boxroot__leaks_report_at_teardown();
  boxroot__marking_quiesce();
  boxroot__domain_forget_all();
  boxroot__weak_forget_all();
  boxroot__chunk_release_all();
}

void boxroot_teardown(void)
{
  boxroot__tear_down(release_everything);
}

void *boxroot__create_slow(value v)
{
  /* The usual way here: this thread holds the lock, knows where its
     domain's current pool is kept, and that pool is full. A current pool
     means that boxroot runs and the domain state is this incarnation's
     (the teardown and a termination reset the cursors). */
  if (boxroot__compat_cursor_known()) {
    pool *p = boxroot__domain_refill_next(boxroot__compat_held_domain());
    if (p != NULL) return boxroot__pool_take_link(&p->hot, v, 0);
  }
  int dom = boxroot__locked_domain_or_fail("boxroot_create: this thread does not hold the OCaml domain lock");
  if (dom < 0) return NULL;
  if (!boxroot__running_or_fail()) return NULL;
  boxroot__compat_point_thread_cursor(dom);
  struct boxroot_domain *d = boxroot__domain_get(dom);
  pool *p = d == NULL ? NULL : boxroot__domain_refill(d);
  if (p == NULL) {
    boxroot__fail(ENOMEM, "boxroot_create: no pool for new roots (out of memory, "
                  "or this domain has terminated)");
    return NULL;
  }
  /* boxroot__domain_refill guarantees a free slot in the current pool:
     taken without the fast path's test of the lock, which may fail on
     OCaml 4.14 where the lock is known from the runtime only
     (ocaml_compat.h, boxroot__compat_lock_held_slow). */
  return boxroot__pool_take_link(&p->hot, v, 0);
}

/* Roots moved by boxroot_modify, per domain (written with its lock, read
   on its behalf by the statistics: sum_domain). */
static long modify_moves[BOXROOT__MAX_DOMAINS];

bool boxroot__modify_slow(boxroot *r, value v)
{
  int dom = boxroot__locked_domain_or_fail("boxroot_modify: this thread does not hold the OCaml domain lock");
  if (dom < 0) return false;
  boxroot root = *r;
  pool *p = pool_of_slot(root);
  /* A pool whose stamp is not current: the old value may be the only
     trace of a value that the marker has yet to see (marking.c, M3). */
  if (BOXROOT__COMPAT_DELETION_BARRIER) boxroot__barrier_modify(root);
  /* A young value into a pool that is not young: the root moves. An old
     value too, within this domain's bound (tunables.h), also from
     another domain or while the stamp is not current: the deletion that
     follows runs the owner's barrier, or is remote and never writes the
     slot (M5). */
  bool in_place = pool_class(p) == CLASS_YOUNG;
  if (!in_place && !boxroot__compat_may_be_young(v)) {
    struct boxroot__alloc_cursor *c = &boxroot__alloc_cursor[dom];
    in_place = c->old_value_moves >= BOXROOT_OLD_VALUE_MOVES;
    if (!in_place) c->old_value_moves++;
  }
  if (in_place) {
    /* Atomic: the owner may be reading the slot (marking.c). */
    boxroot__store((value *)boxroot__slot_of(root), v, RELAXED);
    return true;
  }
  boxroot moved = boxroot_create(v);
  if (moved == NULL) return false;
  boxroot_delete(root);
  *r = moved;
  modify_moves[dom]++;
  return true;
}

const size_t boxroot_stats_size = sizeof(struct boxroot_stats);

/* The domains sum in parallel (boxroot__compat_visit_domains). */
static void add(long *total, long n)
{
  if (n != 0) boxroot__fetch_add(total, n, RELAXED);
}

/* What domain `id` owns, read on its behalf. */
static void sum_domain(int id, void *stats)
{
  struct boxroot_stats *out = stats;
  struct boxroot__alloc_cursor *c = &boxroot__alloc_cursor[id];
  add(&out->deleted_remote_domain, c->deleted_remote + remote_unpublished(c));
  add(&out->modify_moves, modify_moves[id]);
  struct boxroot_domain *d = &boxroot__domains[id];
  long pools[3], roots, creations;
  boxroot__domain_counts(d, pools, &roots, &creations);
  add(&out->pools_young, pools[CLASS_YOUNG]);
  add(&out->pools_old, pools[CLASS_OLD]);
  add(&out->pools_free, pools[CLASS_FREE]);
  add(&out->slots_in_use, roots);
  add(&out->created, creations);
  add(&out->pools_demoted, d->stats.pools_demoted);
  add(&out->pools_adopted, d->stats.pools_adopted);
  add(&out->delayed_frees_collected, d->stats.delayed_frees_collected);
  add(&out->minor_scans, d->stats.minor_scans);
  add(&out->major_scans, d->stats.major_scans);
  add(&out->minor_slots_scanned, d->stats.minor_slots_scanned);
  add(&out->major_slots_scanned, d->stats.major_slots_scanned);
  add(&out->minor_scan_ns, boxroot__ticks_to_ns(d->stats.minor_scan_ticks));
  add(&out->major_scan_ns, boxroot__ticks_to_ns(d->stats.major_scan_ticks));
}

/* What the domains share, read while none of them runs. */
static void sum_shared(void *stats)
{
  struct boxroot_stats *out = stats;
  add(&out->deleted_purely_remote, boxroot__remote_purely_remote_deletes());
  long orphan_pools, orphan_roots, orphan_creations;
  boxroot__domain_orphan_counts(&orphan_pools, &orphan_roots, &orphan_creations);
  add(&out->pools_orphaned, orphan_pools);
  add(&out->slots_in_use, orphan_roots);
  add(&out->created, orphan_creations + boxroot__domain_retired_creations());
  struct chunk_stats cs;
  boxroot__chunk_get_stats(&cs);
  add(&out->chunks, cs.chunks);
  add(&out->reserved_bytes, cs.reserved_bytes);
  add(&out->pools_handed_out, cs.pools_handed_out);
  add(&out->chunk_free_pools_committed, cs.free_pools_committed);
  add(&out->chunk_free_pools_decommitted, cs.free_pools_decommitted);
  add(&out->huge_page_chunks, cs.huge_page_chunks);
  boxroot__weak_add_stats(out);
}

/* The statistics' read protocol. Most counts change without a lock, by
   the one thread allowed to, so reading them from elsewhere would race:
   - What a domain owns (its rings and their pools' counts, its `stats`,
     its cursor's remote deletions, its modify_moves) changes only on that
     domain's behalf (domain.h). Another thread cannot even walk its
     rings while it runs: ring_remove clears a pool's links, and a pool
     given back to the chunk allocator reuses `next`, so the walk could
     crash or never end. So each domain's part is summed on its behalf
     (sum_domain) while every domain is stopped:
     boxroot__compat_visit_domains, a stop-the-world section on OCaml 5
     (retried until it runs), the master lock on OCaml 4.14.
   - What is shared (orphan rings, creations of retired pools, chunks,
     deletions by threads holding no domain lock) is read in the same
     section, atomically or under its own lock (sum_shared), so that a
     pool moving between a domain and these is counted once.
   The snapshot is thus of one instant, except for deletions by threads
   holding no domain lock, which go on: each is counted in full
   (deleted_purely_remote, roots_alive) or not yet. A thread without a
   domain lock can neither start the section nor hold the master lock:
   it gets no statistics (EPERM). Per-domain counters that such a thread
   could read would have to be updated by the fast paths; statistics are
   not worth that cost. */
bool boxroot_get_stats(struct boxroot_stats *out)
{
  memset(out, 0, sizeof *out);
  if (boxroot_status() != BOXROOT_RUNNING) return false;
  if (!boxroot__compat_visit_domains(sum_domain, sum_shared, out)) {
    boxroot__fail(EPERM, "boxroot_get_stats: this thread does not hold the OCaml domain lock");
    return false;
  }
  /* Every slot ever handed out is in use, was freed by a local deletion,
     or was freed by collecting a remote deletion; remote deletions not
     collected yet are still in use. */
  out->deleted_local = out->created - out->slots_in_use - out->delayed_frees_collected;
  long remote_pending = out->deleted_remote_domain + out->deleted_purely_remote
    - out->delayed_frees_collected;
  out->roots_alive = out->slots_in_use - remote_pending;
  return true;
}

void boxroot_print_stats(void)
{
  struct boxroot_stats s;
  if (!boxroot_get_stats(&s)) {
    printf("boxroot: %s\n", boxroot_error_string());
    return;
  }
  printf("boxroot: %ld roots alive (%ld created, %ld deleted locally, "
         "%ld from another domain, %ld with no lock; %ld moved by modify)\n",
         s.roots_alive, s.created, s.deleted_local, s.deleted_remote_domain,
         s.deleted_purely_remote, s.modify_moves);
  printf("boxroot: %ld slots in use (%ld remote deletions collected so far)\n",
         s.slots_in_use, s.delayed_frees_collected);
  printf("boxroot: pools: %ld young, %ld old, %ld free, %ld orphaned; "
         "%ld demoted, %ld adopted\n",
         s.pools_young, s.pools_old, s.pools_free, s.pools_orphaned,
         s.pools_demoted, s.pools_adopted);
  printf("boxroot: %ld minor scans (%ld slots, %.3f ms), "
         "%ld major scans (%ld slots, %.3f ms)\n",
         s.minor_scans, s.minor_slots_scanned, s.minor_scan_ns / 1e6,
         s.major_scans, s.major_slots_scanned, s.major_scan_ns / 1e6);
  printf("boxroot: %ld weak roots alive (%ld created, %ld emptied by the GC), "
         "%ld weak pools; clearing %.3f ms in slices, %.3f ms stop-the-world\n",
         s.weak_roots_alive, s.weak_created, s.weak_cleared, s.weak_pools,
         s.weak_clear_ns / 1e6, s.weak_clear_stw_ns / 1e6);
  printf("boxroot: %ld KiB reserved in %ld chunks (%ld with huge pages), "
         "%ld pools in use, %ld free pools committed, %ld decommitted\n",
         s.reserved_bytes / 1024, s.chunks, s.huge_page_chunks,
         s.pools_handed_out, s.chunk_free_pools_committed,
         s.chunk_free_pools_decommitted);
}
