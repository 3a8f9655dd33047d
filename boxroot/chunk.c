/* The chunk allocator and its page table (see chunk.h). All allocator
   state is under `chunk_lock`; it is taken only on the slow path that
   needs a new pool or gives one back, never while scanning. The page
   table and the in-use bits are also read without the lock
   (boxroot__chunk_classify): they are atomics, published with release stores. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "alloc_failures.h"
#include "chunk.h"

/* Chunk size and committed free pools: tunables.h. Chunks are aligned
   to 2 MiB, the x86-64 huge page size, which is also the granularity of
   the page table. */
#define CHUNK_SIZE ((size_t)1 << BOXROOT_CHUNK_LOG_SIZE)
#define REGION_LOG_SIZE 21
#define CHUNK_ALIGN ((size_t)1 << REGION_LOG_SIZE)
#define POOLS_PER_CHUNK (CHUNK_SIZE / BOXROOT__POOL_SIZE)
/* Page table geometry: user-space addresses have at most 48 significant
   bits on x86-64 and arm64 (Linux maps above only when asked to with a
   hint). The root level is a static array (64 KiB of zero pages until
   used); leaves are mapped on demand, each covering 32 GiB. */
#define ADDRESS_BITS 48
#define LEAF_LOG_ENTRIES 14
#define ROOT_LOG_ENTRIES (ADDRESS_BITS - REGION_LOG_SIZE - LEAF_LOG_ENTRIES)

_Static_assert(CHUNK_SIZE % BOXROOT__POOL_SIZE == 0, "pools tile chunks");
_Static_assert(CHUNK_ALIGN % BOXROOT__POOL_SIZE == 0, "chunks align pools");
_Static_assert(CHUNK_SIZE % CHUNK_ALIGN == 0, "chunks tile regions");
#define BITS_PER_WORD 64
_Static_assert(POOLS_PER_CHUNK % BITS_PER_WORD == 0, "in-use bits fill whole words");

struct chunk {
  struct chunk *next;
  char *base;
  int huge;                    /* advised MADV_HUGEPAGE */
  uint64_t pools_in_use[POOLS_PER_CHUNK / BITS_PER_WORD]; /* atomic */
#if BOXROOT__IN_DEBUG_BUILD
  uintptr_t *side_tables;      /* POOL_SLOTS words per pool (chunk.h) */
#endif
};
#define SIDE_TABLES_SIZE (POOLS_PER_CHUNK * POOL_SLOTS * sizeof(uintptr_t))

/* Entries are read without the lock (boxroot__chunk_classify): atomic accesses. */
typedef struct chunk *page_table_entry;
static page_table_entry *chunk_page_table[(size_t)1 << ROOT_LOG_ENTRIES];

static pthread_mutex_t chunk_lock = PTHREAD_MUTEX_INITIALIZER;
static struct chunk *chunks;          /* every chunk, for teardown */
static size_t chunk_count, huge_chunk_count;
static char *bump, *bump_end;         /* unused tail of the newest chunk */
static pool *free_committed, *free_decommitted; /* linked through ->next */
static size_t free_committed_count, free_decommitted_count, handed_out;
static long huge_pages_threshold = -1; /* -1: not read from the env yet */

/* ---- page table ---- */

static size_t root_index(uint64_t a) { return a >> (REGION_LOG_SIZE + LEAF_LOG_ENTRIES); }
static size_t leaf_index(uint64_t a)
{
  return (a >> REGION_LOG_SIZE) & (((size_t)1 << LEAF_LOG_ENTRIES) - 1);
}

static inline __attribute__((always_inline)) struct chunk *chunk_of(void const *addr)
{
  uint64_t a = (uintptr_t)addr;
  if (a >> ADDRESS_BITS) return NULL;
  page_table_entry *leaf =
    boxroot__load(&chunk_page_table[root_index(a)], ACQUIRE);
  if (leaf == NULL) return NULL;
  return boxroot__load(&leaf[leaf_index(a)], ACQUIRE);
}

/* Points the regions of `c` at it. Lock held. Fails (0) only if the
   chunk lies beyond the table or a leaf cannot be mapped; then no entry
   was set. */
static int page_table_register(struct chunk *c)
{
  uint64_t first = (uintptr_t)c->base, last = first + CHUNK_SIZE - 1;
  if (last >> ADDRESS_BITS) return 0;
  for (uint64_t a = first; a <= last; a += CHUNK_ALIGN) {
    if (boxroot__load(&chunk_page_table[root_index(a)], RELAXED) != NULL)
      continue;
    size_t leaf_bytes = sizeof(page_table_entry) << LEAF_LOG_ENTRIES;
    void *leaf = boxroot__allocation_fails(BOXROOT__ALLOC_PAGE_TABLE) ? MAP_FAILED
      : mmap(NULL, leaf_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (leaf == MAP_FAILED) return 0;
    /* Zero pages are null entries. Leaves live until the process ends. */
    boxroot__store(&chunk_page_table[root_index(a)], leaf, RELEASE);
  }
  for (uint64_t a = first; a <= last; a += CHUNK_ALIGN) {
    page_table_entry *leaf = boxroot__load(&chunk_page_table[root_index(a)], RELAXED);
    boxroot__store(&leaf[leaf_index(a)], c, RELEASE);
  }
  return 1;
}

static void page_table_unregister(struct chunk *c)
{
  uint64_t first = (uintptr_t)c->base, last = first + CHUNK_SIZE - 1;
  for (uint64_t a = first; a <= last; a += CHUNK_ALIGN) {
    page_table_entry *leaf = boxroot__load(&chunk_page_table[root_index(a)], RELAXED);
    boxroot__store(&leaf[leaf_index(a)], NULL, RELEASE);
  }
}

enum chunk_address_class boxroot__chunk_classify(void const *addr)
{
  struct chunk *c = chunk_of(addr);
  if (c == NULL) return CHUNK_ADDRESS_FOREIGN;
  size_t i = ((uintptr_t)addr - (uintptr_t)c->base) / BOXROOT__POOL_SIZE;
  uint64_t word = boxroot__load(&c->pools_in_use[i / BITS_PER_WORD], ACQUIRE);
  return (word >> (i % BITS_PER_WORD)) & 1 ? CHUNK_ADDRESS_POOL_USED : CHUNK_ADDRESS_POOL_FREE;
}

static void set_in_use(pool *p, int in_use)
{
  struct chunk *c = chunk_of(p);
  size_t i = ((uintptr_t)p - (uintptr_t)c->base) / BOXROOT__POOL_SIZE;
  uint64_t bit = (uint64_t)1 << (i % BITS_PER_WORD);
  if (in_use) boxroot__fetch_or(&c->pools_in_use[i / BITS_PER_WORD], bit, RELEASE);
  else boxroot__fetch_and(&c->pools_in_use[i / BITS_PER_WORD], ~bit, RELEASE);
}

/* ---- huge pages ---- */

static long read_huge_pages_threshold(void)
{
  char const *s = getenv("BOXROOT_HUGE_PAGES");
  if (s == NULL || *s == '\0') return BOXROOT_HUGE_PAGES_DEFAULT_THRESHOLD;
  char *end;
  long n = strtol(s, &end, 10);
  return *end == '\0' && n >= 0 ? n : BOXROOT_HUGE_PAGES_DEFAULT_THRESHOLD;
}

static void advise_huge(struct chunk *c)
{
  if (c->huge) return;
  /* Fails harmlessly (EINVAL) on kernels without THP. */
  if (madvise(c->base, CHUNK_SIZE, MADV_HUGEPAGE) == 0) {
    c->huge = 1;
    huge_chunk_count++;
  }
}

/* Lock held, after a new chunk was added. */
static void apply_huge_pages_policy(struct chunk *newest)
{
  if (huge_pages_threshold < 0) huge_pages_threshold = read_huge_pages_threshold();
  if (huge_pages_threshold == 0 || chunk_count < (size_t)huge_pages_threshold) return;
  if (chunk_count == (size_t)huge_pages_threshold) {
    /* Crossing the threshold: the chunks so far too. */
    for (struct chunk *c = chunks; c != NULL; c = c->next) advise_huge(c);
  } else {
    advise_huge(newest);
  }
}

/* ---- chunks and pools ---- */

static char *map_aligned(size_t size, size_t align)
{
  size_t span = size + align;
  if (boxroot__allocation_fails(BOXROOT__ALLOC_CHUNK_MAP)) return NULL;
  char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  char *aligned = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
  if (aligned > raw) munmap(raw, aligned - raw);
  char *end = aligned + size, *raw_end = raw + span;
  if (raw_end > end) munmap(end, raw_end - end);
  return aligned;
}

/* Gives back a chunk's memory (its side tables in the debug build). */
static void unmap_chunk(struct chunk *c)
{
#if BOXROOT__IN_DEBUG_BUILD
  if (c->side_tables != NULL) munmap(c->side_tables, SIDE_TABLES_SIZE);
#endif
  munmap(c->base, CHUNK_SIZE);
  free(c);
}

static int new_chunk(void)
{
  struct chunk *c = boxroot__allocation_fails(BOXROOT__ALLOC_CHUNK) ? NULL
    : calloc(1, sizeof *c);
  if (c == NULL) return 0;
  c->base = map_aligned(CHUNK_SIZE, CHUNK_ALIGN);
  if (c->base == NULL) { free(c); return 0; }
#if BOXROOT__IN_DEBUG_BUILD
  /* Pages are committed as roots are created in them. */
  c->side_tables = boxroot__allocation_fails(BOXROOT__ALLOC_SIDE_TABLES) ? MAP_FAILED
    : mmap(NULL, SIDE_TABLES_SIZE, PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (c->side_tables == MAP_FAILED) {
    c->side_tables = NULL;
    unmap_chunk(c);
    return 0;
  }
#endif
  if (!page_table_register(c)) {
    unmap_chunk(c);
    return 0;
  }
  c->next = chunks;
  chunks = c;
  chunk_count++;
  bump = c->base;
  bump_end = c->base + CHUNK_SIZE;
  apply_huge_pages_policy(c);
  return 1;
}

pool *boxroot__chunk_alloc_pool(void)
{
  if (boxroot__allocation_fails(BOXROOT__ALLOC_POOL)) { errno = ENOMEM; return NULL; }
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
    bump += BOXROOT__POOL_SIZE;
  }
  if (p != NULL) {
    handed_out++;
    set_in_use(p, 1);
  }
  pthread_mutex_unlock(&chunk_lock);
  if (p == NULL) errno = ENOMEM;
  return p;
}

void boxroot__chunk_free_pool(pool *p, int may_decommit)
{
  int decommit;
  pthread_mutex_lock(&chunk_lock);
  handed_out--;
  set_in_use(p, 0);
  decommit = free_committed_count >= BOXROOT_FREE_POOLS_COMMITTED_MAX && !chunk_of(p)->huge
    && may_decommit;
  if (!decommit) {
    p->next = free_committed;
    free_committed = p;
    free_committed_count++;
  }
  pthread_mutex_unlock(&chunk_lock);
  if (decommit) {
    /* Outside the lock: the pool is ours alone until pushed below. The
       range stays mapped (chunk.h); touching it again gives zero pages. */
    madvise(p, BOXROOT__POOL_SIZE, MADV_DONTNEED);
    pthread_mutex_lock(&chunk_lock);
    p->next = free_decommitted;
    free_decommitted = p;
    free_decommitted_count++;
    pthread_mutex_unlock(&chunk_lock);
  }
}

void boxroot__chunk_release_all(void)
{
  pthread_mutex_lock(&chunk_lock);
  while (chunks != NULL) {
    struct chunk *c = chunks;
    chunks = c->next;
    page_table_unregister(c);
    unmap_chunk(c);
  }
  chunk_count = huge_chunk_count = 0;
  bump = bump_end = NULL;
  free_committed = free_decommitted = NULL;
  free_committed_count = free_decommitted_count = handed_out = 0;
  pthread_mutex_unlock(&chunk_lock);
}

#if BOXROOT__IN_DEBUG_BUILD
uintptr_t *boxroot__chunk_side_table(pool *p)
{
  struct chunk *c = chunk_of(p);
  size_t i = ((uintptr_t)p - (uintptr_t)c->base) / BOXROOT__POOL_SIZE;
  return c->side_tables + i * POOL_SLOTS;
}

void boxroot__chunk_visit_pools(void (*visit)(pool *p, void *arg), void *arg)
{
  pthread_mutex_lock(&chunk_lock);
  for (struct chunk *c = chunks; c != NULL; c = c->next)
    for (size_t i = 0; i < POOLS_PER_CHUNK; i++) {
      uint64_t word = boxroot__load(&c->pools_in_use[i / BITS_PER_WORD], ACQUIRE);
      if ((word >> (i % BITS_PER_WORD)) & 1)
        visit((pool *)(c->base + i * BOXROOT__POOL_SIZE), arg);
    }
  pthread_mutex_unlock(&chunk_lock);
}
#endif

void boxroot__chunk_get_stats(struct chunk_stats *out)
{
  pthread_mutex_lock(&chunk_lock);
  out->chunks = chunk_count;
  out->reserved_bytes = chunk_count * CHUNK_SIZE;
  out->pools_handed_out = handed_out;
  out->free_pools_committed = free_committed_count;
  out->free_pools_decommitted = free_decommitted_count;
  out->huge_page_chunks = huge_chunk_count;
  pthread_mutex_unlock(&chunk_lock);
}
