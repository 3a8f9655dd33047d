/* Remote deletion: lock-free, and never blocking a scan.

   A deletion is *local* when the deleting thread holds the lock of the
   domain that owns the pool: it pushes the slot on the pool's free list
   (inline fast path in boxroot.h). Otherwise it is *remote*: either the
   thread holds another domain's lock (remote-domain), or no lock at all
   (purely remote: a C thread, a Rust destructor during a panic). Both
   take the same path, which never writes to the slot or to the owner's
   header line, so it can run in parallel with the owner's allocations
   and with a scan of the pool (seed 000, footnote 9):

   Protocol. All operations on the fields below are sequentially
   consistent atomics (plain loads and locked RMWs on x86-64).
     deleter (any thread)              owner (lock held, or stop-the-world)
     D1 fetch_or(bits[w], bit)         C1 if load(pending) == 0: stop
     D2 if load(pending) == 0 and      C2 exchange(pending, 0)
          exchange(pending, 1) == 0:   C3 for each w with bits[w] != 0:
     D3   store(owner's delayed_flag, 1)     b = exchange(bits[w], 0),
                                             free the slots of b
   - D1 is the deletion. Until the owner collects it, the slot still holds
     its value and is still counted in alloc_count, so it is scanned like
     a live root (its value lives one collection longer) and the pool
     cannot be emptied and recycled under the deleter.
   - No deletion is lost: if D2 sees pending == 1, that store precedes C2
     in the total order, so C3 (after C2) sees D1; if D2 sets pending, the
     next C1 sees it.
   - D3 tells the owner that an old pool needs collecting (young pools are
     collected at every minor scan, every pool at every major scan). A
     deleter may read a stale owner if the pool was orphaned meanwhile;
     the adopting domain then sets its own flag (domain.c), and in any
     case the next major scan collects every pool.
   - After D1, the deleter may still touch `pending` and the flag of a pool
     that has since been emptied and recycled. That is harmless: pools are
     never unmapped before teardown (chunk.h), and a spurious `pending`
     costs one look at the bitmap.
   Cost of a remote deletion: one RMW on the bitmap, one load, and one
   more RMW and a store once per pool and collection. No CAS loop, no
   mutex. */
#include "boxroot.h"
#include "debug.h"
#include "domain.h"
#include "remote.h"

static atomic_long purely_remote_deletes;

void boxroot_delete_remote(boxroot r)
{
  void **slot = (void **)r;
  pool *p = pool_of_slot(slot);
  size_t i = (size_t)(slot - p->slots);
  size_t w = i / (8 * sizeof(uintptr_t)), b = i % (8 * sizeof(uintptr_t));
  uintptr_t bit = (uintptr_t)1 << b;
  uintptr_t before = atomic_fetch_or(&p->delayed_bits[w], bit);     /* D1 */
  debug_check_remote_delete(r, (before & bit) != 0);
  if (atomic_load(&p->delayed_pending) == 0
      && atomic_exchange(&p->delayed_pending, 1) == 0) {             /* D2 */
    int owner = __atomic_load_n(&p->hot.owner, __ATOMIC_RELAXED);
    if (owner >= 0) {
      struct boxroot_domain *d = __atomic_load_n(&boxroot_domains[owner], __ATOMIC_ACQUIRE);
      if (d != NULL) atomic_store(&d->delayed_flag, 1);              /* D3 */
    }
  }
  int dom = boxroot_compat_locked_domain();
  if (dom >= 0) boxroot_alloc_cursor[dom].deleted_remote++;
  else atomic_fetch_add_explicit(&purely_remote_deletes, 1, memory_order_relaxed);
}

int remote_collect(pool *p)
{
  if (atomic_load(&p->delayed_pending) == 0) return 0;              /* C1 */
  atomic_exchange(&p->delayed_pending, 0);                          /* C2 */
  int freed = 0;
  for (int w = 0; w < DELAYED_WORDS; w++) {                         /* C3 */
    if (atomic_load(&p->delayed_bits[w]) == 0) continue;
    uintptr_t bits = atomic_exchange(&p->delayed_bits[w], 0);
    while (bits != 0) {
      int b = __builtin_ctzl(bits);
      bits &= bits - 1;
      void **slot = &p->slots[w * 8 * sizeof(uintptr_t) + b];
      debug_check_delayed_free(p, slot);
      pool_free_slot(p, slot);
      freed++;
    }
  }
  return freed;
}

long remote_purely_remote_deletes(void)
{
  return atomic_load_explicit(&purely_remote_deletes, memory_order_relaxed);
}
