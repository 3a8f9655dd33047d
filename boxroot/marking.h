/* Marking pools as blocks, incrementally (protocol in marking.c). Used
   where the runtime allows it (OCaml 5, ocaml_compat.h); elsewhere pools
   are marked slot by slot (scan.c), and the flag below stays 0. */
#ifndef BOXROOT_MARKING_H
#define BOXROOT_MARKING_H

#include "pool.h"

/* At the major cycle start (the scan hook with caml_darken, for the
   domain whose state is `domain_state`), the directory of marking.c
   (M0): open it, enlist each pool, then push it on the domain's mark
   stack. Enlisting gives the pool's allocated prefix to the runtime's
   marker as one block, and returns the number of slots handed over (0 if
   the pool holds no root), or -1 if the directory has no room for it: the
   caller then darkens its values slot by slot. */
void boxroot__marking_directory_open(boxroot__domain_state *domain_state);
long boxroot__marking_enlist_pool(pool *p, boxroot__domain_state *domain_state);
void boxroot__marking_directory_push(boxroot__domain_state *domain_state);

/* Every scan hook of the domain whose state is `domain_state` (NULL on
   OCaml 4.14), stop-the-world: lowers the flag below once that domain's
   mark stack, or every domain's, can hold no pool any more. */
void boxroot__marking_observe(boxroot__domain_state *domain_state);

/* The marking epoch while some pool may be on a mark stack, else 0: the
   flag of marking.c (M4). */
extern uint32_t boxroot__marking_epoch;

/* Whether some pool may be on a mark stack. */
static inline int marking_pools_may_be_marked(void)
{
  return boxroot__load(&boxroot__marking_epoch, RELAXED) != 0;
}

/* The owner's deletion barrier before it frees or overwrites `slot` of
   `p` (M3), on `domain_state`'s mark stack: its lock held, or its scan
   hook. Darkens the old value, or the whole pool, which clears the bit. */
void boxroot__marking_owner_barrier(pool *p, void **slot, boxroot__domain_state *domain_state);

/* Whether the owner, freeing slots of `p` on behalf of remote deletions
   (remote.c), must run boxroot__marking_owner_barrier on each first: only
   while the pool has the barrier bit, so that a pool whose values were
   all darkened this cycle, or pushed in no cycle, costs no read of its
   slots; never at the cycle start (`domain_state` NULL), where the
   deletions collected precede the snapshot. */
static inline int marking_collect_needs_barrier(boxroot__domain_state *domain_state, pool *p)
{
  return domain_state != NULL
    && BOXROOT__UNLIKELY(boxroot__pool_barrier_bit(&p->shared));
}

/* The owner's deletion of `slot` of `p` while the pool has the barrier
   bit: the barrier, then the local deletion. `key`: the owner's. */
void boxroot__marking_delete_owned(pool *p, void **slot, void const *key);

/* Teardown, hooks removed, before pools are unmapped: waits until no
   mark stack holds a pool, and frees the directories. Domain lock held. */
void boxroot__marking_quiesce(void);

#endif
