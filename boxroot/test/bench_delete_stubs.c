/* The cost of a deletion by kind (bench_delete.ml): roots are created
   into a C array, then deleted in a timed C loop, by the owning domain
   (local), by another domain (remote-domain), or by a plain C thread
   holding no lock (purely remote). */
#define CAML_NAME_SPACE
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <caml/fail.h>
#include <caml/mlvalues.h>
#include <caml/signals.h>
#include "boxroot.h"

struct batch { long n; boxroot roots[]; };

static long now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long)t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Creates `n` roots (lock held); `shuffle` deletes them later in a random
   order instead of creation order. The batch crosses into OCaml as an
   immediate. */
value bench_create(value n, value shuffle)
{
  long count = Long_val(n);
  struct batch *b = malloc(sizeof *b + count * sizeof(boxroot));
  if (b == NULL) caml_failwith("bench_create: out of memory");
  b->n = count;
  for (long i = 0; i < count; i++) {
    b->roots[i] = boxroot_create(Val_long(i));
    if (b->roots[i] == NULL) caml_failwith("bench_create: boxroot_create failed");
  }
  if (Bool_val(shuffle)) {
    unsigned seed = 12345;
    for (long i = count - 1; i > 0; i--) {
      long j = (long)(rand_r(&seed) % (unsigned)(i + 1));
      boxroot t = b->roots[i]; b->roots[i] = b->roots[j]; b->roots[j] = t;
    }
  }
  return (value)b | 1;
}

static struct batch *batch_of(value v) { return (struct batch *)(v & ~(value)1); }

static long delete_all(struct batch *b)
{
  /* Read the array of roots into this thread's cache first: for the
     remote kinds another core wrote it, and moving it here is not a cost
     of the deletions. */
  uintptr_t sum = 0;
  for (long i = 0; i < b->n; i++) sum += (uintptr_t)b->roots[i];
  __asm__ volatile("" : : "r"(sum));
  long t0 = now_ns();
  for (long i = 0; i < b->n; i++) boxroot_delete(b->roots[i]);
  long t = now_ns() - t0;
  free(b);
  return t;
}

/* Deletes the batch from this thread, lock held; returns ns in total. */
value bench_delete(value batch)
{
  return Val_long(delete_all(batch_of(batch)));
}

static void *delete_in_thread(void *arg)
{
  long *io = arg;
  io[1] = delete_all((struct batch *)io[0]);
  return NULL;
}

/* Deletes the batch from a new C thread that holds no lock. */
value bench_delete_no_lock(value batch)
{
  long io[2] = { (long)batch_of(batch), 0 };
  pthread_t t;
  caml_enter_blocking_section();
  pthread_create(&t, NULL, delete_in_thread, io);
  pthread_join(t, NULL);
  caml_leave_blocking_section();
  return Val_long(io[1]);
}

