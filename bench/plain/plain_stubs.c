/* The plain C loops of a user of the boxroot API, timed in C (plain.ml
   says what each measures). Compiled together with the library's own .c
   files by `ocamlopt -ccopt -O2`, as a user without dune would
   (build.sh): the library's fast paths inlined from its header, and
   nothing else, no CAMLparam (the loops allocate nothing). Each loop
   returns the CPU time it took, in nanoseconds. */
#include <stdlib.h>
#include <time.h>
#include <caml/mlvalues.h>
#include "boxroot.h"

static long cpu_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* A user checks every creation; inline, as if written in the loop. */
static inline boxroot create_or_die(value v)
{
  boxroot r = boxroot_create(v);
  if (r == NULL) abort();
  return r;
}

value plain_setup(value unit)
{
  (void)unit;
  return Val_bool(boxroot_setup());
}

/* Create a root and delete it at once. */
value plain_create_delete(value iters, value v)
{
  long n = Long_val(iters);
  long t0 = cpu_ns();
  for (long i = 0; i < n; i++) boxroot_delete(create_or_die(v));
  return Val_long(cpu_ns() - t0);
}

/* Batches of BATCH roots: all created, then all deleted in creation
   order; `iters` create+delete pairs in all. The creations' and the
   deletions' times, summed over the batches, go to times[0] and
   times[1] (a float array). */
#define BATCH 10000
static boxroot batch[BATCH];

value plain_batches(value iters, value v, value times)
{
  long n = Long_val(iters), create_ns = 0, delete_ns = 0;
  for (long done = 0; done < n; done += BATCH) {
    long m = n - done < BATCH ? n - done : BATCH;
    long t0 = cpu_ns();
    for (long i = 0; i < m; i++) batch[i] = create_or_die(v);
    long t1 = cpu_ns();
    for (long i = 0; i < m; i++) boxroot_delete(batch[i]);
    create_ns += t1 - t0;
    delete_ns += cpu_ns() - t1;
  }
  Store_double_field(times, 0, (double)create_ns);
  Store_double_field(times, 1, (double)delete_ns);
  return Val_unit;
}

/* Old roots: plain_keep_batch creates BATCH roots holding `v` (in the
   batch array), then, after a full major collection by the caller,
   plain_modify_kept sets the first one alternately to `v1` and `v2` and
   deletes them all. */
value plain_keep_batch(value v)
{
  for (long i = 0; i < BATCH; i++) batch[i] = create_or_die(v);
  return Val_unit;
}

value plain_modify_kept(value iters, value v1, value v2)
{
  long n = Long_val(iters);
  boxroot r = batch[0];
  long t0 = cpu_ns();
  for (long i = 0; i < n; i++)
    if (!boxroot_modify(&r, (i & 1) ? v1 : v2)) abort();
  long t = cpu_ns() - t0;
  batch[0] = r;
  for (long i = 0; i < BATCH; i++) boxroot_delete(batch[i]);
  return Val_long(t);
}

/* One root, set alternately to `v1` and `v2`. */
value plain_modify(value iters, value v1, value v2)
{
  long n = Long_val(iters);
  boxroot r = create_or_die(v1);
  long t0 = cpu_ns();
  for (long i = 0; i < n; i++)
    if (!boxroot_modify(&r, (i & 1) ? v1 : v2)) abort();
  long t = cpu_ns() - t0;
  boxroot_delete(r);
  return Val_long(t);
}
