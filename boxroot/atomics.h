/* The one way boxroot accesses memory shared between threads: GCC/Clang
   `__atomic` builtins on plain fields, behind these macros. Plain fields
   (not C11 `_Atomic`) keep the structures of boxroot_internal.h valid in
   C++, which includes them through boxroot.h.

   `order` is one of RELAXED, ACQUIRE, RELEASE, SEQ_CST. Each field that
   is accessed this way says, where it is declared, who writes it, who
   reads it without a lock, and why its order is enough under the C11
   model, not x86's total store order (ARM64 reorders relaxed accesses
   and lets a load pass an earlier store unless the order forbids it);
   every access to such a field goes through these macros. Four cases:
   - Counters for the statistics: RELAXED. A reader wants a number, not
     what was written before it.
   - Publication (a page table entry, the status):
     RELEASE store once what it points to is set up, ACQUIRE load, so
     that a reader that sees the pointer or flag sees what it names.
   - Store buffering: each side writes one word, then reads the other
     side's (remote deletion, remote.c; the hooks' in-flight counter,
     compat_ocaml5.c). SEQ_CST on every access of both words: under
     release/acquire both reads may miss both writes; only the single
     total order of sequentially consistent operations forbids it.
   - Words that change only in stop-the-world sections, or under a lock,
     and are read by threads that the runtime's own synchronisation
     (stop-the-world barriers, domain locks) orders after the writer:
     RELAXED, or a plain load (below). The atomic access only keeps a
     read that overlaps a section from being a data race: it may see the
     old value or the new one, and the field says which it tolerates.
   Test hooks (BOXROOT__TEST_HOOKS builds) use SEQ_CST throughout: no
   measured path runs them. */
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
