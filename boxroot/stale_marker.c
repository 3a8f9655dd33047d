/* The test builds' stale marker (stale_marker.h): each load recorded,
   and replayed as the marker's store after every growth of the pool in
   the same epoch (the store may land after the last one), wherever the
   pool went meanwhile. */
#include <pthread.h>
#include "stale_marker.h"
#include "window.h"

#if BOXROOT__TEST_HOOKS
#define STALE_LOADS 64
static int stale_marker_on; /* atomic */
static pthread_mutex_t stale_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { pool *p; uintptr_t header; uint64_t epoch; } stale_loads[STALE_LOADS];
static unsigned stale_next;

void boxroot__testing_stale_marker(int on)
{
  boxroot__store(&stale_marker_on, on, SEQ_CST);
}

void boxroot__stale_marker_load(pool *p, uint64_t epoch)
{
  if (!boxroot__load(&stale_marker_on, SEQ_CST)
      || !boxroot__compat_header_is_unmarked(p->block_header)) return;
  pthread_mutex_lock(&stale_lock);
  unsigned k = stale_next++ % STALE_LOADS;
  stale_loads[k].p = p;
  stale_loads[k].header = p->block_header;
  stale_loads[k].epoch = epoch;
  pthread_mutex_unlock(&stale_lock);
}

void boxroot__stale_marker_store(pool *p, uint64_t epoch)
{
  if (!boxroot__load(&stale_marker_on, SEQ_CST)) return;
  pthread_mutex_lock(&stale_lock);
  for (int k = 0; k < STALE_LOADS; k++) {
    if (stale_loads[k].p != p) continue;
    if (stale_loads[k].epoch == epoch)
      p->block_header =
        boxroot__compat_marked_header(boxroot__compat_header_wosize(stale_loads[k].header));
    else
      stale_loads[k].p = NULL;
  }
  pthread_mutex_unlock(&stale_lock);
}
#else
typedef int boxroot__no_stale_marker; /* an empty unit is not ISO C */
#endif
