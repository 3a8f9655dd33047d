/* The C side of roots_bench.ml: many live roots, used at random.

   `bench_setup(n)` creates n roots, each holding a fresh block whose
   field is the root's index. `bench_ops(k)` runs k operations on random
   roots: half are boxroot_get (checking the field), a quarter
   boxroot_modify with a fresh young block, a quarter delete + create.
   Random indices make every operation touch a random pool, which is what
   huge pages (fewer TLB misses) could speed up; the values checked make
   sure the roots stay correct. Compiled with and without -DBOXROOT_DEBUG
   (debug/dune) to measure the debug build. */
#define CAML_NAME_SPACE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <caml/alloc.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>
#include "boxroot.h"

static boxroot *roots;
static long root_count;
static uint64_t random_state = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void)
{
  uint64_t x = random_state;
  x ^= x << 13; x ^= x >> 7; x ^= x << 17;
  return random_state = x;
}

static value block_holding(long i)
{
  value b = caml_alloc_small(1, 0);
  Field(b, 0) = Val_long(i);
  return b;
}

static boxroot create_or_die(value v)
{
  boxroot r = boxroot_create(v);
  if (r == NULL) { perror("boxroot_create"); exit(2); }
  return r;
}

value bench_setup(value n)
{
  root_count = Long_val(n);
  roots = malloc(root_count * sizeof *roots);
  if (roots == NULL) exit(2);
  for (long i = 0; i < root_count; i++) roots[i] = create_or_die(block_holding(i));
  return Val_unit;
}

value bench_ops(value k)
{
  for (long op = Long_val(k); op > 0; op--) {
    uint64_t x = next_random();
    long i = (long)((x >> 8) % (uint64_t)root_count);
    switch (x & 3) {
    case 0: case 1:
      if (Long_val(Field(boxroot_get(roots[i]), 0)) != i) {
        fprintf(stderr, "roots_bench: root %ld holds a wrong value\n", i);
        exit(3);
      }
      break;
    case 2:
      if (!boxroot_modify(&roots[i], block_holding(i))) { perror("boxroot_modify"); exit(2); }
      break;
    default:
      boxroot_delete(roots[i]);
      roots[i] = create_or_die(block_holding(i));
    }
  }
  return Val_unit;
}

value bench_teardown(value unit)
{
  for (long i = 0; i < root_count; i++) boxroot_delete(roots[i]);
  free(roots);
  roots = NULL;
  return unit;
}

static value clock_ns(clockid_t clock)
{
  struct timespec t;
  clock_gettime(clock, &t);
  return Val_long((long)t.tv_sec * 1000000000L + t.tv_nsec);
}

/* Wall time, and CPU time of the process (less sensitive to other
   processes competing for the cores). */
value bench_now_ns(value unit) { (void)unit; return clock_ns(CLOCK_MONOTONIC); }
value bench_cpu_ns(value unit) { (void)unit; return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }
