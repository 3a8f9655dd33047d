/* Clocks for the benchmarks, in nanoseconds, and the timed section's
   bounds for callgrind (bench/tools/per_op.py). */
#include <time.h>
#include <caml/mlvalues.h>
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif

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

/* Switches callgrind's collection on or off (a few instructions outside
   valgrind): bench/src/harness.ml's `measure` calls it around the timed
   section, so that `valgrind --tool=callgrind --collect-atstart=no`
   counts that section alone. Callgrind's own way, --toggle-collect on the
   function, loses track of its return on OCaml 5, whose C calls switch
   stacks. */
value bench_callgrind_toggle(value unit)
{
  (void)unit;
#ifdef CALLGRIND_TOGGLE_COLLECT
  CALLGRIND_TOGGLE_COLLECT;
#endif
  return Val_unit;
}
