/* Directories: each domain's list of its pools, laid out as one OCaml
   block whose fields the domain's marker reads (marking.c, M0). */
#ifndef BOXROOT_DIRECTORY_H
#define BOXROOT_DIRECTORY_H

#include "pool.h"

/* Blocks retired in one cycle: doubling from the first capacity
   (directory.c), far more than memory allows. */
#define BOXROOT__DIRECTORY_RETIRED_MAX 48

/* Domain id's directory, touched only on behalf of that domain (its lock
   or its hook). `block[0]` is the block's header (written when it is
   darkened); `block[1 .. used]` are pools' first slots, or holes: a hole
   is odd, (next hole << 1) | 1, the holes forming a list from `holes`
   (0: none). `listed`: pools listed; `unlisted`: pools owned but not
   listed (memory was short). `retired`: earlier blocks that its marker
   may still read, each with the fields it used. */
struct boxroot__directory {
  uintptr_t *block;
  size_t capacity, used, holes, listed, unlisted;
  uintptr_t *retired[BOXROOT__DIRECTORY_RETIRED_MAX];
  size_t retired_used[BOXROOT__DIRECTORY_RETIRED_MAX];
  int retired_count;
};

struct boxroot__directory *boxroot__directory(int id);

/* Whether a field of a block is a hole; else it is a pool's first slot. */
static inline int directory_field_is_hole(uintptr_t field) { return field & 1; }

/* Lists `p` (`p->listed_at` != 0 afterwards), or counts it unlisted if
   memory is short (`p->listed_at` == 0). */
void boxroot__directory_add(struct boxroot__directory *dir, pool *p);
/* Lists `p`, counted unlisted until now; false if memory is still short. */
int boxroot__directory_list_again(struct boxroot__directory *dir, pool *p);
/* `p` leaves: a hole in the current block and in every retired block that
   lists it (M1: no marker reaches it from then on), or one unlisted pool
   less. Returns whether a retired block still lists `p` (only in a build
   broken on purpose; the test builds' stale marker, marking.c). */
int boxroot__directory_remove(struct boxroot__directory *dir, pool *p);
/* Frees the retired blocks (no marker reads them any more); `everything`:
   the current block too, and the directory is empty (teardown). */
void boxroot__directory_release(struct boxroot__directory *dir, int everything);

/* Test builds: whether `p`, owned by domain id, is listed in its
   directory or counted as unlisted (`member`: on its young or old ring),
   or not listed (on its free ring). */
int boxroot__directory_check_listed(pool *p, int id, int member);

#endif
