/* Converting scan ticks to nanoseconds (ticks.h). */
#include <time.h>
#include "ticks.h"

static long now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long)t.tv_sec * 1000000000L + t.tv_nsec;
}

#if !defined(__x86_64__)
long boxroot__ticks_now(void) { return now_ns(); }
#endif

/* Written at setup, read by statistics readers afterwards. */
static long calibration_ticks, calibration_ns;

void boxroot__ticks_calibrate(void)
{
  calibration_ns = now_ns();
  calibration_ticks = boxroot__ticks_now();
}

long boxroot__ticks_to_ns(long ticks)
{
  long dt = boxroot__ticks_now() - calibration_ticks, dns = now_ns() - calibration_ns;
  if (dt <= 0 || dns <= 0) return ticks;
  return (long)((double)ticks * ((double)dns / (double)dt));
}
