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

#ifdef __cplusplus
}
#endif

/* The inline definitions of the functions above, and what they need.
   Not API: nothing declared there may be used by programs. */
#include "boxroot_internal.h"

#endif /* BOXROOT_H */
