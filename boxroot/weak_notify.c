/* Notifying weak roots: weak roots whose emptying by the GC is reported
   to the program (API: boxroot.h, boxroot_weak_create_notifying and
   boxroot_weak_next_emptied), so that a table of weak entries learns
   which died at a cost proportional to those that died, rather than by
   polling every entry. The GC only records; the program collects at a
   time of its choosing (Java's ReferenceQueue: the collector enqueues
   cleared references, the program drains the queue itself).

   Rules (enforced where said):
   N1 Opt-in. A notifying root lives in a notifying pool: a weak pool
      (weak.c, W1-W5 hold unchanged) whose `notify` (pool.h) points to its
      side records (notify_side.h: each slot's word, a bitmap of emptied
      slots), allocated with the pool (boxroot__notify_refill, here: the
      creation fails cleanly, ENOMEM, if that allocation does). Its
      domain keeps such pools on rings of their own (nyoung, nold) and
      creates from its own current one (`ncurrent`, never
      boxroot__weak_cursor): a plain root never lands in a notifying
      pool, and a plain pool has no records. The plain fast paths
      (boxroot_weak_internal.h) never read `notify`: a plain weak root
      costs what it did, in time and memory.
   N2 Recording. The clearing (weak_clearing.c, clear_pool), when its
      compare-and-swap empties a slot of a notifying pool, sets the
      slot's bit in its pool's bitmap and, if the pool had no bit set,
      appends the pool to its owner's list of pools with notices
      (notify_emptied, weak_notify.h): O(1) per cleared root, no
      allocation (a GC hook must not depend on one that can fail). Only
      the owner, or its hooks, touches its pools' bitmaps and its list:
      hooks never run at once with its mutator (W3).
   N3 Reporting. boxroot_weak_next_emptied (here) takes the first set
      bit of the first listed pool, clears it (unlisting the pool when
      its last bit goes), and reports the slot iff it holds
      BOXROOT__WEAK_EMPTY and is not deleted (not a free link, so not
      quarantined either, and no delayed-free bit: remote.c). A slot
      holds BOXROOT__WEAK_EMPTY only after a clearing emptied its current
      root (W1: no program writes it), so:
      - a root deleted before its notice is collected is never reported,
        even if its slot has been handed out again (the new root is
        reported only if it emptied itself: its bit is then set, once);
      - a root refilled by boxroot_weak_modify before its notice is
        collected is not reported, unless it empties again; moved by
        modify (weak.c), the old slot is deleted and the new root is full;
      - each emptying is reported at most once, and the emptyings of one
        root between two of its reports (refilled in between) are
        reported once: its bit is set once.
      No order is promised: pools in the order of their first notice,
      slots in address order within a pool.
   N4 Exactly once. No notice is lost otherwise: a pool with notices is
      never given back (notify_may_retire; the clearing keeps it on its
      ring, weak_clearing.c); the list moves with the pools: a
      terminating domain appends its list to the orphans' list, under
      the orphans' lock, and the domain that adopts the orphans takes
      that list with them (weak_domain.c), so the notices of a
      terminated domain are reported by its adopter, after its next
      collection.
   N5 The word. Written when the root is created, copied when
      boxroot_weak_modify moves the root (weak.c), read by
      boxroot_weak_notifying_word and the report.
   N6 Teardown frees the records (boxroot__notify_release_all, from
      weak_domain.c's boxroot__weak_forget_all);
      every root must have been deleted before, so the notices left are
      only of deleted roots (N3).
   Costs: a word per slot of a notifying pool, and a bit (16.3 KiB per
   pool of 2000 slots, allocated with it; a lock taken when a pool's
   records are allocated or freed); creation takes a call (not
   inline); clearing tests one pointer per pool and, per cleared root of
   a notifying pool, the writes of N2; next_emptied reads the slot and
   its word per notice, and at most the pool's bitmap (32 words) per
   pool with notices: no chain of dependent loads from one notice to the
   next, unlike a linked queue, whose misses would add up (measured by
   make bench-weak: bench/results/weak/). */
#define CAML_INTERNALS
#define CAML_NAME_SPACE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include "alloc_failures.h"
#include "boxroot.h"
#include "checks.h"
#include "chunk.h"
#include "leaks.h"
#include "marking.h"
#include "status.h"
#include "weak_notify.h"

/* Makes `p` the current notifying pool; 0 if it has no room. */
static int make_current(struct weak_domain *wd, pool *p)
{
  if (pool_class(p) != WEAK_YOUNG || wd->nyoung != p) weak_move_to(wd, p, WEAK_YOUNG, 1);
  if (!pool_has_free(p) && !marking_thread_fresh(p)) return 0;
  wd->ncurrent = p;
  return 1;
}

/* As weak.c's refill (N1), the side records allocated first. */
pool *boxroot__notify_refill(struct weak_domain *wd, int id, void const *key)
{
  pool *p = wd->ncurrent;
  if (p != NULL) {
    if (pool_has_free(p) || marking_thread_fresh(p)) return p;
    if (weak_collect(wd, p) > 0 && pool_has_free(p)) return p;
    weak_move_to(wd, p, WEAK_YOUNG, 0);
    wd->ncurrent = NULL;
  }
  pool *o = wd->nold;
  if (o != NULL && pool_alloc_count(o) < POOL_LOW_MARK && make_current(wd, o)) return o;
  struct boxroot__notify_side *side = boxroot__notify_side_alloc();
  if (side == NULL) return NULL;
  pool *fresh = boxroot__weak_pool_new(wd, id, key, side);
  if (fresh == NULL) {
    boxroot__notify_side_free(side);
    return NULL;
  }
  make_current(wd, fresh);
  return fresh;
}

boxroot_weak boxroot__notify_create(value v, uintptr_t word)
{
  int id = boxroot__locked_domain_or_fail(
    "boxroot_weak_create_notifying: this thread does not hold the OCaml domain lock");
  if (id < 0) return NULL;
  if (!boxroot__running_or_fail()) return NULL;
  struct boxroot_domain *d = boxroot__domain_get(id);
  pool *p = d == NULL ? NULL : boxroot__notify_refill(&boxroot__weak_domains[id], id, d->key);
  if (p == NULL) {
    boxroot__fail(ENOMEM, "boxroot_weak_create_notifying: no pool for new roots (out of "
                  "memory, or this domain has terminated)");
    return NULL;
  }
  boxroot_weak w = boxroot__weak_pool_take(&p->hot, v);
  p->notify->word[notify_index(p, (void **)boxroot__weak_slot_of(w))] = word; /* N5 */
  return w;
}

boxroot_weak boxroot_weak_create_notifying(value v, uintptr_t word)
{
#if BOXROOT__IN_DEBUG_BUILD
  boxroot__debug_check_create("boxroot_weak_create_notifying", v);
#endif
  boxroot_weak w = boxroot__notify_create(v, word);
#if BOXROOT__IN_DEBUG_BUILD
  if (w != NULL) boxroot__leaks_record(w, (uintptr_t)__builtin_return_address(0));
#endif
  return w;
}

/* Deleted by another thread, the deletion not collected yet (remote.c:
   a deletion that happened before this sets its bit, then `pending`,
   unless the owner has collected it since, which frees the slot). */
static int deleted_remotely(pool *p, void **slot)
{
  if (boxroot__load(&p->delayed_pending, SEQ_CST) == 0) return 0;
  size_t i = (size_t)(slot - p->slots);
  return (boxroot__load(&p->delayed_bits[i / NOTIFY_BITS_PER_WORD], SEQ_CST) >> (i % NOTIFY_BITS_PER_WORD)) & 1;
}

/* Builds broken on purpose for tests (N3): one reports every second
   notice twice (its bit stays set); one takes a pool off the list of
   pools with notices once the bitmap word it reads is exhausted rather
   than the whole bitmap, so that its other notices, and the later ones
   of that pool (which is listed only when its count leaves 0), are
   never reported. */
#ifdef BOXROOT_TESTING_NOTIFY_REPEAT
#define REPEATS 1
#else
#define REPEATS 0
#endif
#ifdef BOXROOT_TESTING_NOTIFY_DROP
#define UNLISTS_BY_WORD 1
#else
#define UNLISTS_BY_WORD 0
#endif

/* N3. */
bool boxroot_weak_next_emptied(boxroot_weak *w, uintptr_t *word)
{
#if BOXROOT__IN_DEBUG_BUILD
  boxroot__debug_check_lock("boxroot_weak_next_emptied", w);
#endif
  int id = boxroot__locked_domain_or_fail(
    "boxroot_weak_next_emptied: this thread does not hold the OCaml domain lock");
  if (id < 0 || boxroot_status() != BOXROOT_RUNNING) return false;
  struct weak_domain *wd = boxroot__weak_domain_get(id);
  if (wd == NULL) return false;
  pool *p;
  while ((p = wd->emptied_head) != NULL) {
    struct boxroot__notify_side *side = p->notify;
    int k = side->scan;
    while (side->emptied[k] == 0) k++; /* count > 0: some bit is set */
    side->scan = k;
    uintptr_t bits = side->emptied[k];
    size_t i = (size_t)k * NOTIFY_BITS_PER_WORD + (size_t)__builtin_ctzl(bits);
    void **slot = &p->slots[i];
    int report = boxroot__load((value *)slot, RELAXED) == BOXROOT__WEAK_EMPTY
      && !deleted_remotely(p, slot);
    if (!(REPEATS && report && (wd->emptied_reported & 1) == 0)) {
      side->emptied[k] = bits & (bits - 1);
      side->count--;
      if (side->count == 0 || (UNLISTS_BY_WORD && side->emptied[k] == 0)) {
        wd->emptied_head = side->next;
        if (side->next == NULL) wd->emptied_tail = NULL;
        side->scan = 0;
      }
    }
    if (!report) continue;
    /* The next notice of this pool, read by the next call: its loads
       start while the caller works (the notices are scattered). */
    uintptr_t rest = bits & (bits - 1);
    int n = k;
    while (rest == 0 && ++n < DELAYED_WORDS) rest = side->emptied[n];
    if (rest != 0) {
      size_t j = (size_t)n * NOTIFY_BITS_PER_WORD + (size_t)__builtin_ctzl(rest);
      __builtin_prefetch(&p->slots[j]);
      __builtin_prefetch(&side->word[j]);
    }
    wd->emptied_reported++;
    *w = (boxroot_weak)boxroot__root_of(slot);
    *word = side->word[i];
    return true;
  }
  return false;
}

uintptr_t boxroot_weak_notifying_word(boxroot_weak w)
{
#if BOXROOT__IN_DEBUG_BUILD
  boxroot__debug_check_notifying("boxroot_weak_notifying_word", w);
#endif
  void **slot = (void **)boxroot__weak_slot_of(w);
  pool *p = pool_of_slot(slot);
  if (p->notify == NULL) return 0;
  return p->notify->word[notify_index(p, slot)];
}
