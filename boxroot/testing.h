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

/* After `n` more successful pool allocations, every pool allocation
   fails as if the OS had refused memory, until called again with a
   negative `n` (the default, no injected failure). */
void boxroot__testing_fail_pool_allocations_after(long n);

/* After `n` more successful allocations of a domain's state (domain.c),
   every one fails as if out of memory, until called again with a
   negative `n` (the default): such a domain owns no pool, and its hooks
   return early. */
void boxroot__testing_fail_domain_states_after(long n);

/* After `n` more successful growths of a directory (directory.c), every
   growth fails as if out of memory, until called again with a negative
   `n` (the default). */
void boxroot__testing_fail_directory_growth_after(long n);

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
