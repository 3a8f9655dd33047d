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
   - boxroot__compat_weak_read(v, darken, check_dead): the read barrier's
     slow path (weak.c, W4), lock held: whether `v`, just read from a weak
     slot, may be returned. If `v` is an unmarked block of the major heap
     (infix pointers counted as their closure): while marking, darkens it
     on the mark stack of the domain whose lock this thread holds (if
     `darken`) and returns 1; in CLEANING, returns 0 (if `check_dead`).
     `darken` and `check_dead` are 0 only in builds broken on purpose for
     tests. The header test comes first, so that a marked value costs
     no phase test and no call;
   - boxroot__compat_weak_is_dead(v): whether `v` is a block of the major
     heap that the cycle's marking left unmarked (CLEANING, or OCaml
     4.14's caml_major_gc_hook), infix pointers counted as their closure;
   - boxroot__compat_weak_cycle(): a count of major cycles that changes
     between the CLEANING phases of two cycles;
   - boxroot__compat_weak_marked_colour(): the colour bits (header bits 8
     and 9) of a block that the current cycle has marked, in the scan
     hook that darkens the roots. */
int boxroot__compat_weak_phase(void);
int boxroot__compat_weak_read(value v, int darken, int check_dead);
int boxroot__compat_weak_is_dead(value v);
uint64_t boxroot__compat_weak_cycle(void);
uintptr_t boxroot__compat_weak_marked_colour(void);

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
/* Adds the weak counters to `out`, while no domain runs (api.c's
   read protocol of the statistics). */
void boxroot__weak_add_stats(struct boxroot_stats *out);

#endif /* BOXROOT_WEAK_H */
