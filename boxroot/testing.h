/* Test-only entry points. Not API: for boxroot's own test suite, and only
   in the test build of the library (BOXROOT_TESTING: the dune library
   `boxroot_testing`, boxroot/testing/dune); the release library does not
   export them. */
#ifndef BOXROOT_TESTING_H
#define BOXROOT_TESTING_H

#ifdef __cplusplus
extern "C" {
#endif

/* After `n` more successful pool allocations, every pool allocation
   fails as if the OS had refused memory, until called again with a
   negative `n` (the default, no injected failure). */
void boxroot__testing_fail_pool_allocations_after(long n);

/* After `n` more successful growths of a directory (marking.c), every
   growth fails as if out of memory, until called again with a negative
   `n` (the default). */
void boxroot__testing_fail_directory_growth_after(long n);

/* With `defer` non-zero, weak roots are cleared only in the fallback of
   weak.c (W3), so that a test can read them in the window between the
   end of marking and their clearing; 0 (the default) restores the
   clearing in major slices. */
void boxroot__testing_weak_defer_clearing(int defer);

/* Checks the invariants of the rings of the domain whose lock this
   thread holds (invariants.h); aborts with a message if one is broken.
   Returns 0 (nothing checked) without a lock or before setup. */
int boxroot__testing_check_invariants(void);

#ifdef __cplusplus
}
#endif

#endif
