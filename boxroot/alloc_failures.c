/* Allocation failures injected by the test builds (alloc_failures.h); an
   empty file otherwise. */
#include "alloc_failures.h"
#if BOXROOT__TEST_HOOKS
#include "atomics.h"

#define SITES 10
_Static_assert(BOXROOT__ALLOC_ALL == (1u << SITES) - 1, "one counter per site");

/* The failure asked for: among the attempts at `failing_sites`,
   `failing_after` more succeed, then one fails, or every one if
   `failing_persistent`; -1: none. Written by the test, read by every
   allocating thread: sequentially consistent, `failing_after` last. */
static unsigned failing_sites;
static int failing_persistent;
static long failing_after = -1;
static long attempts[SITES], failures[SITES]; /* atomic */

void boxroot__testing_fail_allocations(unsigned sites, long after, int persistent)
{
  boxroot__store(&failing_after, -1, SEQ_CST);
  boxroot__store(&failing_sites, sites, SEQ_CST);
  boxroot__store(&failing_persistent, persistent, SEQ_CST);
  boxroot__store(&failing_after, after, SEQ_CST);
}

static long sum(long const *counts, unsigned sites)
{
  long n = 0;
  for (int i = 0; i < SITES; i++)
    if (sites & (1u << i)) n += boxroot__load(&counts[i], SEQ_CST);
  return n;
}

long boxroot__testing_allocation_attempts(unsigned sites) { return sum(attempts, sites); }
long boxroot__testing_allocation_failures(unsigned sites) { return sum(failures, sites); }

int boxroot__allocation_fails(unsigned site)
{
  int i = __builtin_ctz(site);
  boxroot__fetch_add(&attempts[i], 1, SEQ_CST);
  long n = boxroot__load(&failing_after, SEQ_CST);
  while ((boxroot__load(&failing_sites, SEQ_CST) & site) != 0 && n >= 0) {
    if (n > 0) {
      if (boxroot__cas_weak(&failing_after, &n, n - 1, SEQ_CST)) return 0;
    } else if (boxroot__load(&failing_persistent, SEQ_CST)
               /* Once: the first thread to take the 0 fails. */
               || boxroot__cas_weak(&failing_after, &n, -1, SEQ_CST)) {
      boxroot__fetch_add(&failures[i], 1, SEQ_CST);
      return 1;
    }
  }
  return 0;
}

#else
/* ISO C wants a translation unit to declare something. */
typedef int boxroot__alloc_failures_are_test_only;
#endif
