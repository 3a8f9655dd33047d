/* Out-of-line entry points: boxroot_create, boxroot_get, boxroot_get_ref,
   boxroot_delete and boxroot_modify, and the weak roots' create, get,
   modify and delete, as exported symbols, for callers that
   cannot use the `static inline` fast paths of boxroot.h (Rust through
   ocaml-boxroot-sys, other languages' FFIs, dlsym); and, not API, the
   lock test that such bindings need (boxroot__thread_holds_domain_lock)
   and the same create, delete and modify under names that say where a
   root's cell lies (below).

   Each one is the inline fast path of boxroot.h compiled once, so it has
   exactly the semantics documented there. C and C++ code that includes
   boxroot.h never calls these: the header's static definitions have
   internal linkage and shadow them within each translation unit.

   This file renames the header's inline functions while including it, so
   that the names are free for the exported definitions below. */
#define boxroot_create boxroot_inline_create
#define boxroot_get boxroot_inline_get
#define boxroot_get_ref boxroot_inline_get_ref
#define boxroot_delete boxroot_inline_delete
#define boxroot_modify boxroot_inline_modify
#define boxroot_weak_create boxroot_inline_weak_create
#define boxroot_weak_get boxroot_inline_weak_get
#define boxroot_weak_modify boxroot_inline_weak_modify
#define boxroot_weak_delete boxroot_inline_weak_delete
#include "boxroot.h"
#undef boxroot_weak_create
#undef boxroot_weak_get
#undef boxroot_weak_modify
#undef boxroot_weak_delete
#undef boxroot_create
#undef boxroot_get
#undef boxroot_get_ref
#undef boxroot_delete
#undef boxroot_modify

/* Prototypes, so that the definitions below are checked against them. */
boxroot boxroot_create(value v);
value boxroot_get(boxroot r);
value const *boxroot_get_ref(boxroot r);
void boxroot_delete(boxroot r);
bool boxroot_modify(boxroot *r, value v);
boxroot_weak boxroot_weak_create(value v);
bool boxroot_weak_get(boxroot_weak w, value *out);
bool boxroot_weak_modify(boxroot_weak *w, value v);
void boxroot_weak_delete(boxroot_weak w);
bool boxroot__thread_holds_domain_lock(void);

/* A root's cell lies BOXROOT__COMPAT_FREE_BIAS words after the root
   (boxroot__slot_of, boxroot_internal.h): 1 on OCaml 4.14, 0 on OCaml 5.
   A binding that reads the cell itself, as ocaml-boxroot-sys's inline
   boxroot_get does, links create, delete and modify under these names,
   so that a binding built for another OCaml than the library fails to
   link instead of reading the wrong word. */
#define CELL_NAME(name) CELL_NAME_(name, BOXROOT__COMPAT_FREE_BIAS)
#define CELL_NAME_(name, words) CELL_NAME__(name, words)
#define CELL_NAME__(name, words) name##_cell_offset_##words
boxroot CELL_NAME(boxroot__create)(value v);
void CELL_NAME(boxroot__delete)(boxroot r);
bool CELL_NAME(boxroot__modify)(boxroot *r, value v);

boxroot boxroot_create(value v) { return boxroot_inline_create(v); }

value boxroot_get(boxroot r) { return boxroot_inline_get(r); }

value const *boxroot_get_ref(boxroot r) { return boxroot_inline_get_ref(r); }

void boxroot_delete(boxroot r) { boxroot_inline_delete(r); }

bool boxroot_modify(boxroot *r, value v) { return boxroot_inline_modify(r, v); }

boxroot_weak boxroot_weak_create(value v) { return boxroot_inline_weak_create(v); }

bool boxroot_weak_get(boxroot_weak w, value *out) { return boxroot_inline_weak_get(w, out); }

bool boxroot_weak_modify(boxroot_weak *w, value v) { return boxroot_inline_weak_modify(w, v); }

void boxroot_weak_delete(boxroot_weak w) { boxroot_inline_weak_delete(w); }

boxroot CELL_NAME(boxroot__create)(value v) { return boxroot_inline_create(v); }

void CELL_NAME(boxroot__delete)(boxroot r) { boxroot_inline_delete(r); }

bool CELL_NAME(boxroot__modify)(boxroot *r, value v) { return boxroot_inline_modify(r, v); }

/* Whether the calling thread holds a domain lock (OCaml 4.14: the master
   lock), for bindings that must know before they touch the runtime: the
   Rust crate's `Runtime::init` refuses to start OCaml on a thread that
   already holds a lock. Asking by creating a root would do, since
   creation fails with EPERM without the lock, but the debug build
   reports that creation as a misuse and aborts. Not API: the same test
   as the library's own slow paths (ocaml_compat.h), with its gaps on
   OCaml 4.14. Callable from any thread, before the runtime starts too. */
bool boxroot__thread_holds_domain_lock(void)
{
  return boxroot__compat_lock_held_slow();
}
