/* The chunk allocator and its page table (see chunk.h). All allocator
   state is under `chunk_lock`; it is taken only on the slow path that
   needs a new pool or gives one back, never while scanning. The page
   table and the in-use bits are also read without the lock
   (boxroot__chunk_classify): they are atomics, published with release stores.

   Decommitting. The system takes memory back a page at a time, and a
   page may be larger than a pool: 16 KiB on Apple silicon, up to 64 KiB
   on ARM64 Linux kernels. madvise refuses a start that is not
   page-aligned, and extends a length to whole pages: the pools beside
   the one given back would read zeros, live or not. So memory goes back
   a *span* at a time, the aligned pools that one page covers (one pool
   when pages are smaller), and only once every pool of the span is free
   and may lose its memory:
   - not handed out (its in-use bit clear);
   - not *pinned*: given back while the GC's marker may still read it
     (chunk.h), a pool keeps its memory until it is handed out again;
   - carved: below the bump pointer of the newest chunk, so that no
     allocation carves it while its page goes back.
   A free pool is on the committed list (linked through its `next` and
   `prev`), or decommitted (a bit of its chunk: nothing is written to
   it, which would take the page back), or in none while its span goes
   back, outside the lock. The page size is asked once, at the first
   chunk; a span is at most CHUNK_ALIGN, or nothing is decommitted. */
#define _GNU_SOURCE
/* First: boxroot.h stops the build where mmap is missing (Windows). */
#include "chunk.h"
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "alloc_failures.h"
#include "testing.h"
#include "window.h"

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

#define CHUNK_WORDS (POOLS_PER_CHUNK / BITS_PER_WORD)

struct chunk {
  struct chunk *next;
  char *base;
  int huge;                    /* advised MADV_HUGEPAGE */
  /* Written under the lock with release RMWs; read with acquire by
     boxroot__chunk_classify without it (publication, atomics.h: a pool
     seen in use was carved and filled first), relaxed under the lock. */
  uint64_t pools_in_use[CHUNK_WORDS];
  /* Free pools that keep their memory, free pools without (above).
     Under the lock. */
  uint64_t pools_pinned[CHUNK_WORDS], pools_decommitted[CHUNK_WORDS];
#if BOXROOT__TEST_HOOKS
  /* The test builds' own record of the pools given back while the
     marker may read them, for the check of each madvise (below). */
  uint64_t tested_readable[CHUNK_WORDS];
#endif
#if BOXROOT__IN_DEBUG_BUILD
  uintptr_t *side_tables;      /* POOL_SLOTS words per pool (chunk.h) */
#endif
};
#define SIDE_TABLES_SIZE (POOLS_PER_CHUNK * POOL_SLOTS * sizeof(uintptr_t))

/* Entries are written under the lock and read without it
   (boxroot__chunk_classify): a leaf or a chunk is published with a
   release store once set up, read with acquire (publication, atomics.h);
   the lock holder's own reads are relaxed. */
typedef struct chunk *page_table_entry;
static page_table_entry *chunk_page_table[(size_t)1 << ROOT_LOG_ENTRIES];

static pthread_mutex_t chunk_lock = PTHREAD_MUTEX_INITIALIZER;
static struct chunk *chunks;          /* every chunk, for teardown */
static size_t chunk_count, huge_chunk_count;
static char *bump, *bump_end;         /* unused tail of the newest chunk */
static pool *free_committed; /* linked through ->next and ->prev */
static size_t free_committed_count, free_decommitted_count, handed_out;
static long huge_pages_threshold = -1; /* -1: not read from the env yet */
/* The pools of a span (above), and their bytes; 0: never decommit. */
static size_t span_pools, span_bytes;

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

/* ---- a pool's bits, under the lock ---- */

static size_t pool_index(struct chunk *c, pool const *p)
{
  return ((uintptr_t)p - (uintptr_t)c->base) / BOXROOT__POOL_SIZE;
}

static int bit_get(uint64_t const *bits, size_t i)
{
  return (bits[i / BITS_PER_WORD] >> (i % BITS_PER_WORD)) & 1;
}

static void bit_set(uint64_t *bits, size_t i, int on)
{
  uint64_t bit = (uint64_t)1 << (i % BITS_PER_WORD);
  if (on) bits[i / BITS_PER_WORD] |= bit;
  else bits[i / BITS_PER_WORD] &= ~bit;
}

static int in_use(struct chunk *c, size_t i)
{
  uint64_t word = boxroot__load(&c->pools_in_use[i / BITS_PER_WORD], RELAXED);
  return (word >> (i % BITS_PER_WORD)) & 1; /* written under the lock only */
}

/* Whether pool `i` of `c` was carved: bump only hands out the newest
   chunk's tail. */
static int carved(struct chunk *c, size_t i)
{
  return c != chunks || c->base + i * BOXROOT__POOL_SIZE < bump;
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
#ifdef MADV_HUGEPAGE /* Linux only */
  /* Fails harmlessly (EINVAL) on kernels without THP. */
  if (madvise(c->base, CHUNK_SIZE, MADV_HUGEPAGE) == 0) {
    c->huge = 1;
    huge_chunk_count++;
  }
#endif
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

/* ---- the page size and decommitting ---- */

/* The page size: the system's, or in a test build the one it pretends
   (-DBOXROOT_TESTING_PAGE_SIZE, a multiple of the system's). */
static long page_size(void)
{
#ifdef BOXROOT_TESTING_PAGE_SIZE
  return BOXROOT_TESTING_PAGE_SIZE;
#else
  return sysconf(_SC_PAGESIZE);
#endif
}

/* Lock held, at the first chunk. A page that is not a power of two, or
   larger than a chunk's alignment, is never decommitted. */
static void ask_page_size(void)
{
  long page = page_size();
  if (page <= 0 || (page & (page - 1)) != 0 || (size_t)page > CHUNK_ALIGN) {
    span_pools = span_bytes = 0;
  } else {
    span_bytes = (size_t)page < BOXROOT__POOL_SIZE ? BOXROOT__POOL_SIZE : (size_t)page;
    span_pools = span_bytes / BOXROOT__POOL_SIZE;
  }
}

/* Linux's MADV_DONTNEED gives the pages back at once (they then read
   zeros); elsewhere (macOS, BSDs) it only lowers their priority, and
   MADV_FREE gives them back (they then read zeros or what they held).
   Either way, a pool that comes back from the allocator is filled again
   (marking.c, M2). */
#if defined(__linux__) || !defined(MADV_FREE)
#define DECOMMIT_ADVICE MADV_DONTNEED
#else
#define DECOMMIT_ADVICE MADV_FREE
#endif

#if BOXROOT__TEST_HOOKS
static long decommit_violations; /* atomic */
enum { UNALIGNED, BEYOND_CHUNK, IN_USE, READABLE, AVAILABLE, VIOLATION_KINDS };
static char const *const violation_names[VIOLATION_KINDS] = {
  "not page-aligned", "its pages reach beyond the chunk", "its pages hold a pool in use",
  "its pages hold a pool given back while the marker may read it",
  "its pages hold a pool that may be handed out meanwhile",
};
static int violation_seen[VIOLATION_KINDS]; /* atomic */

long boxroot__testing_decommit_violations(void)
{
  return boxroot__load(&decommit_violations, SEQ_CST);
}

/* Counts one; prints the first of each kind. */
static int decommit_violation(int kind, void *start, size_t length)
{
  boxroot__fetch_add(&decommit_violations, 1, SEQ_CST);
  if (boxroot__exchange(&violation_seen[kind], 1, SEQ_CST) == 0)
    fprintf(stderr, "boxroot: madvise(%p, %zu) with %ld-byte pages: %s\n",
            start, length, page_size(), violation_names[kind]);
  return 1;
}

/* Whether `p` is on the committed list. Lock held. */
static int on_committed_list(pool *p)
{
  for (pool *q = free_committed; q != NULL; q = q->next) if (q == p) return 1;
  return 0;
}

/* The test builds' check of each range given back, as the system sees
   it with pages of page_size() bytes: a page-aligned start (or the
   system refuses it), and every pool that the pages round up to is
   free, carved, not given back while the marker may read it, and
   nobody's to hand out. A failure is counted (testing.h), and the call
   is not made: the tests of broken builds then go on (a marker reading
   a pool that went back reads zeros, and crashes). */
static int decommit_allowed(void *start, size_t length)
{
  uintptr_t page = (uintptr_t)page_size();
  uintptr_t from = (uintptr_t)start, to = (from + length + page - 1) & ~(page - 1);
  if (from % page != 0) return !decommit_violation(UNALIGNED, start, length);
  int allowed = 1;
  pthread_mutex_lock(&chunk_lock);
  for (uintptr_t a = from; a < to; a += BOXROOT__POOL_SIZE) {
    struct chunk *c = chunk_of((void *)a);
    int kind = VIOLATION_KINDS;
    size_t i = c == NULL ? 0 : pool_index(c, (pool *)a);
    if (c == NULL) kind = BEYOND_CHUNK;
    else if (in_use(c, i)) kind = IN_USE;
    else if (bit_get(c->tested_readable, i)) kind = READABLE;
    else if (!carved(c, i) || bit_get(c->pools_decommitted, i) || on_committed_list((pool *)a))
      kind = AVAILABLE;
    if (kind != VIOLATION_KINDS) {
      allowed = !decommit_violation(kind, start, length);
      break;
    }
  }
  pthread_mutex_unlock(&chunk_lock);
  return allowed;
}

/* Lock held: `readable` when given back while the marker may read it,
   0 when handed out. */
static void record_readable(struct chunk *c, size_t i, int readable)
{
  bit_set(c->tested_readable, i, readable);
}
#else
static int decommit_allowed(void *start, size_t length)
{
  (void)start; (void)length;
  return 1;
}
static void record_readable(struct chunk *c, size_t i, int readable)
{
  (void)c; (void)i; (void)readable;
}
#endif

static void decommit(void *start, size_t length)
{
  if (decommit_allowed(start, length)) madvise(start, length, DECOMMIT_ADVICE);
}

/* The committed list, doubly linked: a span going back takes its pools
   off it. Lock held. */
static void committed_push(pool *p)
{
  p->prev = NULL;
  p->next = free_committed;
  if (free_committed != NULL) free_committed->prev = p;
  free_committed = p;
  free_committed_count++;
}

static void committed_remove(pool *p)
{
  if (p->prev != NULL) p->prev->next = p->next;
  else free_committed = p->next;
  if (p->next != NULL) p->next->prev = p->prev;
  free_committed_count--;
}

static int pinned(struct chunk *c, size_t i)
{
#ifndef BOXROOT_TESTING_DECOMMIT_PINNED /* a broken build for tests */
  return bit_get(c->pools_pinned, i);
#else
  (void)c; (void)i;
  return 0;
#endif
}

/* The first pool of the span of `p`, if every pool of it may lose its
   memory (above), else NULL. Lock held. */
static pool *decommittable_span(struct chunk *c, pool *p)
{
  if (span_pools == 0 || c->huge) return NULL;
#ifdef BOXROOT_TESTING_DECOMMIT_POOLS /* a broken build for tests */
  /* The pool alone, as if pages were never larger than pools. */
  if (bit_get(c->pools_pinned, pool_index(c, p))) return NULL;
  committed_remove(p);
  return p;
#endif
  size_t first = pool_index(c, p) / span_pools * span_pools;
  for (size_t i = first; i < first + span_pools; i++)
    if (in_use(c, i) || pinned(c, i) || !carved(c, i)) return NULL;
  /* Nobody's to hand out from here on. */
  for (size_t i = first; i < first + span_pools; i++) {
    pool *q = (pool *)(c->base + i * BOXROOT__POOL_SIZE);
    if (bit_get(c->pools_decommitted, i)) {
      bit_set(c->pools_decommitted, i, 0);
      free_decommitted_count--;
    } else {
      committed_remove(q);
    }
  }
  return (pool *)(c->base + first * BOXROOT__POOL_SIZE);
}

/* A decommitted pool, off the bits, or NULL. Lock held. */
static pool *take_decommitted(void)
{
  if (free_decommitted_count == 0) return NULL;
  for (struct chunk *c = chunks; c != NULL; c = c->next)
    for (size_t w = 0; w < CHUNK_WORDS; w++) {
      if (c->pools_decommitted[w] == 0) continue;
      size_t i = w * BITS_PER_WORD + (size_t)__builtin_ctzll(c->pools_decommitted[w]);
      bit_set(c->pools_decommitted, i, 0);
      free_decommitted_count--;
      return (pool *)(c->base + i * BOXROOT__POOL_SIZE);
    }
  return NULL;
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
  if (chunks == NULL) ask_page_size();
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
  p = free_committed;
  if (p != NULL) committed_remove(p);
  else p = take_decommitted();
  if (p == NULL && (bump < bump_end || new_chunk())) {
    p = (pool *)bump;
    bump += BOXROOT__POOL_SIZE;
  }
  if (p != NULL) {
    struct chunk *c = chunk_of(p);
    bit_set(c->pools_pinned, pool_index(c, p), 0);
    record_readable(c, pool_index(c, p), 0);
    handed_out++;
    set_in_use(p, 1);
  }
  pthread_mutex_unlock(&chunk_lock);
  if (p == NULL) errno = ENOMEM;
  return p;
}

void boxroot__chunk_free_pool(pool *p, int may_decommit)
{
  struct chunk *c = chunk_of(p);
  size_t i = pool_index(c, p);
  pool *span = NULL;
  pthread_mutex_lock(&chunk_lock);
  record_readable(c, i, !may_decommit);
  handed_out--;
  set_in_use(p, 0);
  bit_set(c->pools_pinned, i, !may_decommit);
  committed_push(p);
  if (free_committed_count > BOXROOT_FREE_POOLS_COMMITTED_MAX)
    span = decommittable_span(c, p);
  pthread_mutex_unlock(&chunk_lock);
  if (span != NULL) {
#ifndef BOXROOT_TESTING_DECOMMIT_POOLS
    size_t pools = span_pools;
#else
    size_t pools = 1;
#endif
    /* Outside the lock: the span's pools are ours alone until marked
       below. The range stays mapped (chunk.h). */
    decommit(span, pools * BOXROOT__POOL_SIZE);
    pthread_mutex_lock(&chunk_lock);
    for (size_t k = 0; k < pools; k++) bit_set(c->pools_decommitted, pool_index(c, span) + k, 1);
    free_decommitted_count += pools;
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
  free_committed = NULL;
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
