/* The test builds' stale marker: a marker of OCaml 5 that loads a pool's
   header and stores it back arbitrarily late (marking.c, M1; testing.h
   switches it on). Does nothing in other builds. */
#ifndef BOXROOT_STALE_MARKER_H
#define BOXROOT_STALE_MARKER_H

#include "pool.h"

/* The marker of epoch `epoch` loads the header of `p` now (if it reads
   UNMARKED, as a marker that goes on to mark it). */
void boxroot__stale_marker_load(pool *p, uint64_t epoch);
/* `p` grew during epoch `epoch`: each load of `p` in that epoch is
   stored back, MARKED, with the size it had when loaded. */
void boxroot__stale_marker_store(pool *p, uint64_t epoch);

#endif
