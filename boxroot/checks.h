/* The debug build's hooks inside the library (the report of a misuse:
   checks.c; the checked operations: debug.c).
   Not named debug.h: boxroot/debug/debug.h would shadow libstdc++'s
   <debug/debug.h> for C++ code compiled with -I boxroot.

   In the release build every hook below is an empty inline function, so
   the code that calls them compiles exactly as without them. */
#ifndef BOXROOT_DEBUG_INTERNAL_H
#define BOXROOT_DEBUG_INTERNAL_H

#include "pool.h"

#if BOXROOT__IN_DEBUG_BUILD
/* Prints "boxroot debug: OP(ADDR): WHAT" on stderr, then aborts. */
_Noreturn void boxroot__debug_misuse(char const *op, void const *addr,
                                    char const *what_format, ...)
  __attribute__((format(printf, 3, 4)));
/* debug.c's checks, for the operations that are not inline
   (weak_notify.c): a creation's lock and value; the lock; a live weak
   root that is notifying. Each aborts on misuse. */
void boxroot__debug_check_create(char const *op, value v);
void boxroot__debug_check_lock(char const *op, void const *addr);
void boxroot__debug_check_notifying(char const *op, boxroot_weak w);
#endif

/* remote.c, steps R1 and D1: `already` holds the bits of `word` (a word
   of `p`'s delayed-free bitmap) that a deletion sets and that were set
   already, in its domain's run or in the bitmap. Two deletions of one
   root racing from two threads end up here even if both passed the
   checks of boxroot__debug_delete before either set its bit. */
static inline void debug_check_remote_delete(pool *p, uintptr_t *word, uintptr_t already)
{
#ifdef BOXROOT_DEBUG
  if (already != 0) {
    void **slot = &p->slots[(word - p->delayed_bits) * 8 * sizeof(uintptr_t)
                            + __builtin_ctzl(already)];
    boxroot__debug_misuse("boxroot_delete", boxroot__root_of(slot), "root deleted twice: another "
                          "thread's deletion of it is still pending");
  }
#else
  (void)p; (void)word; (void)already;
#endif
}

/* remote.c, step C3: the owner is about to free slots base[i] (bits i
   of `bits`) that other threads deleted; none may be free already
   (deleted locally, then remotely, with the second deletion racing past
   the checks). */
static inline void debug_check_delayed_frees(pool *p, void **base, uintptr_t bits)
{
#ifdef BOXROOT_DEBUG
  for (; bits != 0; bits &= bits - 1) {
    void **slot = base + __builtin_ctzl(bits);
    if (pool_slot_is_free(p, *slot))
      boxroot__debug_misuse("boxroot_delete", boxroot__root_of(slot), "root deleted twice: a thread "
                           "deleted it while it was already free (found when "
                           "collecting deletions made by other threads)");
  }
#else
  (void)p; (void)base; (void)bits;
#endif
}

#endif
