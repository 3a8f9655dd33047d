/* Plain C threads, never registered with OCaml, that delete roots while
   holding no lock (test_stress.ml). OCaml threads queue roots with
   stress_delete_later; the deleters take them from a bounded ring and
   call boxroot_delete, in parallel with OCaml's threads, domains and
   collections. They hold roots for a while first (up to HELD_MAX each),
   so that their deletions also land while pools are being scanned. */
#define CAML_NAME_SPACE
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <caml/fail.h>
#include <caml/mlvalues.h>
#include <caml/signals.h>
#include "boxroot.h"

#define RING_SIZE 4096
#define DELETERS_MAX 16
#define HELD_MAX 64

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ring_nonempty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t ring_nonfull = PTHREAD_COND_INITIALIZER;
static boxroot ring[RING_SIZE];
static size_t ring_head, ring_count;
static int stopping;
static pthread_t deleters[DELETERS_MAX];
static int deleter_count;
static long deleted_total;

static boxroot to_root(value v) { return (boxroot)(v & ~(value)1); }

/* Takes up to `max` roots; blocks while the ring is empty, unless
   stopping. Returns how many. */
static int take(boxroot *out, int max)
{
  pthread_mutex_lock(&ring_lock);
  while (ring_count == 0 && !stopping) pthread_cond_wait(&ring_nonempty, &ring_lock);
  int n = 0;
  while (n < max && ring_count > 0) {
    out[n++] = ring[ring_head];
    ring_head = (ring_head + 1) % RING_SIZE;
    ring_count--;
  }
  if (n > 0) pthread_cond_broadcast(&ring_nonfull);
  pthread_mutex_unlock(&ring_lock);
  return n;
}

static void *deleter(void *arg)
{
  unsigned seed = (unsigned)(uintptr_t)arg;
  boxroot held[HELD_MAX];
  int nheld = 0;
  long deleted = 0;
  for (;;) {
    int want = 1 + (int)(rand_r(&seed) % HELD_MAX);
    if (nheld < want) {
      int got = take(held + nheld, want - nheld);
      if (got == 0) break; /* stopping, and nothing left */
      nheld += got;
    }
    /* Delete a random share of what we hold, in random order. */
    int k = 1 + (int)(rand_r(&seed) % nheld);
    while (k-- > 0) {
      int i = (int)(rand_r(&seed) % nheld);
      boxroot_delete(held[i]);
      held[i] = held[--nheld];
      deleted++;
    }
  }
  while (nheld > 0) { boxroot_delete(held[--nheld]); deleted++; }
  __atomic_fetch_add(&deleted_total, deleted, __ATOMIC_RELAXED);
  return NULL;
}

value stress_deleters_start(value n)
{
  if (deleter_count != 0) caml_failwith("stress_deleters_start: already started");
  stopping = 0;
  deleted_total = 0;
  int want = Int_val(n) < DELETERS_MAX ? Int_val(n) : DELETERS_MAX;
  for (int i = 0; i < want; i++) {
    if (pthread_create(&deleters[i], NULL, deleter, (void *)(uintptr_t)(i + 1)) != 0)
      caml_failwith("stress_deleters_start: pthread_create");
    deleter_count++;
  }
  return Val_unit;
}

/* Called by OCaml threads holding their lock; waits outside it when the
   ring is full (the deleters never need an OCaml lock). */
value stress_delete_later(value root)
{
  boxroot r = to_root(root);
  pthread_mutex_lock(&ring_lock);
  while (ring_count == RING_SIZE) {
    pthread_mutex_unlock(&ring_lock);
    caml_enter_blocking_section();
    pthread_mutex_lock(&ring_lock);
    while (ring_count == RING_SIZE) pthread_cond_wait(&ring_nonfull, &ring_lock);
    pthread_mutex_unlock(&ring_lock);
    caml_leave_blocking_section();
    pthread_mutex_lock(&ring_lock);
  }
  ring[(ring_head + ring_count) % RING_SIZE] = r;
  ring_count++;
  pthread_cond_signal(&ring_nonempty);
  pthread_mutex_unlock(&ring_lock);
  return Val_unit;
}

/* Lets the deleters finish every queued root, joins them, and returns
   how many roots they deleted. */
value stress_deleters_stop(value unit)
{
  (void)unit;
  caml_enter_blocking_section();
  pthread_mutex_lock(&ring_lock);
  stopping = 1;
  pthread_cond_broadcast(&ring_nonempty);
  pthread_mutex_unlock(&ring_lock);
  for (int i = 0; i < deleter_count; i++) pthread_join(deleters[i], NULL);
  caml_leave_blocking_section();
  deleter_count = 0;
  return Val_long(__atomic_load_n(&deleted_total, __ATOMIC_RELAXED));
}

/* Deletes the given roots from a blocking section in `steps` chunks,
   waiting after each chunk until the main domain reports one more
   collection (stress_collection_done): the calling domain holds no lock
   meanwhile, so these collections scan its pools on its behalf (its
   backup thread on OCaml 5) while its purely remote deletions land. */
static long collections_done;

value stress_collection_done(value unit)
{
  (void)unit;
  __atomic_fetch_add(&collections_done, 1, __ATOMIC_RELEASE);
  return Val_unit;
}

value stress_delete_in_steps_unlocked(value roots, value steps)
{
  mlsize_t n = Wosize_val(roots);
  long k = Long_val(steps);
  boxroot *copy = malloc((n + 1) * sizeof(boxroot));
  if (copy == NULL) caml_failwith("stress_delete_in_steps_unlocked: out of memory");
  for (mlsize_t i = 0; i < n; i++) copy[i] = to_root(Field(roots, i));
  struct timespec pause = { 0, 100000 };
  caml_enter_blocking_section();
  long start = __atomic_load_n(&collections_done, __ATOMIC_ACQUIRE);
  for (long step = 0; step < k; step++) {
    for (mlsize_t i = n * step / k; i < n * (step + 1) / k; i++) boxroot_delete(copy[i]);
    while (__atomic_load_n(&collections_done, __ATOMIC_ACQUIRE) < start + step + 1)
      nanosleep(&pause, NULL);
  }
  caml_leave_blocking_section();
  free(copy);
  return Val_unit;
}
