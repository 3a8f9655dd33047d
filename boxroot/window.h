/* Window points: the named steps of the GC protocols (marking.c, remote.c,
   weak.c, and the hooks' life cycle) at which the test builds let a test
   delay one thread, so that tests open the windows between the steps on
   purpose rather than wait for a scheduler to. Release builds compile
   every point to nothing.

   A point is reached with the id of the domain it acts for (-1: none).
   Tests choose what happens there (testing.h): a callback of their own
   (to hold one domain at one point until another has acted), or seeded
   random delays and yields at every point. Each point counts its visits,
   so that a test can check that it reached the windows it meant to. */
#ifndef BOXROOT_WINDOW_H
#define BOXROOT_WINDOW_H

#include <stdint.h>

enum boxroot__window_point {
  BOXROOT__AT_SCAN_HOOK,           /* a scan hook, past its status check */
  BOXROOT__AT_STAMP_SWITCHED,      /* S: the stamp stored, a domain with pools */
  BOXROOT__AT_DIRECTORY_DARKENING, /* M0: before a directory is darkened */
  BOXROOT__AT_DIRECTORY_DARKENED,  /* M0: after */
  BOXROOT__AT_FLAG_RAISED,         /* M4 */
  BOXROOT__AT_FLAG_LOWERED,        /* M4 */
  BOXROOT__AT_OWNER_BARRIER,       /* M3: the owner, before darkening */
  BOXROOT__AT_SNAPSHOT,            /* M3: before a pool's snapshot */
  BOXROOT__AT_OTHER_DOMAIN_BARRIER,/* M5: another domain, before darkening */
  BOXROOT__AT_ADOPTION,            /* before orphans are adopted */
  BOXROOT__AT_ORPHANING,           /* a terminating domain, before orphaning */
  BOXROOT__AT_REMOTE_PUBLISH,      /* D1 done, before D2 */
  BOXROOT__AT_REMOTE_COLLECT,      /* C2 done, before C3 */
  BOXROOT__AT_WEAK_CLEARING,       /* W3: before a domain clears, in a slice */
  BOXROOT__AT_WEAK_READ,           /* W4: the read barrier's slow path */
  BOXROOT__AT_SLICE_HOOK,          /* a slice hook in the cleaning phase (W3) */
  BOXROOT__AT_TEARDOWN,            /* teardown, hooks removed, before waiting */
  BOXROOT__AT_HOOK_PUBLISHED,      /* setup, a runtime hook just chained */
  BOXROOT__WINDOW_POINTS
};

/* The test builds' hooks into the library (testing.h: window points,
   injected failures, the cycle offset, the emulated stale marker, weak
   clearing deferred): in the test build (BOXROOT_TESTING), and in the
   deliberately broken builds that tests run against
   (BOXROOT_TESTING_WINDOWS), which do not check invariants. */
#if defined(BOXROOT_TESTING) || defined(BOXROOT_TESTING_WINDOWS)
#define BOXROOT__TEST_HOOKS 1
#else
#define BOXROOT__TEST_HOOKS 0
#endif

#if BOXROOT__TEST_HOOKS
void boxroot__window_reached(enum boxroot__window_point at, int domain);
/* How many cycles the counts of marking.c and weak.c start further on
   (testing.h). */
extern uint64_t boxroot__window_cycle_offset_value; /* atomic */
static inline uint64_t boxroot__window_cycle_offset(void)
{
  return __atomic_load_n(&boxroot__window_cycle_offset_value, __ATOMIC_RELAXED);
}
#define BOXROOT__WINDOW(at, domain) boxroot__window_reached((at), (domain))
/* Darkenings held back (testing.h, boxroot__testing_hold_darkening): at
   domain `domain`'s darkening hook, whether a test holds its directory
   back (it is then owed until released: marking.c); whether one is
   owed; taking the one owed (0 if none). */
int boxroot__window_hold_darkening(int domain);
int boxroot__window_darkening_owed(int domain);
int boxroot__window_take_owed_darkening(int domain);
#else
/* Not evaluated: sizeof only marks the arguments as used. */
#define BOXROOT__WINDOW(at, domain) ((void)sizeof(at), (void)sizeof(domain))
static inline uint64_t boxroot__window_cycle_offset(void) { return 0; }
#endif

#endif /* BOXROOT_WINDOW_H */
