/* Allocation failures injected by the test builds: every place where the
   library asks for memory (or another resource that can run out) asks
   here first, so that a test can make any one of them fail
   (testing.h: the k-th allocation, or the ones at chosen sites). Release
   builds compile the question to 0. */
#ifndef BOXROOT_ALLOC_FAILURES_H
#define BOXROOT_ALLOC_FAILURES_H

#include "testing.h"
#include "window.h"

#if BOXROOT__TEST_HOOKS
/* Whether this attempt at `site` (one bit of enum boxroot__alloc_site)
   fails; counts the attempt. Thread-safe. */
int boxroot__allocation_fails(unsigned site);
#else
static inline int boxroot__allocation_fails(unsigned site) { (void)site; return 0; }
#endif

#endif /* BOXROOT_ALLOC_FAILURES_H */
