/* The differences between OCaml 4.14 and OCaml 5 that boxroot depends on.
   Every test of the OCaml version in boxroot is in this header (what the
   inline fast paths and the scanner need) or in compat_ocaml5.c and
   compat_ocaml4.c (the runtime's hooks, OCaml 4.14's lock tracking, the
   per-thread cursor cache); the rest of boxroot is version-independent.

   - Who holds the runtime lock. OCaml 5 has one lock per domain and
     clears the thread-local `Caml_state` when a thread releases it
     (caml_release_domain_lock, also on Thread.yield and thread exit), so
     "this thread holds a domain lock" is `Caml_state_opt != NULL`, and the
     domain is `Caml_state->id` (< Max_domains_max = 4096).
     OCaml 4.14 has a single master lock, a global `Caml_state`, and no
     way to ask who holds the lock: boxroot tracks it per thread through
     the blocking-section hooks (compat_ocaml4.c), and there is one domain, 0.
     The tracking protocol (4.14):
     - Each installation of our hooks installs an enter hook of its own,
       one of BOXROOT__COMPAT_ENTER_HOOKS distinct functions, taken in
       turn (compat_ocaml4.c); the first installation takes the first.
       Each calls the hook it replaced: a library that chains to ours
       and that ours then chain to again calls an earlier one of ours.
     - `boxroot__compat_thread_token` (thread-local) is set by our leave
       hook, right after the thread acquires the lock, to the enter hook
       of the current installation if that one is installed, and to 1
       (not a function) by our enter hooks right before the thread
       releases the lock (0: never seen by our hooks). A thread counts as
       holding the lock when its token is the installed enter hook: one
       thread-local load, one load of the hook and one compare on the
       fast paths, which tell at once that the thread took the lock
       through our hooks and that it can only release it through them.
     - So replacing our enter hook makes every thread count as not
       holding the lock until ours are installed again, and installing
       them again voids the tokens recorded before (the thread that held
       the lock when Thread was initialised may have released it since
       through systhreads' hook): a new enter hook is never equal to an
       old token.
     - Paths that hand the lock over without the hooks: Thread.yield (the
       yielding thread holds the lock before and after, and runs nothing
       in between), caml_c_thread_register/unregister (no boxroot call
       while they hold the lock directly). A thread started by
       Thread.create takes the lock through caml_leave_blocking_section.
     - Acquisitions the hooks miss: threads already waiting inside
       systhreads' leave hook when ours are installed. They count as not
       holding the lock (deletions take the remote path, always safe)
       until a creation's slow path asks the runtime, which records the
       current holder's stack (compat_ocaml4.c, boxroot__compat_lock_held_slow);
       that record is not trusted for a thread whose last release went
       through our enter hook (the record outlives the release).
     - systhreads' Thread initialisation overwrites both hooks without
       chaining. If that happens after boxroot_setup, no thread counts as
       holding the lock until ours are installed again, at the next scan
       or creation slow path, with the next enter hook.
     - After BOXROOT__COMPAT_ENTER_HOOKS installations (the hooks
       replaced that many times by other code: systhreads replaces them
       once), the enter hooks are used up: ours are not installed again,
       no thread counts as holding the lock on the fast paths, and every
       creation takes the slow path, which asks the runtime (below), and
       every deletion the remote path. Slower, never wrong.
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
   - The scanning hook's signature and the scanning action's (below, and
     compat_ocaml5.c / compat_ocaml4.c).
   - Domain incarnations. OCaml 5 reuses a terminated domain's id for a
     new domain; `unique_id` tells them apart (domain.c).
   - Weak roots (weak.h): which phase of the major GC asks them to
     darken or lets them find dead values, and the hooks that clear them
     (major slices on OCaml 5, caml_major_gc_hook on OCaml 4.14).
   - Marking. OCaml 5 marks each pool as one block, incrementally, which
     needs a deletion barrier in boxroot_delete and boxroot_modify while
     a pool may still be on a mark stack (marking.c). OCaml 4.14's
     caml_darken ignores blocks outside its heap (page table), so pools
     are marked slot by slot at the cycle start and need no barrier: the
     test is the constant 0 there.
   - The per-thread cursor cache (OCaml 5): each thread's way to its
     domain's cursor, so that boxroot_create does not compute it. `key`
     is the key of the domain whose cursor `pool` points to, or
     BOXROOT__NO_OWNER_KEY (never a lock key, nor NULL) until this
     thread's first creation. boxroot_create trusts `pool` only while
     `key` equals the key of the lock it holds, and its slow path resets
     both. A thread's domain never changes in OCaml 5.3 (systhreads stay
     in their domain, C threads register with domain 0), but 5.5 lets a C
     thread register with any domain (caml_c_thread_register_in_domain):
     the check keeps the cache safe. Initial-exec, like the runtime's own
     Caml_state: no call to reach it. OCaml 4.14 has one cursor, at a
     fixed address. */
#ifndef BOXROOT_OCAML_COMPAT_H
#define BOXROOT_OCAML_COMPAT_H

#include <caml/version.h>
#include <caml/mlvalues.h>
#include <stdint.h>
#include <caml/address_class.h>
#include "atomics.h"

#if OCAML_VERSION_MAJOR >= 5
#define BOXROOT_MULTICORE 1
#include <caml/domain_state.h>
#else
#define BOXROOT_MULTICORE 0
#if OCAML_VERSION_MAJOR < 4 || OCAML_VERSION_MINOR < 14
#error "boxroot needs OCaml 4.14 or later (supported versions: README.md)"
#endif
#endif
/* Versions after the last one tested (README.md) may have changed the
   hooks boxroot relies on: a warning, not an error, so that they can be
   tried. */
#if OCAML_VERSION_MAJOR > 5 || (OCAML_VERSION_MAJOR == 5 && OCAML_VERSION_MINOR > 5)
#warning "boxroot is untested on this OCaml version (newer than 5.5, see README.md)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct boxroot__pool_hot;

static inline int boxroot__compat_is_young(value v)
{
  return Is_block(v) && Is_young(v);
}
/* The same without the test of Is_block, for boxroot_modify: an
   immediate whose bits fall in the minor heaps' range only takes the
   slow path, which is right for any value. */
static inline int boxroot__compat_may_be_young(value v)
{
#if BOXROOT_MULTICORE
  return (char *)v < (char *)caml_minor_heaps_end && (char *)v > (char *)caml_minor_heaps_start;
#else
  return (char *)v < (char *)Caml_state_field(young_end)
    && (char *)v > (char *)Caml_state_field(young_start);
#endif
}

#if BOXROOT_MULTICORE

/* The runtime's thread-local `caml_state`, declared again initial-exec
   (from C; C++ keeps the runtime's declaration): each read of it on the
   fast paths is then one load from the thread pointer instead of a
   general-dynamic access, which costs three instructions and, in
   position-independent code, a call that forces callers to keep a stack
   frame (bench/tools/callgrind.sh: boxroot_create 18 -> 13 instructions,
   local_roots' callee variant from 1.04-1.05x upstream's instructions to
   0.92x). The same constraint as boxroot's own thread cursor below: the
   runtime must be in the program's static TLS (linked, not dlopen'ed). */
#if defined(HAS_FULL_THREAD_VARIABLES) && !defined(__cplusplus)
extern __thread caml_domain_state *caml_state __attribute__((tls_model("initial-exec")));
#endif

/* The id of the domain whose lock this thread holds, or -1. */
static inline int boxroot__compat_locked_domain(void)
{
  caml_domain_state *state = Caml_state_opt;
  if (state == NULL) return -1;
  /* Domain ids are never negative: telling the compiler lets it reduce
     `boxroot__compat_locked_domain() >= 0` to the NULL test above. */
  if (state->id < 0) __builtin_unreachable();
  return state->id;
}

/* The unique id of the domain this thread runs on (lock held). As wide
   as the runtime's counter: it never wraps in a program's life. */
static inline uintnat boxroot__compat_domain_unique_id(void)
{
  return Caml_state->unique_id;
}

/* Whether this thread holds a domain lock, for the slow paths. */
static inline int boxroot__compat_lock_held_slow(void)
{
  return boxroot__compat_locked_domain() >= 0;
}
/* The id of the domain whose lock this thread holds, for a thread that
   holds one (boxroot__compat_lock_held_slow). */
static inline int boxroot__compat_held_domain(void)
{
  return Caml_state->id;
}

/* Domain keys: a pointer that identifies a domain, so that the delete
   fast path tells "the lock of the pool's owner is held" with one
   comparison: the key of the domain whose lock this thread holds, or
   NULL. OCaml 5: the domain's state, which the runtime allocates once
   per domain id and reuses for later domains with that id. */
static inline void const *boxroot__compat_lock_key(void)
{
  return Caml_state_opt;
}
/* The key of the domain this thread runs for (lock held, or its scan). */
static inline void const *boxroot__compat_domain_key(void)
{
  return Caml_state;
}
static inline int boxroot__compat_key_domain(void const *key)
{
  return ((caml_domain_state const *)key)->id;
}

/* Pools are marked as blocks, which needs the deletion barrier
   (marking.c; the stamps: boxroot_internal.h). */
#define BOXROOT__COMPAT_DELETION_BARRIER 1

/* Domains own pools and hand them over (domain.c): boxroot_delete asks
   the pool who owns it. */
#define BOXROOT__COMPAT_ONE_DOMAIN 0

/* The runtime's marker reads a pool's slots as a block's fields
   (marking.c): free slots' links are odd, immediates to it (pool.h). */
#define BOXROOT__COMPAT_LINK_TAG 1

/* A root, and the free list's entry for a slot, are the slot's own
   address (boxroot_internal.h, boxroot__free_slot): boxroot_delete's lock
   test reads the pool's owner word, which no test of boxroot_create
   could stand for. */
#define BOXROOT__COMPAT_FREE_BIAS 0

/* Every block has a readable header (no naked pointers): the weak read
   barrier may test a value's colour inline (boxroot_weak_internal.h). */
#define BOXROOT__COMPAT_HEADERS_READABLE 1

/* The per-thread cursor cache (above; defined in compat_ocaml5.c). */
struct boxroot__thread_cursor {
  void const *key;
  struct boxroot__pool_hot *const *pool;
};
extern __thread struct boxroot__thread_cursor boxroot__thread_cursor
  __attribute__((tls_model("initial-exec")));

/* Whether this thread holds a domain lock and knows where that domain's
   current pool is kept: boxroot__compat_cached_cursor(). Two macros, not
   one that returns NULL, so that boxroot_create tests one condition. */
#define boxroot__compat_cursor_known() \
  (boxroot__thread_cursor.key == boxroot__compat_lock_key())
#define boxroot__compat_cached_cursor() (boxroot__thread_cursor.pool)

#else /* OCaml 4.14 */

/* Lock tracking, maintained in compat_ocaml4.c (protocol above). The
   token is initial-exec, as OCaml 5's thread cursor above: no call to
   reach it. */
#define BOXROOT__COMPAT_ENTER_HOOKS 64
typedef void (*boxroot__compat_hook)(void);
extern __thread boxroot__compat_hook boxroot__compat_thread_token
  __attribute__((tls_model("initial-exec")));
/* Declared by <caml/signals.h> only under CAML_INTERNALS. */
CAMLextern void (*caml_enter_blocking_section_hook)(void);

static inline int boxroot__compat_lock_held(void)
{
  /* Only the lock holder writes the hook, and a thread writes its own
     token. A thread that does not hold the lock but whose token is one
     of our enter hooks released the lock through another hook, which it
     called (after installing it, or after taking the lock): whatever the
     order of the two reads, it reads that hook or a later one, never its
     token. */
  return boxroot__compat_thread_token == caml_enter_blocking_section_hook;
}

static inline int boxroot__compat_locked_domain(void)
{
  return boxroot__compat_lock_held() ? 0 : -1;
}

/* Whether our blocking-section hooks are the installed ones (tests). */
int boxroot__compat_blocking_hooks_are_ours(void);

static inline uintnat boxroot__compat_domain_unique_id(void) { return 0; }

/* Domain keys (see above): domain 0's is the address of a word of its
   own. */
extern int boxroot__compat_domain0_key;
static inline void const *boxroot__compat_lock_key(void)
{
  return boxroot__compat_lock_held() ? &boxroot__compat_domain0_key : NULL;
}
static inline void const *boxroot__compat_domain_key(void)
{
  return &boxroot__compat_domain0_key;
}
static inline int boxroot__compat_key_domain(void const *key)
{
  (void)key;
  return 0;
}

/* Marking: slot by slot, at the cycle start; no barrier (see above). */
#define BOXROOT__COMPAT_DELETION_BARRIER 0

/* One domain, which never terminates: it owns every pool that holds a
   root (pools change owner only when a domain terminates, domain.c), with
   stamp 0, so boxroot_delete need not read the pool to know that the
   lock holder owns it. */
#define BOXROOT__COMPAT_ONE_DOMAIN 1

/* Nothing reads a pool as a block: free slots' links are the entries'
   addresses themselves (pool.h), an instruction less in boxroot_create
   and in boxroot_delete. */
#define BOXROOT__COMPAT_LINK_TAG 0

/* A root, and the free list's entry for a slot, are the address of the
   word before the slot (boxroot_internal.h, boxroot__free_slot), so that
   a boxroot_delete right after a boxroot_create reuses its lock test. */
#define BOXROOT__COMPAT_FREE_BIAS 1

/* Naked pointers are allowed: only the page table says whether a value
   has a header (the weak read barrier asks in its slow path). */
#define BOXROOT__COMPAT_HEADERS_READABLE 0

/* Whether this thread holds the master lock, for the slow paths of
   functions that need it: asks the runtime when the hooks cannot tell,
   and then (re)installs the hooks (compat_ocaml4.c). It may then hold
   the lock while the fast paths' test says not (our enter hooks used
   up): the slow paths ask this one, and then take the domain from
   boxroot__compat_held_domain(). */
int boxroot__compat_lock_held_slow(void);
static inline int boxroot__compat_held_domain(void) { return 0; }

/* One domain: its cursor is at a fixed address. */
#define boxroot__compat_cursor_known() boxroot__compat_lock_held()
#define boxroot__compat_cached_cursor() (&boxroot__alloc_cursor[0].pool)

#endif

/* Points this thread's cursor cache at domain `id`'s cursor; the thread
   holds that domain's lock. Nothing to do on OCaml 4.14. */
void boxroot__compat_point_thread_cursor(int id);

/* Whether the runtime records that this thread is inside a collection,
   for the debug build's check of calls from custom blocks' finalizers
   (boxroot.h, "Roots in finalizers"): on OCaml 4.14, a minor collection
   (the runtime's `in_minor_collection`, in every runtime); on OCaml 5.3
   and later, a stop-the-world section (its `inside_stw_handler`, which
   only the debug runtime, -runtime-variant d, maintains: 0 otherwise).
   Never true between collections, so never a false report; finalizers
   run by a major slice's sweep go unseen. Earlier OCaml 5: 0. */
int boxroot__compat_in_collection(void);

/* The runtime's state of one domain, as the marking code passes it
   around: a caml_domain_state on OCaml 5, dereferenced only in
   compat_ocaml5.c; NULL on OCaml 4.14. A type of its own, so that no
   other pointer can be passed for it. */
typedef struct boxroot__domain_state boxroot__domain_state;

/* Marking pools as blocks (marking.c says why and how). OCaml 5 only;
   on OCaml 4.14 boxroot__compat_marks_pools_as_blocks() is 0 and the
   others are never called.
   - boxroot__compat_state(): the state of the domain whose lock this
     thread holds (passed to the scan hook as `domain_state`);
   - boxroot__compat_darken_slots(state, from, to): darkens the value of
     each slot in [from, to) that is a block of the major heap, on
     `state`'s mark stack (as caml_modify does);
   - boxroot__compat_unmarked_header(wosize): the header of a block of
     tag 0 and size `wosize` that the current cycle has yet to mark;
   - boxroot__compat_allocation_header(wosize): the same with the colour
     the runtime gives the blocks it allocates now;
   - boxroot__compat_marked_header(wosize): the same with the colour of
     the blocks the current cycle has marked, which markers skip;
   - boxroot__compat_header_is_marked(header),
     boxroot__compat_header_is_unmarked(header): whether the header has
     the current cycle's MARKED (UNMARKED) colour;
   - boxroot__compat_header_wosize(header): its size;
   - boxroot__compat_header_with_wosize(header, wosize): the header with
     another size;
   - boxroot__compat_marking_in_progress(): whether the current cycle's
     roots have been darkened and its marking is not over, so that
     darkening a value is allowed and needed;
   - boxroot__compat_darken_block(state, header, wosize): writes such a
     header at `header`, and darkens the block that follows it;
   - boxroot__compat_domain_id(state), boxroot__compat_marking_done(state);
   - boxroot__compat_cycle(): the number of major cycles started so far;
   - boxroot__compat_in_main_marking_phase(): whether the runtime may
     still be marking from the roots of the current cycle;
   - boxroot__compat_finish_major_cycle(): completes the current cycle. */
int boxroot__compat_marks_pools_as_blocks(void);
boxroot__domain_state *boxroot__compat_state(void);
void boxroot__compat_darken_slots(boxroot__domain_state *state, void **from, void **to);
uintptr_t boxroot__compat_unmarked_header(uintptr_t wosize);
uintptr_t boxroot__compat_allocation_header(uintptr_t wosize);
uintptr_t boxroot__compat_marked_header(uintptr_t wosize);
int boxroot__compat_header_is_marked(uintptr_t header);
int boxroot__compat_header_is_unmarked(uintptr_t header);
uintptr_t boxroot__compat_header_wosize(uintptr_t header);
uintptr_t boxroot__compat_header_with_wosize(uintptr_t header, uintptr_t wosize);
int boxroot__compat_marking_in_progress(void);
void boxroot__compat_darken_block(boxroot__domain_state *state, uintptr_t *header, uintptr_t wosize);
int boxroot__compat_domain_id(boxroot__domain_state *state);
int boxroot__compat_marking_done(boxroot__domain_state *state);
uint64_t boxroot__compat_cycle(void);
int boxroot__compat_in_main_marking_phase(void);
void boxroot__compat_finish_major_cycle(void);

/* Installs and removes boxroot's runtime hooks (domain lock held): the
   root-scanning hook, which calls boxroot__scan_domain and
   boxroot__weak_scan; on OCaml 5 the domain-termination hook and the
   major slice hooks (weak roots: weak.h); on OCaml 4.14 the
   blocking-section hooks and caml_major_gc_hook (weak roots). */
void boxroot__compat_install_hooks(void);
void boxroot__compat_remove_hooks(void);

/* ---- Reading every domain's state, for the statistics (api.c) ----
   boxroot__compat_visit_domains(each_domain, shared, data) calls
   `each_domain(id, data)` once for every domain id (0 to
   BOXROOT__MAX_DOMAINS - 1), each while no thread can change the state
   that domain `id` owns (domain.h), then `shared(data)` once, and returns
   1 when every call has finished. All of them happen while no domain
   runs boxroot operations, so together they see one instant (deletions
   by threads holding no domain lock go on). The calls may run in
   parallel on several threads. Returns 0, calling nothing, if this
   thread holds no domain lock: without it, neither way below is safe.
   - OCaml 5: a stop-the-world section, retried until this domain leads
     one. Each running domain visits its own id (on its thread, or on its
     backup thread while in a blocking section); the leader visits the
     ids no domain runs on (none can start or end during the section)
     and calls `shared`; then the domains wait for each other before
     leaving. Like an allocation, it may let a pending collection run
     first. Not from within a collection (a scan hook, a finaliser).
   - OCaml 4.14: one domain; the master lock excludes every other thread
     that changes boxroot's state, so the calls are made in turn. The
     lock test is boxroot__compat_lock_held_slow's, with its gaps, but
     leaves the hooks as they are. */
int boxroot__compat_visit_domains(void (*each_domain)(int id, void *data),
                                  void (*shared)(void *data), void *data);

#ifdef __cplusplus
}
#endif

/* ---- What the scanner needs (scan.c), inside the library only ---- */
#ifdef CAML_INTERNALS
#include <caml/roots.h>
#include <caml/major_gc.h>
#if BOXROOT_MULTICORE
/* A scanning action and its closure data. */
typedef struct { scanning_action f; void *data; } boxroot__scanner;
#define BOXROOT__APPLY(sc, v, slot) ((sc).f((sc).data, (v), (volatile value *)(slot)))
#define BOXROOT__DARKEN(sc, v, slot) caml_darken((sc).data, (v), (volatile value *)(slot))
#define BOXROOT__YOUNG_START ((uintnat)caml_minor_heaps_start)
#define BOXROOT__YOUNG_END ((uintnat)caml_minor_heaps_end)
#else
#include <caml/minor_gc.h>
typedef struct { scanning_action f; } boxroot__scanner;
#define BOXROOT__APPLY(sc, v, slot) ((sc).f((v), (value *)(slot)))
#define BOXROOT__DARKEN(sc, v, slot) caml_darken((v), (value *)(slot))
#define BOXROOT__YOUNG_START ((uintnat)Caml_state_field(young_start))
#define BOXROOT__YOUNG_END ((uintnat)Caml_state_field(young_end))
#endif
/* Whether the scanning action is the major GC's darkening (cycle start). */
#define BOXROOT__IS_DARKEN(sc) ((sc).f == (scanning_action)caml_darken)
/* Scans domain `id`'s roots with `sc`, for a minor collection or not
   (scan.c); called by the scanning hook of compat_ocaml{4,5}.c.
   `domain_state`: the state of domain `id` on OCaml 5, NULL on 4.14. */
void boxroot__scan_domain(int id, boxroot__scanner sc, int minor, boxroot__domain_state *domain_state);
#endif

#endif /* BOXROOT_OCAML_COMPAT_H */
