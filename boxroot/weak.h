/* Weak roots and the runtime: the phases of the major GC and the
   version-specific tests that the read barrier and the clearing need
   (compat_ocaml5.c, compat_ocaml4.c). Protocol: weak.c. */
#ifndef BOXROOT_WEAK_H
#define BOXROOT_WEAK_H

#include "boxroot.h"

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

#endif /* BOXROOT_WEAK_H */
