/* What the inline fast paths of boxroot.h need. NOT API: the names here
   (prefix `boxroot__` / `BOXROOT__`) may change with any release, and a
   program must not use them. Installed only because boxroot.h's inline
   functions are compiled into the program.

   Roots live in pools of BOXROOT__POOL_SIZE bytes aligned to their size,
   so that a root's address gives its pool by masking. Each domain
   allocates from its own current pool (its alloc cursor); a pool's free
   slots form a list that ends with the pool's own address (pool.h says
   how its links are written). The slow paths
   (pool.c, domain.c, remote.c) keep these invariants:
   - a domain's cursor points to a young pool owned by that domain, or to
     `boxroot__empty_pool`, whose free list is always empty;
   - `owner` is the id of the domain that may change the pool's free list
     without synchronisation, or BOXROOT__NO_OWNER (never a domain id);
     the key in `owner_word` is that domain's (ocaml_compat.h), or
     BOXROOT__NO_OWNER_KEY, which is neither NULL nor a domain's key;
   - a young pool (`cls == BOXROOT__CLASS_YOUNG`) is scanned at every
     minor collection; any other pool holds no young value.

   Layout check: the exported symbols that these inline functions use are
   named after the layout they were compiled against (BOXROOT__LAYOUT), so
   a program compiled with another pool size than the library, or against
   another version's layout, fails to link instead of running with wrong
   masks.

   Build check: the same names also say which build of the library they
   belong to, so that code compiled for one build fails to link against
   the other, with a name that says what to do:
   - code compiled without BOXROOT_DEBUG inlines the unchecked fast paths,
     whose symbols only the release library (`boxroot`) defines, as
     `..._layout10_pool14__compiled_without_BOXROOT_DEBUG__link_boxroot_not_boxroot_debug`
     (the debug library names its own copies otherwise, BOXROOT__BUILD);
   - code compiled with BOXROOT_DEBUG calls the checked entry points,
     which only `boxroot.debug` defines, as
     `boxroot__debug_delete__compiled_with_BOXROOT_DEBUG__link_boxroot_debug_not_boxroot`.
   A link error rather than a message at run time, for the first case: it
   comes at build time, before any code runs, whichever paths the program
   takes (a run-time test could only fire on a call that reaches the
   library, while the fast paths that would skip the checks do not);
   and it costs the fast paths nothing, whereas a run-time test of the
   build would be one more instruction on every operation. It is the
   check an FFI user already knows from ABI mismatches, as for the
   layout. */
#ifndef BOXROOT_INTERNAL_H
#define BOXROOT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <caml/mlvalues.h>
#include "atomics.h"
#include "ocaml_compat.h"
#include "tunables.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether this is the debug build's code: the library boxroot.debug, or
   a program compiled with BOXROOT_DEBUG. */
#if defined(BOXROOT_DEBUG) || defined(BOXROOT__DEBUG_IMPLEMENTATION)
#define BOXROOT__IN_DEBUG_BUILD 1
#else
#define BOXROOT__IN_DEBUG_BUILD 0
#endif

/* Bump BOXROOT__LAYOUT_VERSION whenever a structure below, or what a
   root points to (boxroot__slot_of), changes. */
#define BOXROOT__LAYOUT_VERSION 10
/* The build (above): the debug library's own files are compiled with
   BOXROOT_DEBUG, except debug.c (BOXROOT__DEBUG_IMPLEMENTATION). */
#if BOXROOT__IN_DEBUG_BUILD
#define BOXROOT__BUILD __inside_boxroot_debug
#else
#define BOXROOT__BUILD __compiled_without_BOXROOT_DEBUG__link_boxroot_not_boxroot_debug
#endif
#define BOXROOT__PASTE5(a, b, c, d, e) a##b##c##d##e
#define BOXROOT__LAYOUT_NAME(name, version, pool_log, build) \
  BOXROOT__PASTE5(name, _layout, version, _pool##pool_log, build)
#define BOXROOT__LAYOUT_NAME_(name, version, pool_log, build) \
  BOXROOT__LAYOUT_NAME(name, version, pool_log, build)
#define BOXROOT__LAYOUT(name) \
  BOXROOT__LAYOUT_NAME_(name, BOXROOT__LAYOUT_VERSION, BOXROOT_POOL_LOG_SIZE, BOXROOT__BUILD)
/* The checked entry points (debug.c), named for the build check above. */
#define BOXROOT__DEBUG_ENTRY(name) \
  name##__compiled_with_BOXROOT_DEBUG__link_boxroot_debug_not_boxroot

#define boxroot__alloc_cursor BOXROOT__LAYOUT(boxroot__alloc_cursor)
#define boxroot__create_slow BOXROOT__LAYOUT(boxroot__create_slow)
#define boxroot__delete_local_slow BOXROOT__LAYOUT(boxroot__delete_local_slow)
#define boxroot__delete_remote BOXROOT__LAYOUT(boxroot__delete_remote)
#define boxroot__modify_slow BOXROOT__LAYOUT(boxroot__modify_slow)
#define boxroot__delete_other BOXROOT__LAYOUT(boxroot__delete_other)
#define boxroot__marking_stamp BOXROOT__LAYOUT(boxroot__marking_stamp)

#define BOXROOT__POOL_SIZE ((uintptr_t)1 << BOXROOT_POOL_LOG_SIZE)
#define BOXROOT__MAX_DOMAINS 4096 /* = OCaml 5's Max_domains_max */
#define BOXROOT__CACHE_LINE 64
#define BOXROOT__NO_OWNER (-2)
#define BOXROOT__NO_OWNER_KEY ((void const *)boxroot__alloc_cursor)
#define BOXROOT__CLASS_YOUNG 0
#define BOXROOT__CLASS_OLD 1
/* How a pool's class is written in the low bits of its `cls_word`.
   boxroot_modify subtracts the current stamp from the word: 0 is then a
   young pool with its stamp current, which the subtraction's own flag
   tells, so that modifying a root in a young pool tests no more than its
   lock and that flag; an old pool takes one compare more, then the new
   value's youth and the bound on moves (boxroot_modify). */
#define BOXROOT__CLASS_BITS(cls) ((uintptr_t)(cls))
/* A pool is "low" when it holds at most BOXROOT__LOW_COUNT roots (about
   half of its slots, see pool.h). A power of two, so that one test in
   boxroot_delete catches both events that may move a pool: the count
   dropping to BOXROOT__LOW_COUNT, and to 0. */
#define BOXROOT__LOW_COUNT ((int)(BOXROOT__POOL_SIZE / 16)) /* 1024 */

#if defined(__GNUC__)
#define BOXROOT__LIKELY(e) __builtin_expect(!!(e), 1)
#define BOXROOT__UNLIKELY(e) __builtin_expect(!!(e), 0)
#define BOXROOT__COLD_CALL __attribute__((cold, noinline, unused))
#else
#define BOXROOT__LIKELY(e) (e)
#define BOXROOT__UNLIKELY(e) (e)
#define BOXROOT__COLD_CALL
#endif

/* A pool's `counts`: the low BOXROOT__COUNT_BITS bits are the slots in
   use (including delayed frees), the bits above count every creation in
   the pool, for the statistics. One add in boxroot_create updates both;
   deletions subtract 1, and a pool never holds 2^BOXROOT__COUNT_BITS
   slots (pool.c), so the low part never borrows from the high one. */
#define BOXROOT__COUNT_BITS 16
#define BOXROOT__ONE_CREATION (((uint64_t)1 << BOXROOT__COUNT_BITS) + 1)

/* The parts of a pool's header that the fast paths use, on two cache
   lines (pool.h). The owner writes the first at every creation and local
   deletion; the second changes only with the pool's owner, class or
   stamp (and holds remote.c's `pending` flag), so that other threads
   read it (a remote boxroot_delete tests `owner_word`, any domain's
   boxroot_modify reads `cls_word`) without taking the first line away from the owner's cache
   at every root. */
struct boxroot__pool_hot {
  /* pool.h's fields, which the fast paths never write, first: the two
     that boxroot_create writes then lie at offsets 8 and 16 of the pool,
     where GCC knows that they cannot be an 8-byte global variable, even
     with OCaml's -fno-strict-aliasing (see boxroot__free_slot). */
  int32_t count_bias;
  uint16_t quarantine_oldest, quarantine_newest;
  /* The link to the first free slot's entry, as a free slot holds it
     (boxroot__link, below); the link to the pool itself when none. So a
     creation stores the link that it loads from the slot as it is, and
     a deletion the link that it loads from here: on OCaml 5, where
     links are odd, neither converts one between a load and the store
     that the next operation waits for (bench/plain on OCaml 5.5,
     10,000 creations in a row: 1.88 ns per creation against 2.57 with
     the first entry kept here, upstream 1.96). */
  void *free_link;
  uint64_t counts;      /* slots in use | creations (above) */
};
/* After the owner's line and the delayed-free bitmap (pool.h). */
#define BOXROOT__POOL_SHARED_OFFSET (BOXROOT__CACHE_LINE + BOXROOT__POOL_SIZE / 64)
/* Written by the owner or its hook, and when the pool changes owner
   (under domains_lock, or in the adopting domain's scan); read by any
   thread. Relaxed, except the stamp (below): a thread that finds its own
   key reads what its domain wrote (domain lock, stop-the-world), and one
   that reads a stale owner is covered by remote.c (D3). The stamp is
   written with release after the darkening it stands for, and read
   with acquire where it lets a deletion or a modification skip the
   barrier (publication, atomics.h; marking.c, M3). */
struct boxroot__pool_shared {
  int32_t owner;        /* read by any thread: relaxed atomic access */
  /* The pool's class bits (BOXROOT__CLASS_BITS) below
     BOXROOT__STAMP_SHIFT, and the same stamp as `owner_word` above them:
     boxroot_modify tests both with one subtraction. Read by any domain:
     atomic access. */
  uintptr_t cls_word;
  /* Read by any thread: atomic access, only through the functions below. */
  uintptr_t owner_word;
};

/* A pool's owner word: the owner's key (ocaml_compat.h) in the bits
   below BOXROOT__STAMP_SHIFT, and the pool's stamp above them. The
   delete fast path compares the whole word with the caller's key and the
   current marking stamp (marking.c, rule S): a pool whose stamp is not
   current sends its owner to the slow path, which runs the deletion
   barrier first if marking may still read the pool. A cycle start changes
   the current stamp, which switches the barrier on for every pool at
   once without touching any. Keys are user-space addresses, below 2^48
   (x86-64, AArch64 without address tagging: domain.c checks). Only the
   owner, or its scan hook, writes the word (pool.h). On OCaml 4.14 there
   is no barrier (BOXROOT__COMPAT_DELETION_BARRIER): the stamps are all 0. */
typedef struct { uintptr_t bits; } boxroot__owner_word;
#define BOXROOT__STAMP_SHIFT 48
#define BOXROOT__KEY_MASK (((uintptr_t)1 << BOXROOT__STAMP_SHIFT) - 1)

#if BOXROOT__COMPAT_DELETION_BARRIER
/* The current marking stamp, shifted into place; written only by the
   scan hooks at a cycle start (marking.c), so a thread holding a domain
   lock reads a value that cannot change under it (relaxed, or a plain
   load: a stop-the-world word, atomics.h). */
extern uintptr_t boxroot__marking_stamp;
static inline uintptr_t boxroot__current_stamp(void)
{
  return boxroot__load(&boxroot__marking_stamp, RELAXED);
}
/* The same for a thread that holds a domain lock (atomics.h,
   boxroot__load_locked). */
static inline uintptr_t boxroot__current_stamp_locked(void)
{
  return boxroot__load_locked(&boxroot__marking_stamp);
}
#else
static inline uintptr_t boxroot__current_stamp(void) { return 0; }
static inline uintptr_t boxroot__current_stamp_locked(void) { return 0; }
#endif

/* Not compound literals: this header is C++ too. */
static inline boxroot__owner_word boxroot__owner_word_relaxed(struct boxroot__pool_shared const *s)
{
  boxroot__owner_word w;
  w.bits = boxroot__load(&s->owner_word, RELAXED);
  return w;
}
/* A current stamp read with acquire follows the owner's darkening of the
   pool's values (marking.c, M3). */
static inline boxroot__owner_word boxroot__owner_word_acquire(struct boxroot__pool_shared const *s)
{
  boxroot__owner_word w;
  w.bits = boxroot__load(&s->owner_word, ACQUIRE);
  return w;
}
static inline boxroot__owner_word boxroot__owner_word_make(void const *key, uintptr_t stamp)
{
  boxroot__owner_word w;
  w.bits = (uintptr_t)key | stamp;
  return w;
}
/* `bits` minus the current stamp, read as boxroot__current_stamp does.
   On x86-64 the load is the subtraction's operand, an instruction less
   on every deletion: an aligned load of a word is atomic there, and
   compilers keep __atomic loads out of other instructions. Not under
   ThreadSanitizer, which must see the load. */
#if defined(__SANITIZE_THREAD__)
#define BOXROOT__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BOXROOT__TSAN 1
#endif
#endif
static inline uintptr_t boxroot__minus_current_stamp(uintptr_t bits)
{
#if BOXROOT__COMPAT_DELETION_BARRIER && defined(__x86_64__) && defined(__GNUC__) \
    && !defined(BOXROOT__TSAN)
  __asm__("subq %1, %0" : "+r"(bits) : "m"(boxroot__marking_stamp) : "cc");
  return bits;
#else
  return bits - boxroot__current_stamp();
#endif
}

/* Whether `key` owns the pool and its stamp is current. The stamp is
   subtracted from the word rather than or'ed into the key (the same, as
   their bits do not overlap): the key is then used once, by the compare,
   which reads it from memory. */
static inline int boxroot__owner_word_is(boxroot__owner_word w, void const *key)
{
  return boxroot__minus_current_stamp(w.bits) == (uintptr_t)key;
}
static inline uintptr_t boxroot__owner_word_stamp(boxroot__owner_word w)
{
  return w.bits & ~BOXROOT__KEY_MASK;
}
static inline void const *boxroot__owner_word_key(boxroot__owner_word w)
{
  return (void const *)(w.bits & BOXROOT__KEY_MASK);
}
/* Whether the pool's stamp is current (acquire). The constant first, so
   that OCaml 4.14 does not even load the word. */
static inline int boxroot__pool_stamp_current(struct boxroot__pool_shared const *s)
{
  /* One xor and one shift: the key's bits drop out. */
  return !BOXROOT__COMPAT_DELETION_BARRIER
    || ((boxroot__owner_word_acquire(s).bits ^ boxroot__current_stamp())
        >> BOXROOT__STAMP_SHIFT) == 0;
}

/* Written only by the thread holding domain d's lock, or by d's scan
   hook (stop-the-world); a line each. */
struct boxroot__alloc_cursor {
  struct boxroot__pool_hot *pool;
  /* Deletions by this domain of other domains' roots not yet published
     to their pool (remote.c): the bits `run_bits` of the delayed-free
     word at `run_word`; none if `run_bits` is 0. */
  void *run_word;
  uintptr_t run_bits;
  /* Statistics: deletions of roots of other domains' pools by this
     domain, counted when published (remote.c). Creations are counted in
     the pools (`counts`), local deletions derived (boxroot_get_stats). */
  long deleted_remote;
  /* Roots that boxroot_modify moved out of an old pool for an old value
     since this domain's last minor scan (api.c, BOXROOT_OLD_VALUE_MOVES). */
  long old_value_moves;
  char padding[BOXROOT__CACHE_LINE - 3 * sizeof(void *) - 2 * sizeof(long)];
};

extern struct boxroot__alloc_cursor boxroot__alloc_cursor[BOXROOT__MAX_DOMAINS];

/* The new root's link (boxroot__link), or NULL on failure:
   boxroot_create converts once, after its fast path and this one meet. */
void *boxroot__create_slow(value v);
void boxroot__delete_local_slow(struct boxroot__pool_hot *pool);
/* `key` is boxroot__compat_lock_key() of the calling thread. */
void boxroot__delete_remote(boxroot r, void const *key);
/* boxroot_modify of a root that is not in a young pool whose stamp is
   current, or without the lock (api.c). */
bool boxroot__modify_slow(boxroot *r, value v);
/* boxroot_delete when the calling thread is not known to own the pool:
   it finds its lock key itself, so that the fast path needs the key only
   for its comparison. */
void boxroot__delete_other(boxroot r);
/* boxroot_modify calls boxroot__modify_slow through this cold function,
   never inlined: a call to a cold function makes its path unlikely,
   which lays the fast path out straight where branch hints alone did not
   (bench/tools/callgrind.sh), without making the library's functions
   themselves cold, that is optimised for size. It takes the root by
   value and returns it, moved or not, or NULL on failure, rather than
   take the address of the caller's variable: an address passed to a
   call would keep that variable in memory for the whole loop around a
   boxroot_modify, to be reloaded at every iteration, where a value lets
   it stay in a register. */
static BOXROOT__COLD_CALL boxroot boxroot__modify_slow_cold(boxroot root, value v)
{
  return boxroot__modify_slow(&root, v) ? root : NULL;
}
/* boxroot_delete's calls, cold for the same layout: on OCaml 4.14,
   bench ops' create+delete with another root alive takes 37 instructions
   instead of 39 (upstream: 39), local_roots' callee variant 5 fewer per
   call at depth 1 (bench/tools/callgrind.sh); OCaml 5's counts do not
   change. */
static BOXROOT__COLD_CALL void boxroot__delete_other_cold(boxroot r)
{
  boxroot__delete_other(r);
}
static BOXROOT__COLD_CALL void boxroot__delete_local_slow_cold(struct boxroot__pool_hot *pool)
{
  boxroot__delete_local_slow(pool);
}
/* What boxroot_modify returns after them, `moved` being their result. */
static inline bool boxroot__modify_update(boxroot *r, boxroot moved)
{
  if (moved == NULL) return false;
  *r = moved;
  return true;
}

/* Checked entry points (debug.c): every call validates its argument.
   debug.c itself defines BOXROOT__DEBUG_IMPLEMENTATION instead of
   BOXROOT_DEBUG: it sees these declarations, and builds the checked
   operations on the unchecked fast paths below. */
#define boxroot__debug_get BOXROOT__DEBUG_ENTRY(boxroot__debug_get)
#define boxroot__debug_get_ref BOXROOT__DEBUG_ENTRY(boxroot__debug_get_ref)
#define boxroot__debug_delete BOXROOT__DEBUG_ENTRY(boxroot__debug_delete)
#define boxroot__debug_modify BOXROOT__DEBUG_ENTRY(boxroot__debug_modify)
#define boxroot__debug_create BOXROOT__DEBUG_ENTRY(boxroot__debug_create)
#define boxroot__debug_create_at BOXROOT__DEBUG_ENTRY(boxroot__debug_create_at)
#if BOXROOT__IN_DEBUG_BUILD
value boxroot__debug_get(boxroot r);
value const *boxroot__debug_get_ref(boxroot r);
void boxroot__debug_delete(boxroot r);
bool boxroot__debug_modify(boxroot *r, value v);
/* Records its return address as the root's creation site
   (boxroot_debug_report_leaks): boxroot_create is always inlined in the
   debug build, so that this is the address of the caller's call, at any
   optimisation level. */
boxroot boxroot__debug_create(value v);
/* boxroot_create with the caller's source location as the creation site,
   for bindings (Rust's #[track_caller], C++'s default arguments): `file`
   (`file_len` bytes, no NUL needed) must live as long as the program. */
boxroot boxroot__debug_create_at(value v, char const *file, size_t file_len,
                                 unsigned line);
#endif
#if defined(BOXROOT_DEBUG) && defined(__GNUC__)
#define BOXROOT__DEBUG_ALWAYS_INLINE __attribute__((always_inline))
#else
#define BOXROOT__DEBUG_ALWAYS_INLINE
#endif

static inline struct boxroot__pool_hot *boxroot__pool_of(boxroot r)
{
  return (struct boxroot__pool_hot *)((uintptr_t)r & ~(BOXROOT__POOL_SIZE - 1));
}

static inline struct boxroot__pool_shared *boxroot__pool_shared(struct boxroot__pool_hot *p)
{
  return (struct boxroot__pool_shared *)((char *)p + BOXROOT__POOL_SHARED_OFFSET);
}

/* A root is its slot's entry: the address BOXROOT__COMPAT_FREE_BIAS
   words before the slot (ocaml_compat.h: 1 on OCaml 4.14, 0 on OCaml 5),
   and the free list links free slots by their entries too; the pool's
   own address ends the list. boxroot_get_ref adds the bias back.
   - With a bias, boxroot_create writes the slot at offset 8 from the
     entry it read, and GCC knows that such a store cannot change an
     8-byte global (C pointer arithmetic stays within one object, which
     then holds more than 8 bytes): on OCaml 4.14, the runtime's enter
     hook and the thread's token that the lock test compares
     (ocaml_compat.h). A boxroot_delete that follows the creation at once
     then reuses the creation's lock test instead of reading both again,
     as a store at offset 0 forced it to (bench/plain, create and delete
     at once: 28 instructions against upstream's 26, now 25).
   - The root is the entry, not the slot, so that neither boxroot_create
     nor boxroot_delete converts one to the other: a root created in one
     call and deleted in another (local_roots' caller variant, OCaml
     4.14) would take an instruction at each end, one more per call than
     upstream (bench/tools/per_op.py). */
static inline void **boxroot__free_slot(void **entry)
{
  return entry + BOXROOT__COMPAT_FREE_BIAS;
}
static inline void **boxroot__free_entry(void **slot)
{
  return slot - BOXROOT__COMPAT_FREE_BIAS;
}
/* The slot of root `r`, and the root of slot `slot`. */
static inline void **boxroot__slot_of(boxroot r)
{
  return boxroot__free_slot((void **)r);
}
static inline boxroot boxroot__root_of(void **slot)
{
  return (boxroot)boxroot__free_entry(slot);
}

/* The link that a free slot holds to the next free slot's entry `next`
   (the pool itself at the end of the list), and back (pool.h): the
   address plus BOXROOT__COMPAT_LINK_TAG (ocaml_compat.h). */
static inline void *boxroot__link(void **next)
{
  return (char *)next + BOXROOT__COMPAT_LINK_TAG;
}
static inline void **boxroot__unlink(void *link)
{
  return (void **)((char *)link - BOXROOT__COMPAT_LINK_TAG);
}

/* Stores `v` into a slot being handed out (boxroot__pool_take_link). */
static inline void boxroot__slot_fill(void **slot, value v, int atomic)
{
  if (atomic) boxroot__store((value *)slot, v, RELAXED);
  else *(value *)slot = v;
}

/* The link to a free slot of `pool` (boxroot__link of its entry, the
   root), the slot taken off its free list, counted and holding `v`, or
   NULL if the pool has none. The owner, lock held. `atomic`, a
   constant: whether `v` is stored with an atomic store (weak roots, whose
   slots the owner's clearing may read: weak.c) or a plain one. One
   function, not a taker of slots that the callers then fill: split so,
   GCC's register allocation cost bench ops' create+delete an
   instruction on OCaml 4.14 (bench/tools/per_op.py). */
static inline void *boxroot__pool_take_link(struct boxroot__pool_hot *pool, value v, int atomic)
{
  void *head = pool->free_link;
  void **entry = boxroot__unlink(head);
  if (BOXROOT__UNLIKELY(entry == (void **)pool)) return NULL;
  void **slot = boxroot__free_slot(entry);
  void *link = *slot;
  /* With a bias (OCaml 4.14), the slot is filled first, then the pool's
     header: the other order, which takes 3 instructions less per call in
     local_roots' caller variant there, made bench/plain's 10,000
     creations in a row slower when the machine runs them at its slow
     speed (interleaved, addresses fixed: 3.38-3.42 ns per pair against
     3.24-3.30). Without one, the header first: the slot first took 3 to
     4 instructions more per call in local_roots on OCaml 5.3
     (bench/tools/per_op.py). */
  if (BOXROOT__COMPAT_FREE_BIAS) boxroot__slot_fill(slot, v, atomic);
  pool->free_link = link;
  pool->counts += BOXROOT__ONE_CREATION;
  if (!BOXROOT__COMPAT_FREE_BIAS) boxroot__slot_fill(slot, v, atomic);
  return head;
}

static inline BOXROOT__DEBUG_ALWAYS_INLINE boxroot boxroot_create(value v)
{
#ifdef BOXROOT_DEBUG
  return boxroot__debug_create(v);
#else
  /* Whether this thread holds a lock and knows where its domain's
     current pool is kept (ocaml_compat.h). */
  void *link = NULL;
  if (BOXROOT__LIKELY(boxroot__compat_cursor_known()))
    link = boxroot__pool_take_link(*boxroot__compat_cached_cursor(), v, 0);
  if (BOXROOT__UNLIKELY(link == NULL)) {
    link = boxroot__create_slow(v);
    if (link == NULL) return NULL;
  }
  /* Converted once the two paths meet, so that a boxroot_delete inlined
     after this call pushes back the link that the fast path loaded,
     rather than converting the root back on the chain of loads and
     stores from one operation to the next (OCaml 5, bench/plain's
     create and delete at once: 31 instructions against 32 with the
     conversion in the fast path; on OCaml 4.14 a link is the entry). */
  return (boxroot)boxroot__unlink(link);
#endif
}

static inline value boxroot_get(boxroot r)
{
#ifdef BOXROOT_DEBUG
  return boxroot__debug_get(r);
#else
  return *(value const *)boxroot__slot_of(r);
#endif
}

static inline value const *boxroot_get_ref(boxroot r)
{
#ifdef BOXROOT_DEBUG
  return boxroot__debug_get_ref(r);
#else
  return (value const *)boxroot__slot_of(r);
#endif
}

#if BOXROOT__IN_DEBUG_BUILD
/* The debug build frees a slot into its pool's quarantine (pool.h)
   rather than onto its free list. The owner, lock held. */
void boxroot__pool_quarantine(struct boxroot__pool_hot *pool, void **slot);
#endif

/* The owner of `pool`, read by a thread holding its lock. OCaml 4.14:
   domain 0, which owns every pool that holds a root (ocaml_compat.h),
   without reading the pool. GCC moves no load across an atomic load,
   even a relaxed one, so the read kept the lock test's operands from
   being reused (local_roots' callee variant: an instruction more per
   call, bench/tools/callgrind.sh). */
static inline int boxroot__pool_owner_locked(struct boxroot__pool_hot *pool)
{
  if (BOXROOT__COMPAT_ONE_DOMAIN) return 0;
  return boxroot__load(&boxroot__pool_shared(pool)->owner, RELAXED);
}

/* Deletion by the owner (lock held) of the root `entry`
   (boxroot__free_entry). */
static inline void boxroot__delete_local(struct boxroot__pool_hot *pool, void **entry)
{
  void **slot = boxroot__free_slot(entry);
#if BOXROOT__IN_DEBUG_BUILD
  boxroot__pool_quarantine(pool, slot);
#else
  *slot = pool->free_link;
  pool->free_link = boxroot__link(entry);
#endif
  /* Computed in a register, not decremented in memory and read back:
     one instruction more than that, but the reread waits for the store
     (bench/plain, 10,000 deletions in a row: 1.40 against 1.91 ns). */
  uint64_t n = --pool->counts;
  /* Becoming low, or empty (the count is 0 or BOXROOT__LOW_COUNT: pools
     hold fewer than 2 * BOXROOT__LOW_COUNT slots): the pool may move,
     unless it is the current pool, which stays where it is (its count is
     biased, so that it does not come here at every emptying). */
  if (BOXROOT__UNLIKELY((n & (BOXROOT__LOW_COUNT - 1)) == 0)
      && boxroot__alloc_cursor[boxroot__pool_owner_locked(pool)].pool != pool)
    boxroot__delete_local_slow_cold(pool);
}

/* Whether this thread may delete locally from the pool with shared
   header `s`: it holds the lock of its owner, and the pool's stamp is
   current (marking.c, rule S). NULL (no lock) is never an owner's key,
   BOXROOT__NO_OWNER_KEY no domain's. */
static inline int boxroot__deletes_locally(struct boxroot__pool_shared const *s)
{
  void const *key = boxroot__compat_lock_key();
  if (BOXROOT__COMPAT_ONE_DOMAIN) return key != NULL; /* ocaml_compat.h */
  return boxroot__owner_word_is(boxroot__owner_word_relaxed(s), key);
}

static inline void boxroot_delete(boxroot r)
{
#ifdef BOXROOT_DEBUG
  boxroot__debug_delete(r);
#else
  struct boxroot__pool_hot *pool = boxroot__pool_of(r);
  if (BOXROOT__LIKELY(boxroot__deletes_locally(boxroot__pool_shared(pool)))) {
    boxroot__delete_local(pool, (void **)r);
  } else {
    /* A remote deletion, or the owner's deletion in a pool whose stamp
       is not current (marking.c). */
    boxroot__delete_other_cold(r);
  }
#endif
}

/* Whether boxroot_modify may still move a root out of an old pool for
   an old value in this minor cycle (lock held). Yes if this thread does
   not know its domain's cursor: the slow path then counts. */
static inline int boxroot__old_value_may_move(void)
{
  if (!boxroot__compat_cursor_known()) return 1;
  struct boxroot__alloc_cursor const *c =
    (struct boxroot__alloc_cursor const *)boxroot__compat_cached_cursor();
  return c->old_value_moves < BOXROOT_OLD_VALUE_MOVES;
}

/* The class word of a root's pool, as boxroot_modify reads it (lock
   held). OCaml 5: ACQUIRE, as other domains write it: a current stamp
   follows the owner's darkening (marking.c, M3). OCaml 4.14: only the
   master lock's holder writes it, so a plain load (atomics.h), which the
   compare then takes as its operand: an instruction less. */
static inline uintptr_t boxroot__modify_cls_word(struct boxroot__pool_shared const *s)
{
#if BOXROOT__COMPAT_ONE_DOMAIN
  return boxroot__load_locked(&s->cls_word);
#else
  return boxroot__load(&s->cls_word, ACQUIRE);
#endif
}

static inline bool boxroot_modify(boxroot *r, value v)
{
#ifdef BOXROOT_DEBUG
  return boxroot__debug_modify(r, v);
#else
  /* Shaped like the optimised caml_modify write barrier ("Making mutable
     state faster: optimizing the caml_modify write barrier"): the cheap
     tests first. A young pool is scanned at the next minor collection,
     so it may hold any value; an old pool holds no young value, and a
     young one moves the root to a young pool (at most once per minor
     cycle, since the new pool is young). An old value moves it too, up
     to a bound per domain and minor cycle (tunables.h says why:
     BOXROOT_OLD_VALUE_MOVES), then stays in place. The deletion barrier
     (marking.c): a pool whose stamp is not current fails the first
     compare. */
  boxroot root = *r; /* read once: the atomic loads below would force a reload */
  struct boxroot__pool_shared *shared = boxroot__pool_shared(boxroot__pool_of(root));
  if (BOXROOT__UNLIKELY(boxroot__compat_locked_domain() < 0))
    return boxroot__modify_update(r, boxroot__modify_slow_cold(root, v));
  /* The stamp bits cancel out only if the pool's stamp is current; then
     the rest is the class bits (BOXROOT__CLASS_BITS). */
  uintptr_t cls = boxroot__modify_cls_word(shared) - boxroot__current_stamp_locked();
  /* Out of line, so that the young pool's store follows without a
     taken branch (a loop modifying a fresh root: bench/plain). */
  if (BOXROOT__UNLIKELY(cls != BOXROOT__CLASS_BITS(BOXROOT__CLASS_YOUNG))) {
    /* A stamp that is not current, or a pool of no class (orphaned,
       domain.c). Neither exists on OCaml 4.14 (no stamps, one domain,
       which never terminates): there a pool that is not young is old,
       and the test is left out. */
    if (((BOXROOT__COMPAT_DELETION_BARRIER || !BOXROOT__COMPAT_ONE_DOMAIN)
         && cls != BOXROOT__CLASS_BITS(BOXROOT__CLASS_OLD))
        || boxroot__compat_may_be_young(v) || boxroot__old_value_may_move())
      return boxroot__modify_update(r, boxroot__modify_slow_cold(root, v));
  }
  /* Atomic: the owner may be reading the slot (marking.c). */
  boxroot__store((value *)boxroot__slot_of(root), v, RELAXED);
  return true;
#endif
}

#ifdef __cplusplus
}
#endif

#endif /* BOXROOT_INTERNAL_H */
