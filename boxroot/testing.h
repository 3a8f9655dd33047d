/* Test-only entry points. Not API: for boxroot's own test suite, and only
   in the test build of the library (BOXROOT_TESTING: the dune library
   `boxroot_testing`, boxroot/testing/dune); the release library does not
   export them. */
#ifndef BOXROOT_TESTING_H
#define BOXROOT_TESTING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where the library asks for memory (or another resource that can run
   out), as bits: the failures that a test can inject. */
enum boxroot__alloc_site {
  BOXROOT__ALLOC_POOL = 1 << 0,            /* a pool from the chunk allocator */
  BOXROOT__ALLOC_CHUNK = 1 << 1,           /* a chunk's descriptor (chunk.c) */
  BOXROOT__ALLOC_CHUNK_MAP = 1 << 2,       /* a chunk's address space (mmap) */
  BOXROOT__ALLOC_PAGE_TABLE = 1 << 3,      /* a leaf of the page table (mmap) */
  BOXROOT__ALLOC_SIDE_TABLES = 1 << 4,     /* the debug build's side tables */
  BOXROOT__ALLOC_DIRECTORY = 1 << 5,       /* a directory's block (directory.c) */
  BOXROOT__ALLOC_THREAD_KEY = 1 << 6,      /* the thread-exit key (remote.c) */
  BOXROOT__ALLOC_THREAD_SPECIFIC = 1 << 7, /* a thread's value for that key */
  BOXROOT__ALLOC_LEAK_REPORT = 1 << 8,     /* the debug build's leak report */
  BOXROOT__ALLOC_NOTIFY_SIDE = 1 << 9,     /* a notifying pool's records (weak_notify.c) */
  BOXROOT__ALLOC_ALL = (1 << 10) - 1
};

/* Among the attempts to allocate at `sites`, `after` more succeed, then
   one fails as if the OS had refused memory (with `persistent`: every
   one from then on), until called again; `after` < 0: none fails (the
   default). */
void boxroot__testing_fail_allocations(unsigned sites, long after, int persistent);
/* How many attempts to allocate at `sites` were made so far, and how
   many of them failed by injection. */
long boxroot__testing_allocation_attempts(unsigned sites);
long boxroot__testing_allocation_failures(unsigned sites);

/* How many ranges the chunk allocator gave back to the system (madvise)
   that the system, with pages of the size the build pretends
   (-DBOXROOT_TESTING_PAGE_SIZE, or the system's), would refuse or
   extend over a pool that must keep its memory: in use, given back
   while the marker may read it, or free to hand out meanwhile
   (chunk.c). The first one is printed on stderr. */
long boxroot__testing_decommit_violations(void);

/* With `on` non-zero, orphans (domain.h) are adopted only at scans that
   neither are a minor collection's nor darken the roots (compaction,
   heap verification), so that a test can have them join there
   (marking.c, M1); 0 (the default) restores adoption at every scan.
   Meanwhile nothing promotes or darkens their values: the test makes
   them old and marked first. */
void boxroot__testing_adopt_at_compaction_only(int on);

/* With `mode` 1, domains adopt orphans only at their root darkening
   scan (after its stamp switch), as OCaml 5.5 lets a domain do when a
   worker that left root marking terminated before that scan; with 2,
   at no scan; 0 (the default) restores adoption at every scan. */
void boxroot__testing_adopt_at_darkening_only(int mode);

/* With `defer` non-zero, weak roots are cleared only in the fallback of
   weak.c (W3), so that a test can read them in the window between the
   end of marking and their clearing; 0 (the default) restores the
   clearing in major slices. */
void boxroot__testing_weak_defer_clearing(int defer);

/* Window points (window.h), in test builds. `f(point, domain, data)` is
   called at every point reached (point: an enum boxroot__window_point;
   domain: the id the point acts for, or -1), on the thread that reaches
   it, in whatever context it runs (a stop-the-world section, a thread
   without a lock): it must not call into boxroot or the runtime. NULL
   removes it. */
typedef void (*boxroot__window_callback)(int point, int domain, void *data);
void boxroot__testing_window_callback(boxroot__window_callback f, void *data);
/* Seeded random delays at every point: `per_thousand` of a point's
   first visits are delayed by a yield or a sleep of up to `max_micros`
   microseconds (0: no delay), fewer of its later ones (window.c). */
void boxroot__testing_window_delays(unsigned long seed, unsigned per_thousand,
                                    unsigned max_micros);
/* How many times point `at` was reached so far, and its name. */
long boxroot__testing_window_visits(int at);
char const *boxroot__testing_window_name(int at);

/* Markers held back (OCaml 5; marking.c, M0-M4): the next darkening
   hook of domain `domain` (its id; -1: every domain's next one) switches
   the stamp and counts the domain as usual, but leaves its directory off
   its mark stack, so that its marker cannot reach its pools until the
   domain calls boxroot__testing_release_darkening. Until then the domain
   stays counted (M4), as a domain whose stack holds pools does. A test
   thus runs what it wants between a cycle start and the marker's first
   read of the pools, whatever the schedule. `on` = 0 cancels the hold,
   and forgets a directory held back (a domain that terminated while
   held: its pools left its directory). */
void boxroot__testing_hold_darkening(int domain, int on);
/* Darkens the directory that a hold kept back, of the domain whose lock
   this thread holds: 1 if done during the cycle's main marking phase; 0
   if that phase was over (the pools were not marked in this cycle); -1
   if no directory was held back. */
int boxroot__testing_release_darkening(void);

/* The major cycle count starts `offset` cycles further on (marking.c),
   so that a test crosses 2^32 cycles. Before any root is created. */
void boxroot__testing_cycle_offset(uint64_t offset);

/* How many directory blocks (directory.c) are retired, not freed yet. */
long boxroot__testing_retired_directory_blocks(void);

/* With `on` non-zero, a stale marker is emulated (stale_marker.c;
   marking.c, M1): the header of a pool that leaves a directory while
   marking is in progress is loaded as the marker of its domain would,
   and written back MARKED as that marker would, if it loaded it
   UNMARKED, after each growth of the pool in the same cycle, wherever it
   went meanwhile. The test builds' check of the headers at each cycle
   start then catches a size undone. */
void boxroot__testing_stale_marker(int on);

/* Checks the invariants of the rings of the domain whose lock this
   thread holds (invariants.h); aborts with a message if one is broken.
   Returns 0 (nothing checked) without a lock or before setup. */
int boxroot__testing_check_invariants(void);

#ifdef __cplusplus
}
#endif

#endif
