/* Clocks for the benchmarks, in nanoseconds. */
#include <time.h>
#include <caml/mlvalues.h>

static long ns_of(clockid_t c)
{
  struct timespec t;
  clock_gettime(c, &t);
  return (long)t.tv_sec * 1000000000L + t.tv_nsec;
}

long bench_clock_cpu_ns(void) { return ns_of(CLOCK_PROCESS_CPUTIME_ID); }
long bench_clock_wall_ns(void) { return ns_of(CLOCK_MONOTONIC); }

value bench_cpu_ns(value unit) { (void)unit; return Val_long(bench_clock_cpu_ns()); }
value bench_wall_ns(value unit) { (void)unit; return Val_long(bench_clock_wall_ns()); }
