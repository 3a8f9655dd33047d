/* The differences between OCaml 4.14 and OCaml 5 that boxroot depends on,
   in one place. Everything else in boxroot is version-independent.

   - Who holds the runtime lock. OCaml 5 has one lock per domain and
     clears the thread-local `Caml_state` when a thread releases it
     (caml_release_domain_lock, also on Thread.yield and thread exit), so
     "this thread holds a domain lock" is `Caml_state_opt != NULL`, and the
     domain is `Caml_state->id` (< Max_domains_max = 4096).
     OCaml 4.14 has a single master lock, a global `Caml_state`, and no
     way to ask who holds the lock: boxroot tracks it per thread through
     the blocking-section hooks (scan.c), and there is one domain, 0.
     The tracking protocol (4.14):
     - `boxroot_compat_thread_epoch` (thread-local) is set to the current
       `boxroot_compat_lock_epoch` by our leave hook right after the
       thread acquires the lock, and to -1 by our enter hook right before
       it releases it (0: never seen by our hooks). A thread counts as
       holding the lock when its epoch is the current one and our enter
       hook is still installed: two loads and compares more than a flag,
       on the fast paths (4.14 only).
     - Paths that hand the lock over without the hooks: Thread.yield (the
       yielding thread holds the lock before and after, and runs nothing
       in between), caml_c_thread_register/unregister (no boxroot call
       while they hold the lock directly). A thread started by
       Thread.create takes the lock through caml_leave_blocking_section.
     - Acquisitions the hooks miss: threads already waiting inside
       systhreads' leave hook when ours are installed. They count as not
       holding the lock (deletions take the remote path, always safe)
       until a creation's slow path asks the runtime, which records the
       current holder's stack (scan.c, boxroot_compat_lock_held_slow);
       that record is not trusted for a thread whose last release went
       through our enter hook (the record outlives the release).
     - systhreads' Thread initialisation overwrites both hooks without
       chaining. If that happens after boxroot_setup, no thread counts as
       holding the lock until ours are installed again, at the next scan
       or creation slow path. Re-installing bumps the global epoch, which
       voids the epochs recorded before (the thread that held the lock
       when Thread was initialised may have released it since through
       systhreads' hook).
     - Known gap: a thread started by Thread.create releases the lock for
       the last time in systhreads' caml_thread_stop, without the hook. Its
       thread-local destructors (C++/Rust) still count as holding it, so a
       boxroot_delete there would take the local path without the lock.
     - Before setup, and after systhreads replaced the hooks, the slow
       path's runtime record can be stale for a thread that released the
       lock through systhreads' hook: only a boxroot_create or
       boxroot_modify called without the lock, against the API's rule,
       would then succeed instead of failing with EPERM.
   - Youth. `Is_young` compares against the reserved area of all minor
     heaps in OCaml 5, against the one minor heap in OCaml 4.14.
   - The scanning hook's signature (see scan.c).
   - Domain incarnations. OCaml 5 reuses a terminated domain's id for a
     new domain; `unique_id` tells them apart (domain.c).
   - Marking. OCaml 5 marks each pool as one block, incrementally, which
     needs a deletion barrier in boxroot_delete and boxroot_modify while
     a pool may still be on a mark stack (marking.c). OCaml 4.14's
     caml_darken ignores blocks outside its heap (page table), so pools
     are marked slot by slot at the cycle start and need no barrier: the
     test below is the constant 0 there. */
#ifndef BOXROOT_OCAML_COMPAT_H
#define BOXROOT_OCAML_COMPAT_H

#include <caml/version.h>
#include <caml/mlvalues.h>
#include <caml/address_class.h>

#if OCAML_VERSION_MAJOR >= 5
#define BOXROOT_MULTICORE 1
#include <caml/domain_state.h>
#else
#define BOXROOT_MULTICORE 0
#if OCAML_VERSION_MAJOR < 4 || OCAML_VERSION_MINOR < 14
#error "boxroot needs OCaml 4.14 or later"
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if BOXROOT_MULTICORE

/* The id of the domain whose lock this thread holds, or -1. */
static inline int boxroot_compat_locked_domain(void)
{
  caml_domain_state *state = Caml_state_opt;
  if (state == NULL) return -1;
  /* Domain ids are never negative: telling the compiler lets it reduce
     `boxroot_compat_locked_domain() >= 0` to the NULL test above. */
  if (state->id < 0) __builtin_unreachable();
  return state->id;
}

static inline int boxroot_compat_is_young(value v)
{
  return Is_block(v) && Is_young(v);
}

/* The unique id of the domain this thread runs on (lock held). */
static inline int boxroot_compat_domain_unique_id(void)
{
  return Caml_state->unique_id;
}

/* Whether this thread holds a domain lock, for the slow paths. */
static inline int boxroot_compat_lock_held_slow(void)
{
  return boxroot_compat_locked_domain() >= 0;
}

/* Domain keys: a pointer that identifies a domain, so that the delete
   fast path tells "the lock of the pool's owner is held" with one
   comparison: the key of the domain whose lock this thread holds, or
   NULL. OCaml 5: the domain's state, which the runtime allocates once
   per domain id and reuses for later domains with that id. */
static inline void const *boxroot_compat_lock_key(void)
{
  return Caml_state_opt;
}
/* The key of the domain this thread runs for (lock held, or its scan). */
static inline void const *boxroot_compat_domain_key(void)
{
  return Caml_state;
}
static inline int boxroot_compat_key_domain(void const *key)
{
  return ((caml_domain_state const *)key)->id;
}

/* Nonzero while some pool may be on a mark stack (marking.c). Written
   only in stop-the-world sections, read by threads holding a domain
   lock, which the sections' barriers order. */
extern int boxroot__marking_pools;
static inline int boxroot_compat_marking_pools(void)
{
#ifdef BOXROOT_TESTING_NO_DELETION_BARRIER /* a broken build for tests */
  return 0;
#else
  return __atomic_load_n(&boxroot__marking_pools, __ATOMIC_RELAXED);
#endif
}
/* The deletion barrier's slow path: darkens `old` (as caml_modify does
   the old value of a field) on the mark stack of the domain whose lock
   this thread holds, or of `domain_state`. */
void boxroot__darken_old(value old);
void boxroot__darken_old_for(void *domain_state, value old);

#else /* OCaml 4.14 */

/* Lock tracking, maintained in scan.c (protocol above). */
extern __thread int boxroot_compat_thread_epoch;
extern int boxroot_compat_lock_epoch;
void boxroot_compat_enter_blocking_hook(void);
/* Declared by <caml/signals.h> only under CAML_INTERNALS. */
CAMLextern void (*caml_enter_blocking_section_hook)(void);

static inline int boxroot_compat_locked_domain(void)
{
  return boxroot_compat_thread_epoch == boxroot_compat_lock_epoch
      && caml_enter_blocking_section_hook == boxroot_compat_enter_blocking_hook
    ? 0 : -1;
}

static inline int boxroot_compat_is_young(value v)
{
  return Is_block(v) && Is_young(v);
}

static inline int boxroot_compat_domain_unique_id(void) { return 0; }

/* Domain keys (see above): domain 0's is the address of the epoch. */
static inline void const *boxroot_compat_lock_key(void)
{
  return boxroot_compat_locked_domain() == 0 ? &boxroot_compat_lock_epoch : NULL;
}
static inline void const *boxroot_compat_domain_key(void)
{
  return &boxroot_compat_lock_epoch;
}
static inline int boxroot_compat_key_domain(void const *key)
{
  (void)key;
  return 0;
}

/* Marking: slot by slot, at the cycle start; no barrier (see above). */
static inline int boxroot_compat_marking_pools(void) { return 0; }
static inline void boxroot__darken_old(value old) { (void)old; }

/* Whether this thread holds the master lock, for the slow paths of
   functions that need it: asks the runtime when the hooks cannot tell,
   and then (re)installs the hooks (scan.c). */
int boxroot_compat_lock_held_slow(void);

#endif

#ifdef __cplusplus
}
#endif

#endif /* BOXROOT_OCAML_COMPAT_H */
