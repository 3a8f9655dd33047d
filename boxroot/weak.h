/* Weak roots inside the library: the calls the runtime's hooks make
   (compat_ocaml5.c, compat_ocaml4.c), and the version-specific tests the
   read barrier and the clearing need from them. Protocol: weak.c. */
#ifndef BOXROOT_WEAK_H
#define BOXROOT_WEAK_H

#include "boxroot.h"

struct boxroot_stats;

/* What the current phase of the major GC asks of weak roots. */
enum boxroot__weak_phase {
  /* No marking under way, and no dead value left in a weak slot (OCaml
     5.5's sweep-only phase, OCaml 4.14's sweep and idle phases). */
  BOXROOT__WEAK_IDLE,
  /* Marking: a value read from a weak slot must be darkened. */
  BOXROOT__WEAK_MARKING,
  /* Marking is over and nothing is swept yet: an unmarked value is dead
     (OCaml 5's Phase_sweep_ephe, OCaml 4.14's Phase_clean). */
  BOXROOT__WEAK_CLEANING
};

/* Version-specific (compat_ocaml5.c, compat_ocaml4.c):
   - boxroot__compat_weak_phase(): the phase above; the caller holds a
     domain lock, or runs in a GC hook;
   - boxroot__compat_weak_darken(v): darkens `v` on the mark stack of the
     domain whose lock this thread holds, if `v` is a block that the
     major GC marks (MARKING only);
   - boxroot__compat_weak_is_dead(v): whether `v` is a block of the major
     heap that the cycle's marking left unmarked (CLEANING, or OCaml
     4.14's caml_major_gc_hook), infix pointers counted as their closure;
   - boxroot__compat_weak_cycle(): a count of major cycles that changes
     between the CLEANING phases of two cycles. */
int boxroot__compat_weak_phase(void);
void boxroot__compat_weak_darken(value v);
int boxroot__compat_weak_is_dead(value v);
uint32_t boxroot__compat_weak_cycle(void);

/* The runtime's hooks call these (weak.c):
   - boxroot__weak_scan: each scan hook of domain `id`, after the strong
     scan, with the same arguments (`sc` as a function and its data:
     ocaml_compat.h's boxroot__scanner, which needs CAML_INTERNALS);
   - boxroot__weak_slice: the major slice hooks (OCaml 5), on the
     thread of the domain doing the slice, lock held;
   - boxroot__weak_major_end: OCaml 4.14's caml_major_gc_hook, between
     the end of marking and the start of sweeping;
   - boxroot__weak_terminate: the domain-termination hook. */
#ifdef CAML_INTERNALS
void boxroot__weak_scan(int id, boxroot__scanner sc, int minor);
#endif
void boxroot__weak_slice(void);
void boxroot__weak_major_end(void);
void boxroot__weak_terminate(int id);

/* Teardown: forgets every weak pool (the chunk allocator unmaps them). */
void boxroot__weak_forget_all(void);
/* Adds the weak counters to `out`, while no domain runs (boxroot.c's
   read protocol of the statistics). */
void boxroot__weak_add_stats(struct boxroot_stats *out);

/* boxroot.c: records why the calling thread's last call failed. */
void boxroot__fail(int err, char const *why);
/* boxroot.c: whether this thread holds a domain lock; records EPERM and
   `why` otherwise. */
bool boxroot__lock_held_or_fail(char const *why);
/* boxroot.c: sets boxroot up if needed; false (error recorded) if it is
   not running afterwards. `op` names the caller in the message. */
bool boxroot__running_or_fail(void);

#endif /* BOXROOT_WEAK_H */
