/* The weak roots' side of the GC, called by the runtime's hooks
   (compat_ocaml5.c, compat_ocaml4.c); weak_clearing.c. */
#ifndef BOXROOT_WEAK_CLEARING_H
#define BOXROOT_WEAK_CLEARING_H

#include "weak.h"

/* - boxroot__weak_scan: each scan hook of domain `id`, after the strong
     scan, with the same arguments (`sc` as a function and its data:
     ocaml_compat.h's boxroot__scanner, which needs CAML_INTERNALS);
   - boxroot__weak_slice: the major slice hooks (OCaml 5), on the
     thread of the domain doing the slice, lock held;
   - boxroot__weak_major_end: OCaml 4.14's caml_major_gc_hook, between
     the end of marking and the start of sweeping. */
#ifdef CAML_INTERNALS
void boxroot__weak_scan(int id, boxroot__scanner sc, int minor);
#endif
void boxroot__weak_slice(void);
void boxroot__weak_major_end(void);

#endif
