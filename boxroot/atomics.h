/* The one way boxroot accesses memory shared between threads: GCC/Clang
   `__atomic` builtins on plain fields, behind these macros. Plain fields
   (not C11 `_Atomic`) keep the structures of boxroot_internal.h valid in
   C++, which includes them through boxroot.h.

   `order` is one of RELAXED, ACQUIRE, RELEASE, SEQ_CST. Each field that
   is accessed this way says, where it is declared, who writes it and who
   reads it without a lock; every access to such a field goes through
   these macros. */
#ifndef BOXROOT_ATOMICS_H
#define BOXROOT_ATOMICS_H

#define boxroot__load(p, order) __atomic_load_n((p), __ATOMIC_##order)
/* The one exception to the rule above: a plain load, by a thread that
   holds a domain lock, of a field that no thread writes while it holds
   that lock: a field that only stop-the-world sections write, or on
   OCaml 4.14 one that only the master lock's holder writes. The lock (or
   the sections' own synchronisation) orders the writes with the thread's
   reads, so there is no data race; a plain load lets the compiler fold
   it into the instruction that uses it (boxroot_modify's stamp, and its
   pool's class word on OCaml 4.14). */
#define boxroot__load_locked(p) (*(p))
#define boxroot__store(p, v, order) __atomic_store_n((p), (v), __ATOMIC_##order)
#define boxroot__exchange(p, v, order) __atomic_exchange_n((p), (v), __ATOMIC_##order)
#define boxroot__fetch_add(p, v, order) __atomic_fetch_add((p), (v), __ATOMIC_##order)
#define boxroot__fetch_or(p, v, order) __atomic_fetch_or((p), (v), __ATOMIC_##order)
#define boxroot__fetch_and(p, v, order) __atomic_fetch_and((p), (v), __ATOMIC_##order)
/* Weak compare-and-swap: `*expected` is updated on failure. */
#define boxroot__cas_weak(p, expected, desired, order) \
  __atomic_compare_exchange_n((p), (expected), (desired), 1, \
                              __ATOMIC_##order, __ATOMIC_RELAXED)
#define boxroot__cas_strong(p, expected, desired, order) \
  __atomic_compare_exchange_n((p), (expected), (desired), 0, \
                              __ATOMIC_##order, __ATOMIC_RELAXED)

#endif /* BOXROOT_ATOMICS_H */
