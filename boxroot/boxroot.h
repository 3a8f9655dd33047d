/* boxroot: fast movable GC roots for the OCaml foreign-function interface.

   A boxroot is a pointer to a memory cell that holds an OCaml value and
   that the OCaml GC treats as a root: the value stays alive as long as
   the boxroot does, and the cell is updated when the GC moves the value.
   Unlike a local root, a boxroot can be returned, stored in a foreign
   data structure, moved, and sent to another thread or domain; unlike a
   global root, the library chooses where the cell lives, which makes
   every operation constant-time.

   This API is source-compatible with ocaml-boxroot 0.4: programs written
   against it only need to be relinked.

   Locking rules, in short (OCaml 5: "the domain lock" is the lock of any
   domain; OCaml 4.14: the master lock):
   - boxroot_create, boxroot_modify and boxroot_setup need the lock; without
     it they fail cleanly (NULL / false, errno = EPERM).
   - boxroot_get and dereferencing boxroot_get_ref need the lock, because
     the GC may be moving the value otherwise.
   - boxroot_delete can be called from any thread, with or without any
     lock: from another domain, from a thread the OCaml runtime never saw,
     from a Rust destructor during unwinding.

   Example:

     #include <boxroot/boxroot.h>

     struct callback { boxroot closure; };

     value register_callback(value f) {         // an OCaml external
       struct callback *cb = malloc(sizeof *cb);
       cb->closure = boxroot_create(f);
       if (cb->closure == NULL) caml_failwith(boxroot_error_string());
       ...                                      // keep cb anywhere
     }
     void fire(struct callback *cb) {           // lock held
       caml_callback(boxroot_get(cb->closure), Val_unit);
     }
     void drop(struct callback *cb) {           // any thread, any time
       boxroot_delete(cb->closure);
       free(cb);
     }
*/
#ifndef BOXROOT_H
#define BOXROOT_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <caml/mlvalues.h>
#include "ocaml_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct boxroot_private *boxroot;

/* `boxroot_create(v)` allocates a new root holding `v`. Needs the domain
   lock. Returns NULL on failure, and then `boxroot_error_string()` says
   why and errno is set: EPERM (lock not held), ENOMEM (no memory for a
   new pool), or ENOTSUP (boxroot was torn down or could not be set up).
   A failure leaves every existing root untouched. The first successful
   call sets boxroot up (see `boxroot_setup`). */
static inline boxroot boxroot_create(value v);

/* `boxroot_get(r)` is the value held by `r`: a plain, non-rooted value,
   valid until the next allocation or safe point. Needs the domain lock.
   `boxroot_get_ref(r)` is the address of the cell that holds the value;
   the GC keeps the cell up to date, so the address stays valid until `r`
   is deleted or modified (`boxroot_modify` may move the root). Reading
   through it needs the domain lock; computing it does not. */
static inline value boxroot_get(boxroot r);
static inline value const *boxroot_get_ref(boxroot r);

/* `boxroot_delete(r)` releases the root; its value is no longer kept
   alive (at the latest from the next collection on). Can be called from
   any thread, with or without any domain lock, and never fails. Using
   `r` afterwards is undefined (the debug build reports it). */
static inline void boxroot_delete(boxroot r);

/* `boxroot_modify(&r, v)` makes `r` hold `v`. Needs the domain lock.
   It behaves like deleting `r` and creating it again with `v`, and may
   indeed move the root (at most once per minor collection), so `r` is
   updated in place. Returns false on failure (errno and
   `boxroot_error_string` as for `boxroot_create`); `r` is then unchanged
   and still holds its previous value. */
static inline bool boxroot_modify(boxroot *r, value v);

/* `boxroot_setup()` installs boxroot's GC hooks. Optional: the first
   `boxroot_create` does it. Needs the domain lock (after the OCaml
   runtime has started). Returns true if boxroot is running afterwards.
   Calling it again is harmless. */
bool boxroot_setup(void);

/* `boxroot_teardown()` uninstalls the hooks and gives every pool back to
   the operating system. Every root must have been deleted before: roots
   still alive become dangling. Afterwards `boxroot_create` fails with
   status BOXROOT_TORE_DOWN. Needs the domain lock, and no other domain
   may be using boxroot concurrently. */
void boxroot_teardown(void);

enum {
  BOXROOT_NOT_SETUP,   /* nothing created yet */
  BOXROOT_RUNNING,     /* set up, hooks installed */
  BOXROOT_TORE_DOWN,   /* boxroot_teardown was called */
  BOXROOT_INVALID      /* setup failed (see boxroot_error_string) */
};

/* The state of the library, one of the constants above. */
int boxroot_status(void);

/* A sentence saying why the last failed call of this thread failed, or,
   if none failed, describing the current status. Never NULL; the string
   is static. */
char const *boxroot_error_string(void);

/* Prints statistics on standard output: roots alive, pools by class,
   operations and scanning work (see boxroot_stats.h for the numbers). */
void boxroot_print_stats(void);

/* ---------------------------------------------------------------------
   Implementation of the fast paths. Nothing below is API.

   Roots live in pools of BOXROOT_POOL_SIZE bytes aligned to their size,
   so that a root's address gives its pool by masking. Each domain
   allocates from its own current pool (`boxroot_alloc_cursor`); a pool's
   free slots form a list that ends with the pool's own address, each
   link stored plus 1 so that the GC takes it for an immediate. The
   slow paths (pool.c, domain.c, remote.c) keep these invariants:
   - `boxroot_alloc_cursor[d].pool` is a young pool owned by domain d, or
     `&boxroot_empty_pool`, whose free list is always empty;
   - `owner` is the id of the domain that may change the pool's free list
     without synchronisation, or BOXROOT_NO_OWNER (never a domain id);
     `owner_key` is that domain's key (ocaml_compat.h), or
     BOXROOT_NO_OWNER_KEY, which is neither NULL nor a domain's key;
   - a young pool (`cls == BOXROOT_CLASS_YOUNG`) is scanned at every
     minor collection; any other pool holds no young value. */

/* 16 KiB, the paper's pool size (seed 000 §3.2), kept after comparing
   8..64 KiB with `bench/tune.py pool-size --reps 15 --callgrind` (three
   runs, bench/results/tune/README.md). The fast paths do not depend on
   it (local_roots: the same instructions at every size). 8 KiB is worse:
   globroots +10..14%, create+delete with 10^6 roots +14..20%. 64 KiB
   scans 5..12% faster per slot (minima of three runs; medians overlap),
   but create+delete is +5..7%, and a domain holding a few roots commits
   4x as much (a 64 KiB pool, plus its kept free pools). */
#ifndef BOXROOT_POOL_LOG_SIZE /* overridden by bench/tune.py; swept: 13..16 */
#define BOXROOT_POOL_LOG_SIZE 14
#endif
#define BOXROOT_POOL_SIZE ((uintptr_t)1 << BOXROOT_POOL_LOG_SIZE)
#define BOXROOT_MAX_DOMAINS 4096 /* = OCaml 5's Max_domains_max */
#define BOXROOT_NO_OWNER (-2)
#define BOXROOT_NO_OWNER_KEY ((void const *)boxroot_alloc_cursor)
#define BOXROOT_CLASS_YOUNG 0
/* A pool is "low" when it holds at most BOXROOT_LOW_COUNT roots (about
   half of its slots, see pool.h). A power of two, so that one test in
   boxroot_delete catches both events that may move a pool: the count
   dropping to BOXROOT_LOW_COUNT, and to 0. */
#define BOXROOT_LOW_COUNT ((int)(BOXROOT_POOL_SIZE / 16)) /* 1024 */

#if defined(__GNUC__)
#define BOXROOT_LIKELY(e) __builtin_expect(!!(e), 1)
#define BOXROOT_UNLIKELY(e) __builtin_expect(!!(e), 0)
#else
#define BOXROOT_LIKELY(e) (e)
#define BOXROOT_UNLIKELY(e) (e)
#endif

/* A pool's `counts`: the low BOXROOT_COUNT_BITS bits are the slots in
   use (including delayed frees), the bits above count every creation in
   the pool, for the statistics. One add in boxroot_create updates both;
   deletions subtract 1, and a pool never holds 2^BOXROOT_COUNT_BITS
   slots (pool.c), so the low part never borrows from the high one. */
#define BOXROOT_COUNT_BITS 16
#define BOXROOT_ONE_CREATION (((uint64_t)1 << BOXROOT_COUNT_BITS) + 1)

/* The part of a pool's header that the fast paths use. */
struct boxroot_pool_hot {
  void **free_list;     /* first free slot; the pool itself when none */
  uint64_t counts;      /* slots in use | creations (above) */
  int32_t owner;        /* read by any thread: relaxed atomic access */
  int32_t cls;          /* read by any domain: relaxed atomic access */
  void const *owner_key; /* read by any thread: relaxed atomic access */
};

/* Written only by the thread holding domain d's lock. */
struct boxroot_alloc_cursor {
  struct boxroot_pool_hot *pool;
  /* Statistics: deletions of roots of other domains' pools by this
     domain. Creations are counted in the pools (`counts`), local
     deletions derived (boxroot_get_stats). */
  long deleted_remote;
  char padding[64 - sizeof(void *) - sizeof(long)]; /* a line each */
};

extern struct boxroot_alloc_cursor boxroot_alloc_cursor[BOXROOT_MAX_DOMAINS];

/* Each thread's way to its domain's cursor, so that boxroot_create does
   not compute it: `key` is the key of the domain whose cursor `pool`
   points to (ocaml_compat.h), or BOXROOT_NO_OWNER_KEY (never a lock key,
   nor NULL) until this thread's first creation. boxroot_create trusts
   `pool` only while `key` equals the key of the lock it holds, and its
   slow path resets both (OCaml 5; on 4.14 there is one cursor, at a
   fixed address). A thread's domain never changes in OCaml 5.3
   (systhreads stay in their domain, C threads register with domain 0),
   but the check makes the cache safe even if it did. Initial-exec, like
   the runtime's own Caml_state: no call to reach it. */
#if BOXROOT_MULTICORE
struct boxroot_thread_cursor {
  void const *key;
  struct boxroot_pool_hot *const *pool;
};
extern __thread struct boxroot_thread_cursor boxroot_thread_cursor
  __attribute__((tls_model("initial-exec")));
#endif

boxroot boxroot_create_slow(value v);
void boxroot_delete_local_slow(struct boxroot_pool_hot *pool);
void boxroot_delete_remote(boxroot r);
bool boxroot_modify_slow(boxroot *r, value v);

/* Checked entry points (debug.c): every call validates its argument.
   debug.c itself defines BOXROOT_DEBUG_IMPLEMENTATION instead of
   BOXROOT_DEBUG: it sees these declarations, and builds the checked
   operations on the unchecked fast paths below. */
#if defined(BOXROOT_DEBUG) || defined(BOXROOT_DEBUG_IMPLEMENTATION)
value boxroot_debug_get(boxroot r);
value const *boxroot_debug_get_ref(boxroot r);
void boxroot_debug_delete(boxroot r);
bool boxroot_debug_modify(boxroot *r, value v);
boxroot boxroot_debug_create(value v);
#endif

static inline struct boxroot_pool_hot *boxroot_pool_of(boxroot r)
{
  return (struct boxroot_pool_hot *)((uintptr_t)r & ~(BOXROOT_POOL_SIZE - 1));
}

static inline int32_t boxroot_load_relaxed(int32_t const *p)
{
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Where the current pool of the domain whose lock this thread holds is
   kept, or NULL if it holds none. */
static inline struct boxroot_pool_hot *const *boxroot_locked_cursor(void)
{
#if BOXROOT_MULTICORE
  struct boxroot_thread_cursor const *mine = &boxroot_thread_cursor;
  return mine->key == boxroot_compat_lock_key() ? mine->pool : NULL;
#else
  /* One domain: its cursor is at a fixed address. */
  return boxroot_compat_locked_domain() == 0 ? &boxroot_alloc_cursor[0].pool : NULL;
#endif
}

static inline boxroot boxroot_create(value v)
{
#ifdef BOXROOT_DEBUG
  return boxroot_debug_create(v);
#else
  struct boxroot_pool_hot *const *cursor = boxroot_locked_cursor();
  if (BOXROOT_LIKELY(cursor != NULL)) {
    struct boxroot_pool_hot *pool = *cursor;
    void **slot = pool->free_list;
    if (BOXROOT_LIKELY(slot != (void **)pool)) {
      pool->free_list = (void **)((uintptr_t)*slot - 1); /* pool_unlink */
      pool->counts += BOXROOT_ONE_CREATION;
      *(value *)slot = v;
      return (boxroot)slot;
    }
  }
  return boxroot_create_slow(v);
#endif
}

static inline value boxroot_get(boxroot r)
{
#ifdef BOXROOT_DEBUG
  return boxroot_debug_get(r);
#else
  return *(value const *)r;
#endif
}

static inline value const *boxroot_get_ref(boxroot r)
{
#ifdef BOXROOT_DEBUG
  return boxroot_debug_get_ref(r);
#else
  return (value const *)r;
#endif
}

static inline void boxroot_delete(boxroot r)
{
#ifdef BOXROOT_DEBUG
  boxroot_debug_delete(r);
#else
  struct boxroot_pool_hot *pool = boxroot_pool_of(r);
  void const *key = boxroot_compat_lock_key();
  /* NULL (no lock) is never an owner's key, BOXROOT_NO_OWNER_KEY no
     domain's. */
  if (BOXROOT_LIKELY(key == __atomic_load_n(&pool->owner_key, __ATOMIC_RELAXED))) {
    void **slot = (void **)r;
    /* The deletion barrier (ocaml_compat.h), before the slot is lost. */
    if (BOXROOT_UNLIKELY(boxroot_compat_marking_pools()))
      boxroot__darken_old(*(value *)slot);
    *slot = (void *)((uintptr_t)pool->free_list + 1); /* pool_link */
    pool->free_list = slot;
    uint64_t n = --pool->counts;
    /* Becoming low, or empty (the count is 0 or BOXROOT_LOW_COUNT: pools
       hold fewer than 2 * BOXROOT_LOW_COUNT slots): the pool may move,
       unless it is the current pool, which stays where it is. */
    if (BOXROOT_UNLIKELY((n & (BOXROOT_LOW_COUNT - 1)) == 0)
        && boxroot_alloc_cursor[boxroot_compat_key_domain(key)].pool != pool)
      boxroot_delete_local_slow(pool);
  } else {
    boxroot_delete_remote(r);
  }
#endif
}

static inline bool boxroot_modify(boxroot *r, value v)
{
#ifdef BOXROOT_DEBUG
  return boxroot_debug_modify(r, v);
#else
  /* After seed 003's write barrier: the cheap tests first. A young pool
     is scanned at the next minor collection anyway, and an old pool may
     hold any value that is not young. Only a young value going into an
     old pool needs the slow path, which moves the root to a young pool:
     at most once per minor cycle, since the new pool is young. */
  boxroot root = *r; /* read once: the atomic load below would force a reload */
  struct boxroot_pool_hot *pool = boxroot_pool_of(root);
  if (BOXROOT_UNLIKELY(boxroot_compat_locked_domain() < 0)
      || BOXROOT_UNLIKELY(boxroot_load_relaxed(&pool->cls) != BOXROOT_CLASS_YOUNG
                          && boxroot_compat_is_young(v)))
    return boxroot_modify_slow(r, v);
  /* The deletion barrier (ocaml_compat.h): the old value may be the only
     trace of a value that the marker has yet to see. */
  if (BOXROOT_UNLIKELY(boxroot_compat_marking_pools()))
    boxroot__darken_old(*(value *)root);
  *(value *)root = v;
  return true;
#endif
}

#ifdef __cplusplus
}
#endif

#endif /* BOXROOT_H */
