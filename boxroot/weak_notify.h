/* Notifying weak roots: the queue of notices and their creation (rules
   N1-N6: weak_notify.c); their pools' side records: notify_side.h. */
#ifndef BOXROOT_WEAK_NOTIFY_H
#define BOXROOT_WEAK_NOTIFY_H

#include "notify_side.h"
#include "weak_domain.h"

/* N2: the clearing has just emptied `slot`, of the notifying pool `p`
   owned by `wd`'s domain: sets its bit, unless set already, and lists
   the pool if it had none. O(1), no allocation (a GC hook). */
static inline void notify_emptied(struct weak_domain *wd, pool *p, void **slot)
{
  struct boxroot__notify_side *side = p->notify;
  size_t i = notify_index(p, slot);
  int w = (int)(i / NOTIFY_BITS_PER_WORD);
  uintptr_t bit = (uintptr_t)1 << (i % NOTIFY_BITS_PER_WORD);
  if (side->emptied[w] & bit) return;
  side->emptied[w] |= bit;
  if (w < side->scan) side->scan = w;
  if (side->count++ > 0) return;
  side->next = NULL;
  if (wd->emptied_tail == NULL) wd->emptied_head = p;
  else wd->emptied_tail->notify->next = p;
  wd->emptied_tail = p;
}

/* Domain id's current notifying pool, with a free slot, or NULL on
   failure (ENOMEM). The owner, lock held. */
pool *boxroot__notify_refill(struct weak_domain *wd, int id, void const *key);
/* A new notifying root holding `v` with `word` (N5), without the debug
   build's checks; NULL on failure (status.h's error recorded). */
boxroot_weak boxroot__notify_create(value v, uintptr_t word);

#endif
