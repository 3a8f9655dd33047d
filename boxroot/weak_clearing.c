/* The weak roots' side of the GC: clearing dead values after marking
   (weak.c, W3), promoting young values at minor collections (W2), the
   read barrier's flag (W4), and the scans of compaction. */
#define CAML_INTERNALS
#define CAML_NAME_SPACE
#include "asserts.h"
#include "marking.h"
#include "status.h"
#include "ticks.h"
#include "weak_clearing.h"
#include "weak_domain.h"
#include "weak_notify.h"
#include "window.h"

#define EMPTY BOXROOT__WEAK_EMPTY

/* Empties the slots of `p` whose value is dead. The owner. */
static long clear_plain_pool(pool *p)
{
  int remaining = pool_alloc_count(p);
  long cleared = 0;
  for (void **s = p->slots, **end = p->fresh; remaining > 0 && s < end; s++) {
    value v = boxroot__load((value *)s, RELAXED);
    if (pool_slot_is_free(p, (void *)v)) continue;
    remaining--;
    if (Is_block(v) && v != EMPTY && boxroot__compat_weak_is_dead(v)
        && boxroot__cas_strong((value *)s, &v, EMPTY, RELAXED))
      cleared++;
  }
  return cleared;
}

/* The same for a notifying pool, recording the notices (weak_notify.c,
   N2). Apart, so that a plain pool's loop stays as it was (N1: one
   shared loop cost GCC's register allocation an instruction per slot). */
static long clear_notifying_pool(struct weak_domain *wd, pool *p)
{
  int remaining = pool_alloc_count(p);
  long cleared = 0;
  for (void **s = p->slots, **end = p->fresh; remaining > 0 && s < end; s++) {
    value v = boxroot__load((value *)s, RELAXED);
    if (pool_slot_is_free(p, (void *)v)) continue;
    remaining--;
    if (Is_block(v) && v != EMPTY && boxroot__compat_weak_is_dead(v)
        && boxroot__cas_strong((value *)s, &v, EMPTY, RELAXED)) {
      cleared++;
      notify_emptied(wd, p, s);
    }
  }
  return cleared;
}

static long clear_pool(struct weak_domain *wd, pool *p)
{
  return pool_notifying(p) ? clear_notifying_pool(wd, p) : clear_plain_pool(p);
}

/* The weak cycle count, 64 bits wide: 1 + the count is never 0, the
   mark of a domain that has not cleared (test builds may start it
   further on: window.h). */
static uint64_t weak_cycle(void)
{
  return boxroot__compat_weak_cycle() + boxroot__window_cycle_offset();
}

/* Clears every pool of `wd` (W3) and records the cycle. Empty old pools
   beyond BOXROOT_FREE_POOLS_KEPT go back to the chunk allocator. */
static void clear_domain(struct weak_domain *wd, int in_stw)
{
  long t0 = boxroot__ticks_now();
  for (int notifying = 0; notifying <= 1; notifying++) {
    pool *list = weak_detach(wd, WEAK_OLD, notifying);
    int empty_kept = 0;
    for (pool *p = list, *after; p != NULL; p = after) {
      after = p->next;
      weak_collect(wd, p);
      wd->cleared += clear_pool(wd, p);
      if (pool_alloc_count(p) == 0 && notify_may_retire(p) /* N4 */
          && empty_kept++ >= BOXROOT_FREE_POOLS_KEPT) {
        boxroot__weak_pool_retire(p, !marking_pools_may_be_marked()); /* M2 */
      } else {
        weak_place_old(wd, p);
      }
    }
    pool *y = *weak_ring(wd, WEAK_YOUNG, notifying);
    if (y != NULL) {
      pool *p = y;
      do { weak_collect(wd, p); wd->cleared += clear_pool(wd, p); p = p->next; } while (p != y);
    }
  }
  wd->cleared_cycle = weak_cycle() + 1;
  long dt = boxroot__ticks_now() - t0;
  if (in_stw) wd->clear_stw_ticks += dt; else wd->clear_ticks += dt;
}

static int cleared_this_cycle(struct weak_domain *wd)
{
  return wd->cleared_cycle == weak_cycle() + 1;
}

#if BOXROOT__TEST_HOOKS
static int defer_clearing; /* testing.h; atomic */
void boxroot__testing_weak_defer_clearing(int defer)
{
  boxroot__store(&defer_clearing, defer, SEQ_CST);
}
static int clearing_deferred(void) { return boxroot__load(&defer_clearing, SEQ_CST); }
#else
static int clearing_deferred(void) { return 0; }
#endif

void boxroot__weak_slice(void)
{
  if (boxroot_status() != BOXROOT_RUNNING || clearing_deferred()) return;
  if (boxroot__compat_weak_phase() != BOXROOT__WEAK_CLEANING) return;
  int id = boxroot__compat_locked_domain();
  BOXROOT__WINDOW(BOXROOT__AT_SLICE_HOOK, id);
  if (id < 0) return;
  struct weak_domain *wd = boxroot__weak_domain_get(id);
  if (wd == NULL || cleared_this_cycle(wd)) return;
  BOXROOT__WINDOW(BOXROOT__AT_WEAK_CLEARING, id);
  clear_domain(wd, 0);
}

void boxroot__weak_major_end(void)
{
  if (boxroot_status() != BOXROOT_RUNNING) return;
  clear_domain(&boxroot__weak_domains[0], 0);
  boxroot__store(&boxroot__weak_barrier, 0, RELAXED);
}

/* ---- scanning ---- */

/* Every value of every pool (compaction, heap verification). */
static void apply_all(pool *head, boxroot__scanner sc)
{
  if (head == NULL) return;
  pool *p = head;
  do {
    int remaining = pool_alloc_count(p);
    for (void **s = p->slots, **end = p->fresh; remaining > 0 && s < end; s++) {
      value v = (value)*s;
      if (pool_slot_is_free(p, (void *)v)) continue;
      remaining--;
      if (Is_block(v) && v != EMPTY) BOXROOT__APPLY(sc, v, s);
    }
    p = p->next;
  } while (p != head);
}

/* W2: promotes the young values of the young pools, which become old. */
static void scan_minor(struct weak_domain *wd, int id, boxroot__scanner sc)
{
  int flagged = boxroot__load(&wd->delayed_flag, SEQ_CST)
    && boxroot__exchange(&wd->delayed_flag, 0, SEQ_CST);
  weak_reset_cursor(id);
  wd->ncurrent = NULL;
  for (int notifying = 0; notifying <= 1; notifying++) {
    pool *o = *weak_ring(wd, WEAK_OLD, notifying);
    if (flagged && o != NULL) {
      pool *p = o;
      do { weak_collect(wd, p); p = p->next; } while (p != o);
    }
    for (pool *p = weak_detach(wd, WEAK_YOUNG, notifying), *after; p != NULL; p = after) {
      after = p->next;
      weak_collect(wd, p);
      for (void **s = p->slots, **end = p->fresh; s < end; s++) {
        value v = (value)*s;
        if (boxroot__compat_is_young(v)) BOXROOT__APPLY(sc, v, s);
      }
      weak_place_old(wd, p);
    }
  }
}

void boxroot__weak_scan(int id, boxroot__scanner sc, int minor)
{
  if (boxroot_status() != BOXROOT_RUNNING) return;
  int darken = !minor && BOXROOT__IS_DARKEN(sc);
  /* W4: the roots are being darkened, marking starts. */
  if (darken) {
    uintptr_t marked = boxroot__compat_weak_marked_colour();
    /* The read barrier's header test tells the cleared mark apart by its
       colour alone (OCaml 5). */
    BOXROOT__ASSERT(!BOXROOT__COMPAT_HEADERS_READABLE
                    || (boxroot__weak_empty[0] & BOXROOT__WEAK_COLOUR_MASK) != marked);
    boxroot__store(&boxroot__weak_marked, marked, RELAXED);
    boxroot__store(&boxroot__weak_barrier, 1, RELAXED);
  }
  struct weak_domain *wd = boxroot__weak_domain_adopting(id);
  if (wd == NULL) return;
  if (minor) {
    if (boxroot__compat_weak_phase() == BOXROOT__WEAK_CLEANING) {
      /* The fallback of W3, stop-the-world: every domain runs this
         before any mutator runs again, so the flag can drop (W4).
         Before the promotion: a value just promoted may not be readable
         yet (the runtime copies fields later, an infix header among
         them), and young values are never cleared anyway (W2). */
      if (!cleared_this_cycle(wd)) clear_domain(wd, 1);
      boxroot__store(&boxroot__weak_barrier, 0, RELAXED);
    }
    scan_minor(wd, id, sc);
  } else if (!darken) {
    apply_all(wd->young, sc);
    apply_all(wd->old, sc);
    apply_all(wd->nyoung, sc);
    apply_all(wd->nold, sc);
  }
}

