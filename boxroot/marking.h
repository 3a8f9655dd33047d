/* Marking pools as blocks, incrementally (protocol in marking.c). Used
   where the runtime allows it (OCaml 5, ocaml_compat.h); elsewhere pools
   are marked slot by slot (scan.c), and the flag below stays 0. */
#ifndef BOXROOT_MARKING_H
#define BOXROOT_MARKING_H

#include "pool.h"

/* At the major cycle start (the scan hook with caml_darken, for the
   domain whose state is `domain_state`): gives the pool's allocated
   prefix to the runtime's marker as one block, and returns the number of
   slots handed over (0 if the pool holds no root). */
long boxroot__marking_darken_pool(pool *p, void *domain_state);

/* Every scan hook of the domain whose state is `domain_state` (NULL on
   OCaml 4.14), stop-the-world: lowers the flag below once that domain's
   mark stack, or every domain's, can hold no pool any more. */
void boxroot__marking_observe(void *domain_state);

/* The marking epoch while some pool may be on a mark stack, else 0: the
   flag of marking.c (M4). */
extern uint32_t boxroot__marking_epoch;

/* Whether some pool may be on a mark stack. */
static inline int marking_pools_may_be_marked(void)
{
  return boxroot__load(&boxroot__marking_epoch, RELAXED) != 0;
}

/* The deletion barrier of slots emptied by the owner when it collects
   remote deletions (remote.c): darkens `old` on `domain_state`'s mark
   stack if pools may still be marked; NULL at the cycle start, where the
   deletions collected precede the snapshot. */
static inline void marking_barrier(void *domain_state, value old)
{
#ifndef BOXROOT_TESTING_NO_DELETION_BARRIER /* a broken build for tests */
  if (domain_state != NULL && BOXROOT__UNLIKELY(marking_pools_may_be_marked()))
    boxroot__compat_darken(domain_state, old);
#else
  (void)domain_state; (void)old;
#endif
}

/* Teardown, hooks removed, before pools are unmapped: waits until no
   mark stack holds a pool. Domain lock held. */
void boxroot__marking_quiesce(void);

#endif
