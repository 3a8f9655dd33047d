/* The debug build: checked operations (library boxroot.debug; programs
   compile their own C code with -DBOXROOT_DEBUG so that boxroot.h routes
   every operation here).

   Each operation checks its argument, then runs the ordinary fast path;
   creations also record their site for the leak report (leaks.c), and a
   root moved by modify keeps its site.
   On misuse it prints "boxroot debug: OP(ADDRESS): WHAT" on stderr and
   aborts, so that a debugger or a core dump shows the faulty call.

   What is checked, in O(1) and without a lock:
   - A root (get, get_ref, modify, delete) must be an allocated slot of a
     pool in use: the page table (chunk.c) tells whether the address lies
     in a pool handed out by the chunk allocator; the slot must lie in
     the part of the pool handed out since it was last emptied (below
     `fresh`, pool.h), must not hold a free-list link (pool.h: a free slot
     points into its own pool), and must not be marked in the delayed-
     free bitmap (remote.c: deleted by another thread, not yet collected).
   - Deletions racing from two threads: the remote path reports a delayed-
     free bit that was already set, and the owner reports a slot already
     free when it collects delayed frees (hooks in checks.h).
   - A value (create, modify) must look like an OCaml value: an
     immediate, or a word-aligned pointer above the first page that is not
     inside one of our pools (a boxroot passed instead of its value).
   - A weak root (boxroot_weak) passed to a boxroot_ function, or a strong
     one to a boxroot_weak_ function (the pool's class says which,
     weak.c); weak roots get the same checks as strong ones.
   - create, modify and get need the domain lock. The release build makes
     create and modify fail with EPERM; here it is a misuse and aborts:
     the API requires the lock, a program that ignores the NULL/false
     result crashes later far from the cause, and the abort points at
     the call instead.
   - create, modify and get (strong or weak) must not be called inside a
     collection, as from a custom block's finalizer (boxroot.h, "Roots
     in finalizers"), when the runtime records it: on OCaml 4.14 in
     minor collections, on OCaml 5 in stop-the-world sections with the
     debug runtime only (boxroot__compat_in_collection).
   - A deleted root stays detectably deleted after later creations: its
     slot goes to its pool's quarantine (pool.h), and is handed out again
     only after BOXROOT_DEBUG_QUARANTINE later deletions in that pool
     (tunables.h).
   Not detected: a call from a finalizer that the runtime runs where it
   records no collection (a major slice's sweep; on OCaml 5 with the
   release runtime, any); a deleted root whose slot was reused after all (past the
   quarantine, or in a pool that emptied and started over), a deletion
   racing with the reuse of its slot; values that pass the cheap tests but
   are not OCaml values.

   Checks that run on a thread other than the pool's owner read the
   owner's fields (`fresh`, the slot) without synchronisation: for a live
   root they are stable (a root's slot is only written by its user and by
   the GC; `fresh` only grows while the pool holds roots), so the answer
   is exact for correct programs and best-effort for racy misuses. */
/* The unchecked fast paths, plus the declarations of the checked ones
   (boxroot.h). */
#undef BOXROOT_DEBUG
#define BOXROOT__DEBUG_IMPLEMENTATION
#include "boxroot.h"
#include "chunk.h"
#include "checks.h"
#include "leaks.h"
#include "pool.h"

/* No OCaml block lives in the first page (never mapped on our targets). */
#define LOWEST_BLOCK_ADDRESS 4096
#define BITS_PER_WORD (8 * sizeof(uintptr_t))

static int delayed_free_pending(pool *p, void **slot)
{
  size_t i = (size_t)(slot - p->slots);
  uintptr_t word = boxroot__load(&p->delayed_bits[i / BITS_PER_WORD], RELAXED);
  return (word >> (i % BITS_PER_WORD)) & 1;
}

/* `weak`: whether `r` must be a weak root (boxroot_weak) rather than a
   strong one. */
static void check_slot(char const *op, boxroot r, int weak)
{
  if (r == NULL)
    boxroot__debug_misuse(op, r, "NULL is not a root (an unchecked failure of "
                         "boxroot_create?)");
  void **slot = boxroot__slot_of(r);
  if ((uintptr_t)slot % sizeof(void *) != 0)
    boxroot__debug_misuse(op, r, "not a root: misaligned address");
  switch (boxroot__chunk_classify(slot)) {
  case CHUNK_ADDRESS_FOREIGN:
    boxroot__debug_misuse(op, r, "not a root: this address is in no boxroot "
                         "pool (a foreign pointer, a stack address, or garbage)");
  case CHUNK_ADDRESS_POOL_FREE:
    boxroot__debug_misuse(op, r, "not a live root: its pool holds no root any "
                         "more (use after delete, or double delete)");
  case CHUNK_ADDRESS_POOL_USED:
    break;
  }
  pool *p = pool_of_slot(slot);
  if (slot < p->slots || slot >= pool_end(p))
    boxroot__debug_misuse(op, r, "not a root: this address is in a pool "
                         "header (garbage)");
  if (slot >= boxroot__load(&p->fresh, RELAXED))
    boxroot__debug_misuse(op, r, "not a live root: this slot is not allocated "
                         "(use after delete, double delete, or garbage)");
  if (pool_slot_is_free(p, boxroot__load(slot, RELAXED)))
    boxroot__debug_misuse(op, r, "not a live root: this root was deleted "
                         "(use after delete, or double delete)");
  if (delayed_free_pending(p, slot))
    boxroot__debug_misuse(op, r, "not a live root: this root was deleted by "
                         "another thread (use after delete, or double delete)");
  int cls = pool_class(p);
  int is_weak = cls == BOXROOT__CLASS_WEAK_YOUNG || cls == BOXROOT__CLASS_WEAK_OLD;
  if (is_weak && !weak)
    boxroot__debug_misuse(op, r, "a weak root (boxroot_weak) passed where a boxroot "
                         "is expected (use the boxroot_weak_ functions)");
  if (!is_weak && weak)
    boxroot__debug_misuse(op, r, "a boxroot passed where a weak root (boxroot_weak) "
                         "is expected (use the boxroot_ functions)");
}

static void check_root(char const *op, boxroot r) { check_slot(op, r, 0); }
static void check_weak(char const *op, boxroot_weak w) { check_slot(op, (boxroot)w, 1); }

/* `root` is the root being set, or NULL for create. */
static void check_value(char const *op, boxroot root, value v)
{
  char const *why = NULL;
  if (Is_long(v)) return;
  if (v < LOWEST_BLOCK_ADDRESS) why = "a null or near-null pointer";
  else if (v % sizeof(value) != 0) why = "a misaligned pointer";
  else if (chunk_contains((void *)v))
    why = "a pointer into a boxroot pool: a boxroot passed instead of its "
          "value? (use boxroot_get)";
  if (why == NULL) return;
  if (root == NULL)
    boxroot__debug_misuse(op, (void *)v, "not an OCaml value: %s", why);
  boxroot__debug_misuse(op, root, "the new value %p is not an OCaml value: %s",
                       (void *)v, why);
}

static void check_lock(char const *op, void const *addr)
{
  /* The slow check: on OCaml 4.14 the inline one cannot tell before
     setup, or after systhreads replaced our hooks (ocaml_compat.h). */
  if (!boxroot__compat_lock_held_slow())
    boxroot__debug_misuse(op, addr, "this thread does not hold the OCaml "
                         "domain lock");
}

/* Inside a collection, which the runtime records only in some cases
   (boxroot__compat_in_collection): from a custom block's finalizer,
   where only deletions are allowed (boxroot.h, "Roots in finalizers"). */
static void check_outside_collection(char const *op, void const *addr)
{
  if (boxroot__compat_in_collection())
    boxroot__debug_misuse(op, addr, "called inside a collection (from a custom block's "
                         "finalizer?), where only boxroot_delete and "
                         "boxroot_weak_delete may be called");
}

/* Both checks of the operations that need the lock. */
static void check_caller(char const *op, void const *addr)
{
  check_lock(op, addr);
  check_outside_collection(op, addr);
}

static boxroot checked_create(value v, uintptr_t site)
{
  check_caller("boxroot_create", (void *)v);
  check_value("boxroot_create", NULL, v);
  boxroot r = boxroot_create(v);
  if (r != NULL) boxroot__leaks_record(r, site);
  return r;
}

boxroot boxroot__debug_create(value v)
{
  return checked_create(v, (uintptr_t)__builtin_return_address(0));
}

boxroot boxroot__debug_create_at(value v, char const *file, size_t file_len, unsigned line)
{
  return checked_create(v, boxroot__leaks_file_site(file, file_len, line));
}

value boxroot__debug_get(boxroot r)
{
  check_root("boxroot_get", r);
  check_caller("boxroot_get", r);
  return boxroot_get(r);
}

value const *boxroot__debug_get_ref(boxroot r)
{
  /* Computing the address needs no lock; reading through it does, but
     that happens in the caller's code. */
  check_root("boxroot_get_ref", r);
  return boxroot_get_ref(r);
}

void boxroot__debug_delete(boxroot r)
{
  check_root("boxroot_delete", r);
  boxroot_delete(r);
}

bool boxroot__debug_modify(boxroot *r, value v)
{
  if (r == NULL)
    boxroot__debug_misuse("boxroot_modify", r, "NULL is not the address of a root");
  check_root("boxroot_modify", *r);
  check_caller("boxroot_modify", *r);
  check_value("boxroot_modify", *r, v);
  /* A moved root keeps its creation site. */
  boxroot before = *r;
  uintptr_t site = boxroot__leaks_site(before);
  if (!boxroot_modify(r, v)) return false;
  if (*r != before) boxroot__leaks_record(*r, site);
  return true;
}

/* Weak roots: the same checks, and the root must be weak. */
static boxroot_weak checked_weak_create(value v, uintptr_t site)
{
  check_caller("boxroot_weak_create", (void *)v);
  check_value("boxroot_weak_create", NULL, v);
  boxroot_weak w = boxroot_weak_create(v);
  if (w != NULL) boxroot__leaks_record(w, site);
  return w;
}

boxroot_weak boxroot__debug_weak_create(value v)
{
  return checked_weak_create(v, (uintptr_t)__builtin_return_address(0));
}

boxroot_weak boxroot__debug_weak_create_at(value v, char const *file, size_t file_len,
                                           unsigned line)
{
  return checked_weak_create(v, boxroot__leaks_file_site(file, file_len, line));
}

bool boxroot__debug_weak_get(boxroot_weak w, value *out)
{
  check_weak("boxroot_weak_get", w);
  check_caller("boxroot_weak_get", w);
  return boxroot_weak_get(w, out);
}

void boxroot__debug_weak_delete(boxroot_weak w)
{
  check_weak("boxroot_weak_delete", w);
  boxroot_weak_delete(w);
}

bool boxroot__debug_weak_modify(boxroot_weak *w, value v)
{
  if (w == NULL)
    boxroot__debug_misuse("boxroot_weak_modify", w, "NULL is not the address of a root");
  check_weak("boxroot_weak_modify", *w);
  check_caller("boxroot_weak_modify", *w);
  check_value("boxroot_weak_modify", (boxroot)*w, v);
  boxroot_weak before = *w;
  uintptr_t site = boxroot__leaks_site(before);
  if (!boxroot_weak_modify(w, v)) return false;
  if (*w != before) boxroot__leaks_record(*w, site);
  return true;
}

/* Notifying weak roots (checks.h, weak_notify.c). */
void boxroot__debug_check_create(char const *op, value v)
{
  check_lock(op, (void *)v);
  check_value(op, NULL, v);
}

void boxroot__debug_check_lock(char const *op, void const *addr) { check_lock(op, addr); }

void boxroot__debug_check_notifying(char const *op, boxroot_weak w)
{
  check_weak(op, w);
  if (pool_of_slot(boxroot__weak_slot_of(w))->notify == NULL)
    boxroot__debug_misuse(op, w, "not a notifying weak root (created by "
                         "boxroot_weak_create, not boxroot_weak_create_notifying)");
}
