/* Test-only entry points. Not API: for boxroot's own test suite. */
#ifndef BOXROOT_TESTING_H
#define BOXROOT_TESTING_H

#ifdef __cplusplus
extern "C" {
#endif

/* After `n` more successful pool allocations, every pool allocation
   fails as if the OS had refused memory, until called again with a
   negative `n` (the default, no injected failure). */
void boxroot__testing_fail_pool_allocations_after(long n);

#ifdef __cplusplus
}
#endif

#endif
