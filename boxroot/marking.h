/* Marking pools as blocks, incrementally (protocol in marking.c). Used
   where the runtime allows it (OCaml 5, ocaml_compat.h); elsewhere pools
   are marked slot by slot (scan.c), the flag below stays 0 and the
   functions that list pools do nothing. */
#ifndef BOXROOT_MARKING_H
#define BOXROOT_MARKING_H

#include "pool.h"

/* Domain `id` takes `p` (its owner is already set) or gives it up
   (before its owner changes, or before `p` goes on the free ring, whose
   pools hold no value and are not listed): it is listed in, or removed
   from, the domain's directory (M0), and its colour and stamp are set
   (M1, S). `join`: how it joins, which says whether it may hold values
   (an adopted orphan) and whether they may be darkened there (M1).
   `state`: domain id's (its lock held, or its hook). Listing needs
   memory: a pool that cannot be listed is counted as unlisted. */
enum boxroot__join {
  JOIN_EMPTY,         /* no value: fresh, or from the free ring */
  JOIN_AT_MINOR_SCAN, /* adopted at a minor collection's scan */
  JOIN_AT_OTHER_SCAN  /* adopted at any other scan: the root darkening,
                         compaction, heap verification */
};
void boxroot__marking_join(pool *p, int id, boxroot__domain_state *state, enum boxroot__join join);
void boxroot__marking_leave(pool *p, int id);

/* `p`'s slots handed out grew (pool.c): its block's size follows (M1).
   Its owner, lock held. */
void boxroot__marking_resize(pool *p);
/* Threads the next batch of fresh slots of `p` (pool.h), and resizes its
   block to match (M1). 0 if no fresh slot is left. Its owner, lock held. */
static inline int marking_thread_fresh(pool *p)
{
  if (!boxroot__pool_thread_fresh(p)) return 0;
  boxroot__marking_resize(p);
  return 1;
}

/* The cycle start, domain id's scan hook with caml_darken (scan.c):
   first, if boxroot__marking_unlisted(id) > 0, each pool of the domain
   not yet listed is listed (boxroot__marking_list_again), or, if that
   still fails, darkened slot by slot by the caller; then
   boxroot__marking_start darkens the directory. Every darkening hook,
   even one that has nothing to darken (a terminated domain's), first
   calls boxroot__marking_switch_stamp (S, M5: on OCaml 5.5 a domain may
   run before the others' hooks, its own must have switched). */
size_t boxroot__marking_unlisted(int id);
int boxroot__marking_list_again(pool *p, int id);
void boxroot__marking_switch_stamp(void);
void boxroot__marking_start(int id, boxroot__domain_state *domain_state);

/* Domain id's minor scans: the aging hand (S) visits the pools due, and
   calls `visit` on each. */
void boxroot__marking_age(int id, void (*visit)(pool *p, void *data), void *data);

/* Every scan hook of the domain whose state is `domain_state` (NULL on
   OCaml 4.14), stop-the-world: lowers the flag below once that domain's
   mark stack, or every domain's, can hold no pool any more, and frees
   the directory blocks that its marker no longer reads. */
void boxroot__marking_observe(boxroot__domain_state *domain_state);

/* The marking epoch while some pool may be on a mark stack, else 0: the
   flag of marking.c (M4). */
extern uint64_t boxroot__marking_epoch;

/* Whether some pool may be on a mark stack. */
static inline int marking_pools_may_be_marked(void)
{
  return boxroot__load(&boxroot__marking_epoch, RELAXED) != 0;
}

/* If the domain of `state` (this thread's, or its hook's) has finished
   marking, uncounts it (M4). */
void boxroot__marking_uncount_if_done(boxroot__domain_state *state);

/* Whether the stamp of `p` is the current one (S). */
static inline int marking_stamp_is_current(pool *p)
{
  return pool_stamp(p) == boxroot__current_stamp();
}

/* Teardown, hooks removed, before pools are unmapped: waits until no
   mark stack holds a pool, and frees the directories. Domain lock held. */
void boxroot__marking_quiesce(void);

#endif
