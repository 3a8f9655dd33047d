/* The chunk allocator (see chunk.h). All state is under `chunk_lock`;
   it is taken only on the slow path that needs a new pool or gives one
   back, never while scanning. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "chunk.h"
#include "testing.h"

/* 4 MiB reserved at a time: 256 pools. Address space is cheap and pages
   are only committed when touched, so the size only bounds how often we
   call mmap. Aligned to 2 MiB, the x86-64 huge page size. */
#define CHUNK_SIZE ((size_t)4 << 20)
#define CHUNK_ALIGN ((size_t)2 << 20)
/* Free pools kept ready beyond this are decommitted (1 MiB). */
#define FREE_POOLS_COMMITTED_MAX 64

_Static_assert(CHUNK_SIZE % BOXROOT_POOL_SIZE == 0, "pools tile chunks");
_Static_assert(CHUNK_ALIGN % BOXROOT_POOL_SIZE == 0, "chunks align pools");

struct chunk {
  struct chunk *next;
  char *base;
};

static pthread_mutex_t chunk_lock = PTHREAD_MUTEX_INITIALIZER;
static struct chunk *chunks;          /* every chunk, for teardown */
static size_t chunk_count;
static char *bump, *bump_end;         /* unused tail of the newest chunk */
static pool *free_committed, *free_decommitted; /* linked through ->next */
static size_t free_committed_count, free_decommitted_count, handed_out;
static atomic_long fail_after = -1;   /* testing.h */

void boxroot_testing_fail_pool_allocations_after(long n)
{
  atomic_store(&fail_after, n);
}

static int injected_failure(void)
{
  long n = atomic_load(&fail_after);
  while (n >= 0) {
    if (n == 0) return 1;
    if (atomic_compare_exchange_weak(&fail_after, &n, n - 1)) return 0;
  }
  return 0;
}

static char *map_aligned(size_t size, size_t align)
{
  size_t span = size + align;
  char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  char *aligned = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
  if (aligned > raw) munmap(raw, aligned - raw);
  char *end = aligned + size, *raw_end = raw + span;
  if (raw_end > end) munmap(end, raw_end - end);
  return aligned;
}

static int new_chunk(void)
{
  struct chunk *c = malloc(sizeof *c);
  if (c == NULL) return 0;
  c->base = map_aligned(CHUNK_SIZE, CHUNK_ALIGN);
  if (c->base == NULL) { free(c); return 0; }
  c->next = chunks;
  chunks = c;
  chunk_count++;
  bump = c->base;
  bump_end = c->base + CHUNK_SIZE;
  return 1;
}

pool *chunk_alloc_pool(void)
{
  if (injected_failure()) { errno = ENOMEM; return NULL; }
  pool *p = NULL;
  pthread_mutex_lock(&chunk_lock);
  if (free_committed != NULL) {
    p = free_committed;
    free_committed = p->next;
    free_committed_count--;
  } else if (free_decommitted != NULL) {
    p = free_decommitted;
    free_decommitted = p->next;
    free_decommitted_count--;
  } else if (bump < bump_end || new_chunk()) {
    p = (pool *)bump;
    bump += BOXROOT_POOL_SIZE;
  }
  if (p != NULL) handed_out++;
  pthread_mutex_unlock(&chunk_lock);
  if (p == NULL) errno = ENOMEM;
  return p;
}

void chunk_free_pool(pool *p)
{
  int decommit;
  pthread_mutex_lock(&chunk_lock);
  handed_out--;
  decommit = free_committed_count >= FREE_POOLS_COMMITTED_MAX;
  if (!decommit) {
    p->next = free_committed;
    free_committed = p;
    free_committed_count++;
  }
  pthread_mutex_unlock(&chunk_lock);
  if (decommit) {
    /* Outside the lock: the pool is ours alone until pushed below. The
       range stays mapped (chunk.h); touching it again gives zero pages. */
    madvise(p, BOXROOT_POOL_SIZE, MADV_DONTNEED);
    pthread_mutex_lock(&chunk_lock);
    p->next = free_decommitted;
    free_decommitted = p;
    free_decommitted_count++;
    pthread_mutex_unlock(&chunk_lock);
  }
}

void chunk_release_all(void)
{
  pthread_mutex_lock(&chunk_lock);
  while (chunks != NULL) {
    struct chunk *c = chunks;
    chunks = c->next;
    munmap(c->base, CHUNK_SIZE);
    free(c);
  }
  chunk_count = 0;
  bump = bump_end = NULL;
  free_committed = free_decommitted = NULL;
  free_committed_count = free_decommitted_count = handed_out = 0;
  pthread_mutex_unlock(&chunk_lock);
}

int chunk_contains(void const *addr)
{
  int found = 0;
  pthread_mutex_lock(&chunk_lock);
  for (struct chunk *c = chunks; c != NULL && !found; c = c->next)
    found = (char const *)addr >= c->base && (char const *)addr < c->base + CHUNK_SIZE;
  pthread_mutex_unlock(&chunk_lock);
  return found;
}

void chunk_get_stats(struct chunk_stats *out)
{
  pthread_mutex_lock(&chunk_lock);
  out->chunks = chunk_count;
  out->reserved_bytes = chunk_count * CHUNK_SIZE;
  out->pools_handed_out = handed_out;
  out->free_pools_committed = free_committed_count;
  out->free_pools_decommitted = free_decommitted_count;
  pthread_mutex_unlock(&chunk_lock);
}
