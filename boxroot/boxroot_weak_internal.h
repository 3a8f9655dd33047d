/* What the inline fast paths of weak roots (boxroot.h) need. NOT API,
   under the rules of boxroot_internal.h (names, layout and build checks).

   Weak roots live in weak pools: pools of the same layout as strong ones
   (pool.h: free list of odd links, counts, owner word, delayed-free
   bitmap), owned by a domain, but on rings of their own (weak.c) that no
   strong scan and no marking directory ever reaches. The protocol that
   makes them weak is in weak.c; what the fast paths rely on:
   - `boxroot__weak_cursor[id]` is domain id's current weak pool, of
     class BOXROOT__CLASS_WEAK_YOUNG, or `boxroot__empty_pool` (written
     by domain id with its lock, or its scan hook);
   - a weak pool's owner word and class word have the stamp 0 (no marker
     reads weak pools: marking.c's stamps are for strong pools), so the
     delete fast path compares the owner word with the key alone;
   - a weak slot holds an OCaml value, or BOXROOT__WEAK_EMPTY once
     cleared: a C constant laid out as a block, which no OCaml value
     equals;
   - while `boxroot__weak_barrier` is 0 a slot's value may be returned as
     it is: no marking needs darkening and no dead value is left in a
     slot; while it is 1, so may a block whose header has the colour bits
     `boxroot__weak_marked` (marked by the current cycle). Both change
     only in stop-the-world sections (OCaml 5), or in the thread holding
     the master lock (OCaml 4.14). */
#ifndef BOXROOT_WEAK_INTERNAL_H
#define BOXROOT_WEAK_INTERNAL_H

#ifdef __cplusplus
extern "C" {
#endif

#define boxroot__weak_cursor BOXROOT__LAYOUT(boxroot__weak_cursor)
#define boxroot__weak_barrier BOXROOT__LAYOUT(boxroot__weak_barrier)
#define boxroot__weak_empty BOXROOT__LAYOUT(boxroot__weak_empty)
#define boxroot__weak_marked BOXROOT__LAYOUT(boxroot__weak_marked)
#define boxroot__weak_create_slow BOXROOT__LAYOUT(boxroot__weak_create_slow)
#define boxroot__weak_get_slow BOXROOT__LAYOUT(boxroot__weak_get_slow)
#define boxroot__weak_modify_slow BOXROOT__LAYOUT(boxroot__weak_modify_slow)
#define boxroot__weak_delete_local_slow BOXROOT__LAYOUT(boxroot__weak_delete_local_slow)
#define boxroot__weak_delete_other BOXROOT__LAYOUT(boxroot__weak_delete_other)

/* Pool classes of weak pools (strong ones: pool.h, all below). */
#define BOXROOT__CLASS_WEAK_YOUNG 8
#define BOXROOT__CLASS_WEAK_OLD 9

extern struct boxroot__pool_hot *boxroot__weak_cursor[BOXROOT__MAX_DOMAINS];
extern uint32_t boxroot__weak_barrier;
/* The colour bits of a header that the current cycle has marked (OCaml
   5's MARKED status, OCaml 4.14's black), valid while the barrier flag
   is up: written with it. */
extern uintptr_t boxroot__weak_marked;
#define BOXROOT__WEAK_COLOUR_MASK ((uintptr_t)3 << 8)
#define BOXROOT__WEAK_INFIX_TAG 249 /* Infix_tag */
/* A block outside the heap, with a header that no marker marks. */
extern uintptr_t const boxroot__weak_empty[2];
#define BOXROOT__WEAK_EMPTY ((value)&boxroot__weak_empty[1])

boxroot_weak boxroot__weak_create_slow(value v);
/* The root's value, or BOXROOT__WEAK_EMPTY once it is gone: returned
   rather than written through a pointer, so that a caller's variable
   does not have to live in memory for the fast path. */
value boxroot__weak_get_slow(boxroot_weak w);
bool boxroot__weak_modify_slow(boxroot_weak *w, value v);
void boxroot__weak_delete_local_slow(struct boxroot__pool_hot *pool);
/* `key` is boxroot__compat_lock_key() of the calling thread. */
void boxroot__weak_delete_other(boxroot_weak w, void const *key);

#define boxroot__debug_weak_create BOXROOT__DEBUG_ENTRY(boxroot__debug_weak_create)
#define boxroot__debug_weak_get BOXROOT__DEBUG_ENTRY(boxroot__debug_weak_get)
#define boxroot__debug_weak_modify BOXROOT__DEBUG_ENTRY(boxroot__debug_weak_modify)
#define boxroot__debug_weak_delete BOXROOT__DEBUG_ENTRY(boxroot__debug_weak_delete)
#define boxroot__debug_weak_create_at BOXROOT__DEBUG_ENTRY(boxroot__debug_weak_create_at)
#if BOXROOT__IN_DEBUG_BUILD
/* As boxroot_internal.h: the debug build frees weak slots into their
   pool's quarantine too (pool.h). */
void boxroot__pool_quarantine(struct boxroot__pool_hot *pool, void **slot);
/* The creation site, as boxroot__debug_create and _create_at
   (boxroot_internal.h). */
boxroot_weak boxroot__debug_weak_create(value v);
boxroot_weak boxroot__debug_weak_create_at(value v, char const *file, size_t file_len,
                                           unsigned line);
bool boxroot__debug_weak_get(boxroot_weak w, value *out);
bool boxroot__debug_weak_modify(boxroot_weak *w, value v);
void boxroot__debug_weak_delete(boxroot_weak w);
#endif

/* The slot of the weak root `w`: a weak root is its slot's entry, as a
   strong one (boxroot__free_slot, boxroot_internal.h). */
static inline value *boxroot__weak_slot_of(boxroot_weak w)
{
  return (value *)boxroot__slot_of((boxroot)w);
}

/* A new weak root in a free slot of the weak pool `pool`, holding `v`,
   or NULL if it has none (the owner, lock held). */
static inline boxroot_weak boxroot__weak_pool_take(struct boxroot__pool_hot *pool, value v)
{
  /* Atomic: the owner's clearing may read the slot of a root that
     another domain modifies (weak.c); not this fresh one, but the slot
     is written the one way. */
  void *link = boxroot__pool_take_link(pool, v, 1);
  return link == NULL ? NULL : (boxroot_weak)boxroot__unlink(link);
}

static inline BOXROOT__DEBUG_ALWAYS_INLINE boxroot_weak boxroot_weak_create(value v)
{
#ifdef BOXROOT_DEBUG
  return boxroot__debug_weak_create(v);
#else
  int dom = boxroot__compat_locked_domain();
  if (BOXROOT__LIKELY(dom >= 0)) {
    boxroot_weak w = boxroot__weak_pool_take(boxroot__weak_cursor[dom], v);
    if (BOXROOT__LIKELY(w != NULL)) return w;
  }
  return boxroot__weak_create_slow(v);
#endif
}

static inline bool boxroot_weak_get(boxroot_weak w, value *out)
{
#ifdef BOXROOT_DEBUG
  return boxroot__debug_weak_get(w, out);
#else
  value v = boxroot__load(boxroot__weak_slot_of(w), RELAXED);
  /* The flag down: any value but the cleared mark, with two tests
     (weak.c, W4). */
  if (BOXROOT__LIKELY(boxroot__load(&boxroot__weak_barrier, RELAXED) == 0
                      && v != BOXROOT__WEAK_EMPTY)) {
    *out = v;
    return true;
  }
  /* Immediates never empty and need no darkening; BOXROOT__WEAK_EMPTY
     is even. */
  if (Is_long(v)) {
    *out = v;
    return true;
  }
  /* A block whose header says the cycle marked it needs no darkening and
     is alive (weak.c, W4); young blocks and static data may take this
     path or the slow one, both right. Not an infix pointer: its header
     is not its closure's. Atomic: another domain may be marking it.
     OCaml 5 only: on 4.14 a naked pointer may have no header. The
     cleared mark needs no test of its own here: its header's colour is
     NOT_MARKABLE, never the marked colour. */
  if (BOXROOT__COMPAT_HEADERS_READABLE) {
    uintptr_t hd = boxroot__load((uintptr_t *)v - 1, RELAXED);
    if (BOXROOT__LIKELY((hd & BOXROOT__WEAK_COLOUR_MASK) == boxroot__load(&boxroot__weak_marked, RELAXED)
                        && (hd & 0xFF) != BOXROOT__WEAK_INFIX_TAG)) {
      *out = v;
      return true;
    }
  }
  v = boxroot__weak_get_slow(w);
  if (v == BOXROOT__WEAK_EMPTY) return false;
  *out = v;
  return true;
#endif
}

static inline void boxroot_weak_delete(boxroot_weak w)
{
#ifdef BOXROOT_DEBUG
  boxroot__debug_weak_delete(w);
#else
  struct boxroot__pool_hot *pool = boxroot__pool_of((boxroot)w);
  void const *key = boxroot__compat_lock_key();
  if (BOXROOT__LIKELY(boxroot__owner_word_relaxed(boxroot__pool_shared(pool)).bits
                      == (uintptr_t)key)) {
    void **slot = (void **)boxroot__weak_slot_of(w);
#if BOXROOT__IN_DEBUG_BUILD
    boxroot__pool_quarantine(pool, slot);
#else
    /* Atomic, as every write of a weak slot (above). */
    boxroot__store(slot, pool->free_link, RELAXED);
    pool->free_link = boxroot__link((void **)w);
#endif
    uint64_t n = --pool->counts;
    /* Low or empty (boxroot_delete's test): the pool may move. */
    if (BOXROOT__UNLIKELY((n & (BOXROOT__LOW_COUNT - 1)) == 0)
        && boxroot__weak_cursor[boxroot__compat_key_domain(key)] != pool)
      boxroot__weak_delete_local_slow(pool);
  } else {
    boxroot__weak_delete_other(w, key);
  }
#endif
}

static inline bool boxroot_weak_modify(boxroot_weak *w, value v)
{
#ifdef BOXROOT_DEBUG
  return boxroot__debug_weak_modify(w, v);
#else
  boxroot_weak root = *w;
  struct boxroot__pool_hot *pool = boxroot__pool_of((boxroot)root);
  /* Only a young value into an old pool moves the root (boxroot_modify
     moves a strong one for an old value too, up to a bound): moving a
     weak root carries its notification along (weak.c, W1). Overwriting
     needs no barrier: a weak root keeps nothing alive, so its old value
     is in no snapshot. */
  if (BOXROOT__UNLIKELY(boxroot__compat_locked_domain() < 0)
      || BOXROOT__UNLIKELY(boxroot__load(&boxroot__pool_shared(pool)->cls_word, RELAXED)
                           != BOXROOT__CLASS_BITS(BOXROOT__CLASS_WEAK_YOUNG)
                           && boxroot__compat_is_young(v)))
    return boxroot__weak_modify_slow(w, v);
  boxroot__store(boxroot__weak_slot_of(root), v, RELAXED);
  return true;
#endif
}

#ifdef __cplusplus
}
#endif

#endif /* BOXROOT_WEAK_INTERNAL_H */
