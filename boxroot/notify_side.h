/* The side records of notifying weak pools (N1, N4, N6: weak_notify.c):
   their allocation, their release with their pool or at teardown, and
   the lists of pools with notices that move with the pools. Below the
   weak domains, which orphan, adopt and retire the pools; the protocol
   of notices is weak_notify.c's. */
#ifndef BOXROOT_NOTIFY_SIDE_H
#define BOXROOT_NOTIFY_SIDE_H

#include "pool.h"

#define NOTIFY_BITS_PER_WORD (8 * (int)sizeof(uintptr_t))

/* A notifying pool's side records, allocated with the pool (N1): each
   slot's word, and the bitmap of its slots that emptied and whose notice
   is not collected yet (N2). `count`: the bits set; the pool is on its
   domain's list of pools with notices (through `next`) iff it is not 0.
   `scan`: no bit is set in the bitmap's words below it. */
struct boxroot__notify_side {
  /* Every side record is on one global list (notify_side.c), so that
     the memory checkers see them reachable, and teardown frees them. */
  struct boxroot__notify_side *all_prev, *all_next;
  pool *next;
  int count, scan;
  uintptr_t emptied[DELAYED_WORDS];
  uintptr_t word[POOL_SLOTS];
};

static inline size_t notify_index(pool *p, void **slot) { return (size_t)(slot - p->slots); }

/* N4: whether `p` (empty) may go back to the chunk allocator: not while
   it has notices. */
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

/* New side records, zeroed and listed, or NULL (out of memory). */
struct boxroot__notify_side *boxroot__notify_side_alloc(void);
/* Unlists and frees `side`. */
void boxroot__notify_side_free(struct boxroot__notify_side *side);
/* A pool given back (retired): frees its records. */
void boxroot__notify_release(pool *p);
/* Teardown (N6): frees every side record. */
void boxroot__notify_release_all(void);

#endif
