/* Pools: the unit of allocation, ownership and scanning.

   A pool is BOXROOT__POOL_SIZE bytes aligned to its size (chunk.c
   guarantees the alignment), so `boxroot__pool_of` finds it from any of
   its slots. Layout, in cache lines: the header that only the owner
   writes, at every creation and local deletion; the delayed-free bitmap
   (remote.c); the header that other threads read (owner, class:
   boxroot_internal.h), with the `pending` flag of remote deletions and,
   in its last word, the slots' block header (marking.c); then the slots.
   A remote deletion reads the shared line and writes the bitmap, never
   the first line: it does not take the owner's line away from it.

   Invariants (enforced in pool.c unless said otherwise):
   - A free slot holds a link: the entry of the next free slot (its
     address, or on OCaml 4.14 that of the word before it, which is also
     what a root points to: boxroot__free_slot, boxroot_internal.h) plus
     BOXROOT__COMPAT_LINK_TAG (the list ends with the pool's own address
     plus the tag), and `hot.free_link` the link to the first free slot. An
     entry is in its slot's pool. On OCaml 5 the tag is 1: links are odd, so the GC's
     marker, which may read any slot of a pool (marking.c), takes them
     for immediates. On OCaml 4.14, whose marker never reads a pool, it
     is 0. An allocated slot holds an OCaml value: an immediate, or a
     block outside every pool. So `pool_slot_is_free` is one mask and
     one compare, and needs no metadata; it cannot tell a link from an
     immediate (or, on OCaml 4.14, a pointer outside the heap) whose bits
     happen to equal one of the pool's links. What relies on it tolerates
     that rare mistake: the per-slot scans stop at `fresh` whatever it
     says (scan.c), and the debug build would report such a root as
     deleted.
   - The word before the first slot is an OCaml block header (tag 0),
     which makes the slots the fields of a block outside the heap
     (marking.c, M1): the slots below `fresh`, or at times all of them.
     So every slot of a pool that left the chunk allocator holds a value
     or an odd word, also those at or above `fresh` (pool_fill_unused, at
     the pool's first use).
   - Slots at or above `fresh` have never been handed out since the pool
     was last reset; scanning stops there. Slots are handed out in
     ascending order in batches of BOXROOT_FRESH_BATCH (tunables.h,
     boxroot__pool_thread_fresh), so a pool holding few roots is scanned
     over a short prefix. `fresh - slots` is
     a whole number of cache lines (the minor scan reads line by line).
   - `pool_alloc_count` counts allocated slots, including those deleted
     remotely whose deletion is still delayed (remote.c). The count in
     `hot.counts` exceeds it by `hot.count_bias`, which is 0 except in a
     domain's current pool (domain.h). A pool whose
     count drops to 0 leaves the scanned rings at once, or at the next
     scan for the few young ones a domain keeps (domain.h). `pool_creations`
     counts every slot ever handed out (statistics); pools keep it until
     they go back to the chunk allocator (domain.c).
   - `cls` says which ring of its owner the pool is on (domain.c).
   - The debug build's quarantine: the slots its owner freed last, at
     most BOXROOT_DEBUG_QUARANTINE of them, oldest first, linked as the
     free list is (odd links, the last one to the pool itself) but kept
     off it; each one freed beyond that sends the oldest onto the free
     list. So a quarantined slot is free to every reader (the marker, the
     scans, the debug checks), is not counted in `pool_alloc_count`, and
     is not handed out. The queue lives in the pool and is changed only by
     its owner, as the free list: it moves with the pool to a new owner,
     and boxroot__pool_reset empties it, so a slot is never released into
     a pool that was given back to the chunk allocator meanwhile. */
#ifndef BOXROOT_POOL_H
#define BOXROOT_POOL_H

#include "asserts.h"
#include "boxroot.h"

#define CACHE_LINE BOXROOT__CACHE_LINE

/* Delayed frees: one bit per slot, set by the deleting thread. */
#define DELAYED_WORDS ((int)(BOXROOT__POOL_SIZE / 512)) /* 32: 2048 bits >= POOL_SLOTS */

typedef struct pool pool;

struct pool {
  union {
    struct {
      struct boxroot__pool_hot hot;
      pool *next, *prev;     /* ring links (domain.c) */
      void **fresh;          /* first never-used slot */
      /* Deletion barriers run in this pool in the cycle whose stamp is
         `barriers_stamp` (marking.c, M3). */
      int barriers;
      uint32_t barriers_stamp;
      /* Where its owner's directory lists it (1-based), or 0 (marking.c,
         M0). */
      uint32_t listed_at;
      /* `hot.count_bias`: what `hot.counts` holds beyond the slots in
         use (above). */
#if BOXROOT__IN_DEBUG_BUILD
      /* The quarantine (above): its length; `hot.quarantine_oldest` and
         `hot.quarantine_newest` are the slot indices of its oldest and
         newest slot. */
      uint16_t quarantined;
#endif
    };
    char header_line[CACHE_LINE];
  };
  /* Written by remote deleters; see remote.c for the protocol (every
     access sequentially consistent: store buffering, atomics.h). */
  _Alignas(CACHE_LINE) uintptr_t delayed_bits[DELAYED_WORDS];
  /* Read by any thread; written by the owner when the pool changes
     owner, class or stamp, and by remote deleters (`delayed_pending`)
     once per collection (remote.c). `block_header`: marking.c, M1. */
  _Alignas(CACHE_LINE) struct boxroot__pool_shared shared;
  int delayed_pending;
  /* A weak pool of notifying roots: its side records (notify_side.h),
     else NULL. Written by the owner when the pool is handed out or
     retired. */
  struct boxroot__notify_side *notify;
  /* The slots' OCaml block header (marking.c): the last word of the line,
     right before the first slot, so that it costs no slot. */
  char header_padding[CACHE_LINE - sizeof(struct boxroot__pool_shared)
                      - 2 * sizeof(void *) - sizeof(uintptr_t)];
  uintptr_t block_header;
  /* Written by the owner and, through boxroot_modify, by any domain;
     read by the owner's scans and by other domains' markers (marking.c,
     M1). Relaxed: the access only keeps the marker's read from being a
     data race; what the value points to is published by the runtime's
     own orders (allocation, the darkening of marking.c). */
  void *slots[];
};

#define POOL_HEADER_SIZE (offsetof(pool, slots))
#define POOL_SLOTS ((int)((BOXROOT__POOL_SIZE - POOL_HEADER_SIZE) / sizeof(void *)))
/* The Boxroot paper's occupancy threshold (§3.2): demote only pools about half full at
   most (BOXROOT__LOW_COUNT = 1024 of 2000 slots), so that about half of a
   young pool's scanning is useful. A pool is low iff its count is below
   POOL_LOW_MARK. */
#define POOL_LOW_MARK (BOXROOT__LOW_COUNT + 1)
/* Fresh slots are threaded BOXROOT_FRESH_BATCH at a time (tunables.h):
   a creation takes the slow path once per batch in a fresh pool, and a
   minor scan reads at most BOXROOT_FRESH_BATCH - 1 never-used slots. */
#define SLOTS_PER_LINE (CACHE_LINE / (int)sizeof(void *))

enum pool_class { CLASS_YOUNG = BOXROOT__CLASS_YOUNG, CLASS_OLD = BOXROOT__CLASS_OLD, CLASS_FREE,
                  CLASS_NONE };

static inline int32_t pool_owner(pool const *p)
{
  return boxroot__load(&p->shared.owner, RELAXED);
}
static inline int32_t pool_class(pool const *p)
{
  return (int32_t)BOXROOT__CLASS_BITS(boxroot__load(&p->shared.cls_word, RELAXED) & BOXROOT__KEY_MASK);
}

static inline pool *pool_of_slot(void *slot)
{
  return (pool *)boxroot__pool_of((boxroot)slot);
}

/* The link stored in a free slot, to the next free slot `next` (or to
   the pool itself at the end of the list), and back. */
static inline void *pool_link(void **next) { return boxroot__link(next); }
static inline void **pool_unlink(void *link) { return boxroot__unlink(link); }

static inline int pool_slot_is_free(pool *p, void *contents)
{
  /* In the pool once bit 0 is dropped, and bit 0 the links' tag. */
  return ((uintptr_t)contents & (~(BOXROOT__POOL_SIZE - 1) | 1))
    == ((uintptr_t)p | BOXROOT__COMPAT_LINK_TAG);
}

static inline void **pool_end(pool *p) { return p->slots + POOL_SLOTS; }

static inline int pool_alloc_count(pool const *p)
{
  return (int)(p->hot.counts & (((uint64_t)1 << BOXROOT__COUNT_BITS) - 1)) - p->hot.count_bias;
}
/* Makes `hot.counts` exceed the slots in use by `bias` (owner only). */
static inline void pool_set_count_bias(pool *p, int bias)
{
  p->hot.counts += (uint64_t)(int64_t)(bias - p->hot.count_bias);
  p->hot.count_bias = bias;
}
static inline long pool_creations(pool const *p)
{
  return (long)(p->hot.counts >> BOXROOT__COUNT_BITS);
}

/* Whether the free list of `p` holds a slot. */
static inline int pool_has_free(pool const *p)
{
  return p->hot.free_link != pool_link((void **)p);
}

static inline int pool_has_room(pool *p)
{
  return pool_has_free(p) || p->fresh < pool_end(p);
}

/* Resets `p` to the never-used state (no slot allocated). */
void boxroot__pool_reset(pool *p);
/* Writes an odd word in every slot of `p` at or above `fresh`: a pool
   fresh from the chunk allocator may hold zeros there (pool.h's
   invariant above; marking.c, M2). */
void boxroot__pool_fill_unused(pool *p);
/* Threads the next batch of fresh slots onto the free list. Returns 0 if
   no fresh slot is left. The owner then resizes the pool's block
   (marking_thread_fresh, marking.h). */
int boxroot__pool_thread_fresh(pool *p);
/* Frees the allocated slots base[i] of `p` for each bit i of `bits`
   (owner, lock held), and returns how many. The free list's head stays
   in a register: built with -fno-strict-aliasing, each store to a slot
   would otherwise force a reload of the pool's header. */
static inline int pool_free_slots(pool *p, void **base, uintptr_t bits)
{
#if BOXROOT__IN_DEBUG_BUILD
  int n = 0;
  for (; bits != 0; bits &= bits - 1, n++)
    boxroot__pool_quarantine(&p->hot, base + __builtin_ctzl(bits));
#else
  void *head = p->hot.free_link;
  int n = 0;
  for (; bits != 0; bits &= bits - 1, n++) {
    void **slot = base + __builtin_ctzl(bits);
    *slot = head;
    head = pool_link(boxroot__free_entry(slot));
  }
  p->hot.free_link = head;
#endif
  p->hot.counts -= (uint64_t)n; /* the count of slots in use (boxroot.h) */
  return n;
}

/* The pool's stamp is in both words of its shared line (marking.c, S;
   boxroot_internal.h): owner_word for boxroot_delete, cls_word for
   boxroot_modify. Only the owner (or its hook) writes them. */
static inline uintptr_t pool_stamp(pool const *p)
{
  return boxroot__owner_word_stamp(boxroot__owner_word_relaxed(&p->shared));
}
/* RELEASE, so that a thread that reads a current stamp (acquire) follows
   the darkening that preceded it. */
static inline void pool_set_stamp(pool *p, uintptr_t stamp)
{
  void const *key = boxroot__owner_word_key(boxroot__owner_word_relaxed(&p->shared));
  boxroot__store(&p->shared.owner_word, boxroot__owner_word_make(key, stamp).bits,
                 RELEASE);
  uintptr_t class_bits = boxroot__load(&p->shared.cls_word, RELAXED) & BOXROOT__KEY_MASK;
  boxroot__store(&p->shared.cls_word, stamp | class_bits, RELEASE);
}
/* A new owner: the stamp is 0, never current. */
static inline void pool_set_owner(pool *p, int32_t owner, void const *owner_key)
{
  boxroot__store(&p->shared.owner, owner, RELAXED);
  boxroot__store(&p->shared.owner_word, boxroot__owner_word_make(owner_key, 0).bits,
                 RELAXED);
  boxroot__store(&p->shared.cls_word,
                 boxroot__load(&p->shared.cls_word, RELAXED) & BOXROOT__KEY_MASK, RELAXED);
}
/* Rings of pools (domain.c, weak.c): circular, doubly linked through
   `next` and `prev`, `*ring` is the head (NULL: empty). A pool on no
   ring has both links NULL. */
static inline void ring_insert(pool **ring, pool *p, int at_front)
{
  BOXROOT__ASSERT(p->next == NULL && p->prev == NULL);
  pool *head = *ring;
  if (head == NULL) {
    p->next = p->prev = p;
    *ring = p;
    return;
  }
  p->next = head;
  p->prev = head->prev;
  head->prev->next = p;
  head->prev = p;
  if (at_front) *ring = p;
}

static inline void ring_remove(pool **ring, pool *p)
{
  if (p->next == p) {
    *ring = NULL;
  } else {
    p->prev->next = p->next;
    p->next->prev = p->prev;
    if (*ring == p) *ring = p->next;
  }
  p->next = p->prev = NULL;
}

static inline void pool_set_class(pool *p, int32_t cls)
{
  boxroot__store(&p->shared.cls_word, pool_stamp(p) | BOXROOT__CLASS_BITS(cls), RELAXED);
}

#endif /* BOXROOT_POOL_H */
