/* The side records of notifying weak pools: notify_side.h. */
#include <pthread.h>
#include <stdlib.h>
#include "alloc_failures.h"
#include "notify_side.h"

_Static_assert(DELAYED_WORDS * NOTIFY_BITS_PER_WORD >= POOL_SLOTS,
               "a bit of the emptied bitmap per slot (notify_side.h)");

/* Every side record, doubly linked, under its lock: reachable from here,
   not only from the pools, which live in mapped chunks that
   LeakSanitizer does not read. */
static pthread_mutex_t sides_lock = PTHREAD_MUTEX_INITIALIZER;
static struct boxroot__notify_side *sides;

struct boxroot__notify_side *boxroot__notify_side_alloc(void)
{
  struct boxroot__notify_side *side =
    boxroot__allocation_fails(BOXROOT__ALLOC_NOTIFY_SIDE) ? NULL : calloc(1, sizeof *side);
  if (side == NULL) return NULL;
  pthread_mutex_lock(&sides_lock);
  side->all_next = sides;
  if (sides != NULL) sides->all_prev = side;
  sides = side;
  pthread_mutex_unlock(&sides_lock);
  return side;
}

void boxroot__notify_side_free(struct boxroot__notify_side *side)
{
  pthread_mutex_lock(&sides_lock);
  if (side->all_prev != NULL) side->all_prev->all_next = side->all_next;
  else sides = side->all_next;
  if (side->all_next != NULL) side->all_next->all_prev = side->all_prev;
  pthread_mutex_unlock(&sides_lock);
  free(side);
}

void boxroot__notify_release(pool *p)
{
  if (p->notify == NULL) return;
  boxroot__notify_side_free(p->notify);
  p->notify = NULL;
}

void boxroot__notify_release_all(void)
{
  pthread_mutex_lock(&sides_lock);
  for (struct boxroot__notify_side *side = sides, *next; side != NULL; side = next) {
    next = side->all_next;
    free(side);
  }
  sides = NULL;
  pthread_mutex_unlock(&sides_lock);
}
