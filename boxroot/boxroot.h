/* boxroot: fast movable GC roots for the OCaml foreign-function interface.

   A boxroot is a handle to a memory cell that holds an OCaml value and
   that the OCaml GC treats as a root (boxroot_get_ref gives the cell): the value stays alive as long as
   the boxroot does, and the cell is updated when the GC moves the value.
   Unlike a local root, a boxroot can be returned, stored in a foreign
   data structure, moved, and sent to another thread or domain; unlike a
   global root, the library chooses where the cell lives, which makes
   every operation constant-time.

   This API is source-compatible with ocaml-boxroot 0.4: programs written
   against it build unchanged, but their objects must be compiled again
   against this header (the operations are inline: an object compiled
   against another boxroot.h fails to link, see boxroot_internal.h).

   Locking rules, in short (OCaml 5: "the domain lock" is the lock of any
   domain; OCaml 4.14: the master lock):
   - boxroot_create, boxroot_modify and boxroot_setup need the lock; without
     it they fail cleanly (NULL / false, errno = EPERM). Except in the
     debug build (code compiled with BOXROOT_DEBUG, linked with the
     library boxroot.debug), which treats a create or modify without the
     lock (strong or weak, and boxroot_weak_upgrade and
     boxroot_weak_of_boxroot) as the misuse that the API's rule makes it:
     it prints the call and aborts, where a program that ignored the
     NULL / false would crash later, far from the cause (debug.c).
     boxroot_setup fails with EPERM in both builds.
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

/* Platforms: Linux and macOS (README.md, "Platforms"). Windows would need
   another chunk allocator (no mmap), and the fast paths' thread-local
   cursor, which a DLL cannot export. */
#if defined(_WIN32)
#error "boxroot does not support Windows (only Linux and macOS): see boxroot's README.md, Platforms"
#endif

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <caml/mlvalues.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct boxroot_private *boxroot;

/* `boxroot_create(v)` allocates a new root holding `v`. Needs the domain
   lock. Returns NULL on failure, and then `boxroot_error_string()` says
   why and errno is set: EPERM (lock not held; the debug build aborts
   instead, see above), ENOMEM (no memory for a new pool), or ENOTSUP
   (boxroot was torn down or could not be set up).
   A failure leaves every existing root untouched. The first successful
   call sets boxroot up (see `boxroot_setup`). */
static inline boxroot boxroot_create(value v);

/* `boxroot_get(r)` is the value held by `r`: a plain, non-rooted value,
   valid until the next allocation or safe point. Needs the domain lock.
   `boxroot_get_ref(r)` is the address of the cell that holds the value
   (not always `r` itself: read the cell through these two only); the GC
   keeps the cell up to date, so the address stays valid until `r`
   is deleted or modified (`boxroot_modify` may move the root). Reading
   through it needs the domain lock; computing it does not. */
static inline value boxroot_get(boxroot r);
static inline value const *boxroot_get_ref(boxroot r);

/* `boxroot_delete(r)` releases the root; its value is no longer kept
   alive, at the latest from the next collection on (from the second one
   when a thread holding another domain's lock deletes it: such deletions
   are published in groups, see remote.c). Can be called from
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

/* ---- Roots in finalizers ----

   A custom block's finalizer (the `finalize` of its custom_operations)
   may delete roots: boxroot_delete and boxroot_weak_delete, on OCaml
   4.14, 5.3 and 5.5 (boxroot/test/finalizers tests each, with finalizers
   run by minor collections, major sweeps and Gc.compact, on several
   domains). The runtime runs finalizers inside its collections, on a
   thread holding the domain lock (on 4.14, the master lock): in a minor
   collection once the roots are scanned, in the major GC's sweep, and
   on OCaml 5 also while Gc.compact moves blocks; minor collections and
   compaction are stop-the-world sections there. A deletion takes its
   usual paths: in a pool of the finalizer's domain, a store to the
   pool's free list, on OCaml 5 after the deletion barrier while marking
   needs it (a darkening on the domain's own mark stack); a pool that empties moves between the
   domain's lists, or goes back to the allocator of pools. In another
   domain's pool, atomic operations only. The only waits are for
   boxroot's own mutexes, which no thread holds while it waits for the
   runtime, for a collection or for another domain: a finalizer cannot
   deadlock on them.

   Nothing else of this API may be called from a finalizer: not create,
   get (nor reading through get_ref) or modify, strong or weak, nor
   boxroot_weak_upgrade, boxroot_weak_of_boxroot, setup, teardown or the
   statistics. The runtime forbids finalizers to allocate in the OCaml
   heap and to make their block reachable again (OCaml manual,
   "Interfacing C with OCaml", custom blocks), so a finalizer has no
   value to store in a root; and the values it could read are in the
   middle of a collection: on OCaml 5, Gc.compact runs finalizers while
   it moves blocks, before it updates the roots, so boxroot_get would
   return an address that the compaction is about to free. The
   invariants behind these operations (which pools may hold young
   values, the marking stamps, weak clearing: boxroot's sources) are
   argued for threads between collections and for boxroot's scan hooks,
   not for the points inside a collection where each OCaml version runs
   finalizers. The debug build catches such a call only where the
   runtime records that a collection is running: on OCaml 4.14 in minor
   collections, on OCaml 5 in stop-the-world sections (minor collections,
   Gc.compact) and only with OCaml's debug runtime (-runtime-variant d).
   Elsewhere, as in a major slice's sweep, nothing tells a finalizer from
   other code: it runs inside no hook of boxroot's, and the release
   runtime records nowhere that it is running one. */

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

/* `boxroot_debug_report_leaks(out)` prints on `out` (stderr if NULL) the
   roots still alive, grouped by the place that created them, largest
   group first, then the weak roots the same way:

     boxroot: 1010 roots alive, created at 2 sites (largest group first):
           1000  make_handlers+0x4c (myprog.exe)
             10  src/lib.rs:42

   In the debug build only (library boxroot.debug, code compiled with
   BOXROOT_DEBUG), which records where each root was created: a C call
   as the function and offset of its return address (`function+0xOFF
   (module)`: the function's symbol must be exported, e.g. by linking
   with -rdynamic; otherwise `module+0xOFF`, for `addr2line -e module
   0xOFF`), a Rust or C++ call as `file:line` (the `boxroot` crate's
   constructors, ocaml::Root). A root moved by boxroot_modify keeps its
   site. The release build records no sites: it prints one line saying
   so. Any thread, at any time; exact when no other
   thread creates or deletes roots meanwhile. Call it at two points of a
   program and compare, to find what a phase left behind.

   With BOXROOT_DEBUG_LEAKS=1 in the environment, the debug build prints
   this report on stderr at exit (atexit) and at boxroot_teardown. */
void boxroot_debug_report_leaks(FILE *out);

/* ---- Weak roots ----

   A weak root holds an OCaml value without keeping it alive, like a
   pointer of OCaml's own `Weak` module: it stays full while the value is
   reachable otherwise, and becomes empty at the latest at the end of the
   major cycle that follows the one in which the value became
   unreachable. A value read from a full weak root is an ordinary value
   again: storing it elsewhere keeps it alive. Immediates (integers,
   constant constructors) never empty. A value that is young when a minor
   collection runs is promoted, not cleared (as OCaml 5 does with the
   keys of ephemerons), and clears at a later major cycle.

   A distinct type from `boxroot`: the value of a weak root is read only
   through `boxroot_weak_get`, which is the read barrier (weak.c). The
   locking rules are those of strong roots: create, get, modify and
   upgrade need the domain lock (create and modify fail cleanly without,
   as boxroot_create and boxroot_modify do); delete can be called from
   any thread, with or without any lock. An empty weak root is still a
   root: it must be deleted.

   Example, a cache of OCaml values in a foreign structure that does not
   keep them alive:

     struct entry { boxroot_weak cached; };
     value lookup(struct entry *e) {            // lock held
       value v;
       if (boxroot_weak_get(e->cached, &v)) return v;
       ...                                      // recompute it
     }
     void drop(struct entry *e) { boxroot_weak_delete(e->cached); }
*/
typedef struct boxroot_weak_private *boxroot_weak;

/* `boxroot_weak_create(v)` allocates a new weak root holding `v`. Needs
   the domain lock. Returns NULL on failure, with `boxroot_error_string()`
   and errno as for `boxroot_create`. */
static inline boxroot_weak boxroot_weak_create(value v);

/* `boxroot_weak_get(w, &v)` stores the value of `w` in `v` and returns
   true if `w` is full, returns false (leaving `v` alone) once its value
   is dead. Needs the domain lock. The value stored is a plain,
   non-rooted value, as boxroot_get's. */
static inline bool boxroot_weak_get(boxroot_weak w, value *out);

/* `boxroot_weak_modify(&w, v)` makes `w` hold `v` (full again, if it was
   empty). Needs the domain lock. May move the root, as boxroot_modify
   does; returns false on failure, `w` unchanged. */
static inline bool boxroot_weak_modify(boxroot_weak *w, value v);

/* `boxroot_weak_delete(w)` releases the weak root, full or empty. Any
   thread, with or without a lock, as boxroot_delete. */
static inline void boxroot_weak_delete(boxroot_weak w);

/* `boxroot_weak_upgrade(w, &r)`: if `w` is full, creates a strong root
   holding its value in `r` and returns true (`r` is NULL if that
   creation failed: errno and boxroot_error_string as for
   boxroot_create); returns false if `w` is empty. Needs the domain
   lock. `w` is left as it was. */
bool boxroot_weak_upgrade(boxroot_weak w, boxroot *out);

/* `boxroot_weak_of_boxroot(r)`: a new weak root holding the value of the
   strong root `r` (which is left as it was), or NULL on failure, as
   boxroot_weak_create. Needs the domain lock. */
boxroot_weak boxroot_weak_of_boxroot(boxroot r);

/* ---- Weak roots that report their emptying ----

   A notifying weak root is a weak root (every boxroot_weak_ function
   applies to it) that, when the GC empties it, is put on a queue of its
   domain, with a word that the program chose at its creation. The
   program collects the queue when it likes, with the domain lock: the
   GC runs no program code, and collecting costs in proportion to the
   roots that emptied, not to those alive. For a table of weak entries,
   this replaces polling every entry after every major cycle. A plain
   weak root (boxroot_weak_create) costs nothing more for it.

   Example, a table whose entries die with their values (the program's
   cleanup runs where it calls this, e.g. after its own work):

     void sweep_table(struct table *t) {        // lock held
       boxroot_weak w; uintptr_t i;
       while (boxroot_weak_next_emptied(&w, &i)) {
         boxroot_weak_delete(t->entries[i].key);  // == w
         table_remove(t, i);
       }
     }

   The full program: examples/c-weak-table. */

/* `boxroot_weak_create_notifying(v, word)`: a new weak root holding `v`,
   as boxroot_weak_create (lock, failures: NULL with errno and
   boxroot_error_string), that reports its emptying with `word`. */
boxroot_weak boxroot_weak_create_notifying(value v, uintptr_t word);

/* `boxroot_weak_next_emptied(&w, &word)`: the next notifying root of the
   calling domain (the one whose lock it holds) that the GC emptied, in
   `w`, with its word; false once there is none (or without the lock:
   errno EPERM; the debug build aborts). The calls after a major cycle
   report the roots it emptied, each at most once, in no particular order. The program still owns the root: it stays allocated,
   and empty, until the program deletes it (or refills it with
   boxroot_weak_modify, after which it reports its next emptying).
   Exactly:
   - each emptying of a root by the GC is reported once, unless the
     program deletes the root before (a deleted root is never reported)
     or refills it before (its notice is then dropped: the root is full
     when the program would see it; it reports again if it empties
     again). A root reported is empty at the time of the report, unless
     another thread refills it meanwhile;
   - the roots of a domain that terminated are reported by the domain
     that adopts its roots, from its next minor collection on (the last
     domain keeps its own);
   - a root moved by boxroot_weak_modify keeps its word; it is then of
     the domain that moved it (a root is of the domain that created it,
     otherwise). */
bool boxroot_weak_next_emptied(boxroot_weak *w, uintptr_t *word);

/* The word given when `w` was created; `w` must be a notifying root
   (0 for another weak root; the debug build aborts). Any thread that may
   use `w`. */
uintptr_t boxroot_weak_notifying_word(boxroot_weak w);

#ifdef __cplusplus
}
#endif

/* The inline definitions of the functions above, and what they need.
   Not API: nothing declared there may be used by programs. */
#include "boxroot_internal.h"
#include "boxroot_weak_internal.h"

#endif /* BOXROOT_H */
