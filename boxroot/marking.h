/* Incremental marking of pools on OCaml 5 (protocol in marking.c). On
   OCaml 4.14 these are no-ops: pools are marked slot by slot (scan.c). */
#ifndef BOXROOT_MARKING_H
#define BOXROOT_MARKING_H

#include "pool.h"

/* At the major cycle start (our scan hook with caml_darken, for the
   domain whose state is `domain_state`): gives the pool's allocated
   prefix to the runtime's marker as one block, and returns the number of
   slots handed over (0 if the pool holds no root). OCaml 5 only. */
long boxroot__marking_darken_pool(pool *p, void *domain_state);

/* Every scan hook of the domain whose state is `domain_state` (NULL on
   OCaml 4.14), stop-the-world: lowers the flag of the deletion barrier
   (boxroot_internal.h) once that domain's stack, or every domain's, can
   hold no pool any more. */
void boxroot__marking_observe(void *domain_state);

#if BOXROOT_MULTICORE
/* The marking epoch while some pool may be on a mark stack, else 0: the
   flag of marking.c (M4). */
extern uint32_t boxroot__marking_epoch;
#endif

/* Whether some pool may be on a mark stack. */
static inline int marking_pools_may_be_marked(void)
{
#if BOXROOT_MULTICORE
  return boxroot__load(&boxroot__marking_epoch, RELAXED) != 0;
#else
  return 0;
#endif
}

#if BOXROOT_MULTICORE
/* Darkens `old` on `domain_state`'s mark stack, as caml_modify does the
   old value of a field. */
void boxroot__darken_old_for(void *domain_state, value old);
#endif

/* The deletion barrier of slots emptied by the owner when it collects
   remote deletions (remote.c): darkens `old` on `domain_state`'s mark
   stack if pools may still be marked; NULL at the cycle start, where the
   deletions collected precede the snapshot. */
static inline void marking_barrier(void *domain_state, value old)
{
#if BOXROOT_MULTICORE && !defined(BOXROOT_TESTING_NO_DELETION_BARRIER)
  if (domain_state != NULL && BOXROOT__UNLIKELY(marking_pools_may_be_marked()))
    boxroot__darken_old_for(domain_state, old);
#else
  (void)domain_state; (void)old;
#endif
}

/* Teardown, hooks removed, before pools are unmapped: waits until no
   mark stack holds a pool. Domain lock held. */
void boxroot__marking_quiesce(void);

#endif
