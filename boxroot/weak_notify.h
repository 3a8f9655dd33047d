/* Notifying weak roots: the side records of their pools and the queue of
   notices (rules N1-N6: weak_notify.c). */
#ifndef BOXROOT_WEAK_NOTIFY_H
#define BOXROOT_WEAK_NOTIFY_H

#include "weak_domain.h"

#define NOTIFY_BITS_PER_WORD (8 * (int)sizeof(uintptr_t))

/* A notifying pool's side records, allocated with the pool (N1): each
   slot's word, and the bitmap of its slots that emptied and whose notice
   is not collected yet (N2). `count`: the bits set; the pool is on its
   domain's list of pools with notices (through `next`) iff it is not 0.
   `scan`: no bit is set in the bitmap's words below it. */
struct boxroot__notify_side {
  /* Every side record is on one global list (weak_notify.c), so that
     the memory checkers see them reachable, and teardown frees them. */
  struct boxroot__notify_side *all_prev, *all_next;
  pool *next;
  int count, scan;
  uintptr_t emptied[DELAYED_WORDS];
  uintptr_t word[POOL_SLOTS];
};

static inline size_t notify_index(pool *p, void **slot) { return (size_t)(slot - p->slots); }

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

/* N4: whether the clearing may give `p` (empty) back to the chunk
   allocator: not while it has notices. */
static inline int notify_may_retire(pool *p)
{
  return p->notify == NULL || p->notify->count == 0;
}

/* Appends the list of pools (`*head`, `*tail`) to (`*to_head`,
   `*to_tail`) and empties the former (N4: orphans and adoption). */
static inline void notify_splice(pool **to_head, pool **to_tail, pool **head, pool **tail)
{
  if (*head == NULL) return;
  if (*to_tail == NULL) *to_head = *head;
  else (*to_tail)->notify->next = *head;
  *to_tail = *tail;
  *head = *tail = NULL;
}

/* A pool given back (retired): frees its records. */
void boxroot__notify_release(pool *p);
/* Teardown (N6): frees every side record. */
void boxroot__notify_release_all(void);
/* Domain id's current notifying pool, with a free slot, or NULL on
   failure (ENOMEM). The owner, lock held. */
pool *boxroot__notify_refill(struct weak_domain *wd, int id, void const *key);
/* A new notifying root holding `v` with `word` (N5), without the debug
   build's checks; NULL on failure (status.h's error recorded). */
boxroot_weak boxroot__notify_create(value v, uintptr_t word);

#endif
