/* The deletion barriers: darkening a value before a slot that marking
   may still read is freed or overwritten (marking.c, M3 and M5). */
#ifndef BOXROOT_BARRIER_H
#define BOXROOT_BARRIER_H

#include "marking.h"

/* The owner's deletion barrier before it frees or overwrites `slot` of
   `p`, whose stamp is not current (M3), on `domain_state`'s mark stack:
   its lock held, or its scan hook. Darkens the old value, or the whole
   pool, which makes the stamp current; outside marking, only makes the
   stamp current. */
void boxroot__barrier_owner(pool *p, void **slot, boxroot__domain_state *domain_state);

/* Whether the owner, freeing slots of `p` on behalf of remote deletions
   (remote.c), must run boxroot__barrier_owner on each first: only while
   the pool's stamp is not current and pools may be marked, so that a
   pool whose values were all darkened this cycle costs no read of its
   slots; never with `domain_state` NULL (slot-by-slot scans, whose
   collected deletions precede any marking of the pool). */
static inline int barrier_needed_to_collect(boxroot__domain_state *domain_state, pool *p)
{
  return domain_state != NULL
    && BOXROOT__UNLIKELY(!boxroot__pool_stamp_current(&p->shared))
    && marking_pools_may_be_marked();
}

/* The owner's deletion of `slot` of `p` while the pool's stamp is not
   current: the barrier, then the local deletion. `key`: the owner's. */
void boxroot__barrier_delete_owned(pool *p, void **slot, void const *key);

/* boxroot_modify's deletion barrier on `root` (M3, M5), lock held: none
   if the root's pool has a current stamp. */
void boxroot__barrier_modify(boxroot root);

#endif
