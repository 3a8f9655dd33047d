/* Scan durations, kept in clock ticks and converted when read: on x86-64
   the time-stamp counter, which costs about 7 ns to read here against 22
   ns for clock_gettime (two reads per scan with work; globroots makes
   about 190,000 such scans). Elsewhere ticks are nanoseconds. */
#ifndef BOXROOT_TICKS_H
#define BOXROOT_TICKS_H

#if defined(__x86_64__)
#include <x86intrin.h>
static inline long boxroot__ticks_now(void) { return (long)__rdtsc(); }
#else
long boxroot__ticks_now(void);
#endif

/* Starts measuring the tick rate (at setup). */
void boxroot__ticks_calibrate(void);
/* `ticks` in nanoseconds, at the rate measured since calibration: the
   longer the program has run, the closer the estimate. */
long boxroot__ticks_to_ns(long ticks);

#endif /* BOXROOT_TICKS_H */
