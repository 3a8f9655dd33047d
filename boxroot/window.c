/* Window points of the test builds (window.h); an empty file otherwise. */
#include "window.h"
#if BOXROOT__TEST_HOOKS
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include "atomics.h"
#include "testing.h"

uint64_t boxroot__window_cycle_offset_value;

void boxroot__testing_cycle_offset(uint64_t offset)
{
  boxroot__store(&boxroot__window_cycle_offset_value, offset, SEQ_CST);
}

/* Darkenings held back: one bit per domain id (ids below 64). `held`:
   the next darkening hook of that domain leaves its directory off its
   mark stack; `owed`: one did, and its domain has not darkened it yet. */
static uint64_t held, owed; /* atomic */

static uint64_t domain_bit(int domain)
{
  return domain >= 0 && domain < 64 ? (uint64_t)1 << domain : 0;
}

void boxroot__testing_hold_darkening(int domain, int on)
{
  uint64_t bits = domain == -1 ? ~(uint64_t)0 : domain_bit(domain);
  if (on) {
    boxroot__fetch_or(&held, bits, SEQ_CST);
  } else {
    boxroot__fetch_and(&held, ~bits, SEQ_CST);
    boxroot__fetch_and(&owed, ~bits, SEQ_CST);
  }
}

int boxroot__window_hold_darkening(int domain)
{
  uint64_t bit = domain_bit(domain);
  if ((boxroot__fetch_and(&held, ~bit, SEQ_CST) & bit) == 0) return 0;
  boxroot__fetch_or(&owed, bit, SEQ_CST);
  return 1;
}

int boxroot__window_darkening_owed(int domain)
{
  return (boxroot__load(&owed, SEQ_CST) & domain_bit(domain)) != 0;
}

int boxroot__window_take_owed_darkening(int domain)
{
  uint64_t bit = domain_bit(domain);
  return (boxroot__fetch_and(&owed, ~bit, SEQ_CST) & bit) != 0;
}

static boxroot__window_callback callback; /* atomic */
static void *callback_data;               /* written before `callback` */
static long visits[BOXROOT__WINDOW_POINTS]; /* atomic */

/* Random delays: `permille` of a point's first 256 visits are delayed,
   each by a yield or a sleep of up to `max_us` microseconds, and fewer
   and fewer of the later ones (the share divided by 1 + visits / 256):
   rare points (a cycle start, an adoption) are delayed as often as the
   seed says, frequent ones (a barrier per deletion) do not make a run
   last minutes. Drawn from a per-thread
   generator seeded from `seed` and the thread's arrival order, so that a
   run with a given seed and schedule delays the same visits. */
static unsigned long seed; /* atomic, as the two below */
static unsigned permille, max_us;
static unsigned long threads_seen;
static __thread uint64_t rng;
static __thread unsigned long rng_seed; /* the seed rng was drawn from */

void boxroot__testing_window_callback(boxroot__window_callback f, void *data)
{
  boxroot__store(&callback, NULL, SEQ_CST);
  callback_data = data;
  boxroot__store(&callback, f, SEQ_CST);
}

void boxroot__testing_window_delays(unsigned long s, unsigned per_thousand, unsigned max_micros)
{
  boxroot__store(&permille, 0, SEQ_CST);
  boxroot__store(&max_us, max_micros, SEQ_CST);
  boxroot__store(&seed, s, SEQ_CST);
  boxroot__store(&threads_seen, 0, SEQ_CST);
  boxroot__store(&permille, per_thousand, SEQ_CST);
}

long boxroot__testing_window_visits(int at)
{
  return at >= 0 && at < BOXROOT__WINDOW_POINTS ? boxroot__load(&visits[at], SEQ_CST) : -1;
}

char const *boxroot__testing_window_name(int at)
{
  static char const *const names[BOXROOT__WINDOW_POINTS] = {
    [BOXROOT__AT_SCAN_HOOK] = "scan hook",
    [BOXROOT__AT_STAMP_SWITCHED] = "stamp switched",
    [BOXROOT__AT_DIRECTORY_DARKENING] = "directory darkening",
    [BOXROOT__AT_DIRECTORY_DARKENED] = "directory darkened",
    [BOXROOT__AT_FLAG_RAISED] = "flag raised",
    [BOXROOT__AT_FLAG_LOWERED] = "flag lowered",
    [BOXROOT__AT_OWNER_BARRIER] = "owner's barrier",
    [BOXROOT__AT_SNAPSHOT] = "snapshot",
    [BOXROOT__AT_OTHER_DOMAIN_BARRIER] = "another domain's barrier",
    [BOXROOT__AT_ADOPTION] = "adoption",
    [BOXROOT__AT_ORPHANING] = "orphaning",
    [BOXROOT__AT_REMOTE_PUBLISH] = "remote publication",
    [BOXROOT__AT_REMOTE_COLLECT] = "remote collection",
    [BOXROOT__AT_WEAK_CLEARING] = "weak clearing",
    [BOXROOT__AT_WEAK_READ] = "weak read",
    [BOXROOT__AT_SLICE_HOOK] = "slice hook",
    [BOXROOT__AT_TEARDOWN] = "teardown",
    [BOXROOT__AT_HOOK_PUBLISHED] = "hook published",
  };
  return at >= 0 && at < BOXROOT__WINDOW_POINTS ? names[at] : "?";
}

/* xorshift64* */
static uint64_t next_random(void)
{
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 2685821657736338717ull;
}

static void random_delay(long visit)
{
  unsigned p = boxroot__load(&permille, SEQ_CST);
  if (p == 0) return;
  unsigned long s = boxroot__load(&seed, SEQ_CST);
  if (rng == 0 || rng_seed != s) {
    rng_seed = s;
    unsigned long order = boxroot__fetch_add(&threads_seen, 1, SEQ_CST);
    rng = (s + 1) * 0x9E3779B97F4A7C15ull ^ (order + 1) * 0xC2B2AE3D27D4EB4Full;
    if (rng == 0) rng = 1;
  }
  uint64_t r = next_random();
  if (r % (1000 * (uint64_t)(1 + visit / 256)) >= p) return;
  unsigned max = boxroot__load(&max_us, SEQ_CST);
  if ((r >> 20) % 4 == 0 || max == 0) {
    sched_yield();
    return;
  }
  long us = (long)((r >> 24) % max) + 1;
  struct timespec t = { us / 1000000, (us % 1000000) * 1000 };
  nanosleep(&t, NULL);
}

void boxroot__window_reached(enum boxroot__window_point at, int domain)
{
  long visit = boxroot__fetch_add(&visits[at], 1, SEQ_CST);
  boxroot__window_callback f = boxroot__load(&callback, SEQ_CST);
  if (f != NULL) f((int)at, domain, callback_data);
  random_delay(visit);
}

#else
/* ISO C wants a translation unit to declare something. */
typedef int boxroot__window_points_are_test_only;
#endif
