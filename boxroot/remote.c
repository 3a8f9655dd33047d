/* Remote deletion: lock-free, and never blocking a scan.

   A deletion is *local* when the deleting thread holds the lock of the
   domain that owns the pool: it pushes the slot on the pool's free list
   (inline fast path in boxroot.h). Otherwise it is *remote*: either the
   thread holds another domain's lock (remote-domain), or no lock at all
   (purely remote: a C thread, a Rust destructor during a panic). Both
   take the same path, which never writes to the slot or to the owner's
   header line, so it can run in parallel with the owner's allocations
   and with a scan of the pool (the Boxroot paper, §3.2.2):

   Protocol. All operations on the fields below are sequentially
   consistent atomics (atomics.h; plain loads and locked RMWs on x86-64).
     deleter (any thread)              owner (lock held, or stop-the-world)
     D1 fetch_or(bits[w], bit)         C1 if load(pending) == 0: stop
     D2 if load(pending) == 0 and      C2 exchange(pending, 0)
          exchange(pending, 1) == 0:   C3 for each w with bits[w] != 0:
     D3   store(owner's delayed_flag, 1)     b = exchange(bits[w], 0),
                                             free the slots of b
   - D1 is the deletion. Until the owner collects it, the slot still holds
     its value and is still counted in pool_alloc_count, so it is scanned like
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
   mutex.

   Statistics: a remote-domain deletion counts in the deleting domain's
   cursor (its lock is held). A purely remote one counts in a counter of
   the deleting thread, so that parallel deleters share no cache line;
   each thread links its counter into `thread_counts` at its first such
   deletion, and folds it into `exited_threads_count` when it exits (a
   pthread key destructor; deletions by destructors that run later count
   there directly). Readers sum them under `counts_lock`. */
#include <pthread.h>
#include "boxroot.h"
#include "checks.h"
#include "domain.h"
#include "remote.h"

struct thread_count {
  long n;          /* written by its thread only; atomic, relaxed */
  struct thread_count *next, *prev;  /* under counts_lock */
};
static __thread struct thread_count my_count;
/* Whether my_count is in thread_counts; after this thread's key
   destructor ran, deletions (by later destructors) count in the total. */
static __thread enum { UNLINKED, LINKED, EXITED } my_count_state;
static pthread_mutex_t counts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct thread_count thread_counts = { 0, &thread_counts, &thread_counts };
static long exited_threads_count;
static pthread_key_t thread_exit_key;
static pthread_once_t thread_exit_key_once = PTHREAD_ONCE_INIT;

static void unlink_my_count(void *c)
{
  struct thread_count *mine = c;
  pthread_mutex_lock(&counts_lock);
  exited_threads_count += boxroot__load(&mine->n, RELAXED);
  mine->prev->next = mine->next;
  mine->next->prev = mine->prev;
  pthread_mutex_unlock(&counts_lock);
  boxroot__store(&mine->n, 0, RELAXED);
  my_count_state = EXITED;
}

static void make_thread_exit_key(void)
{
  pthread_key_create(&thread_exit_key, unlink_my_count);
}

static void link_my_count(void)
{
  pthread_once(&thread_exit_key_once, make_thread_exit_key);
  pthread_mutex_lock(&counts_lock);
  my_count.next = thread_counts.next;
  my_count.prev = &thread_counts;
  thread_counts.next->prev = &my_count;
  thread_counts.next = &my_count;
  pthread_mutex_unlock(&counts_lock);
  pthread_setspecific(thread_exit_key, &my_count);
  my_count_state = LINKED;
}

static void count_purely_remote(void)
{
  if (BOXROOT__LIKELY(my_count_state == LINKED)) {
    long n = boxroot__load(&my_count.n, RELAXED);
    boxroot__store(&my_count.n, n + 1, RELAXED);
  } else if (my_count_state == UNLINKED) {
    link_my_count();
    count_purely_remote();
  } else {
    pthread_mutex_lock(&counts_lock);
    exited_threads_count++;
    pthread_mutex_unlock(&counts_lock);
  }
}

void boxroot__delete_remote(boxroot r)
{
  void **slot = (void **)r;
  pool *p = pool_of_slot(slot);
  size_t i = (size_t)(slot - p->slots);
  size_t w = i / (8 * sizeof(uintptr_t)), b = i % (8 * sizeof(uintptr_t));
  uintptr_t bit = (uintptr_t)1 << b;
  uintptr_t before = boxroot__fetch_or(&p->delayed_bits[w], bit, SEQ_CST); /* D1 */
  debug_check_remote_delete(r, (before & bit) != 0);
  if (boxroot__load(&p->delayed_pending, SEQ_CST) == 0
      && boxroot__exchange(&p->delayed_pending, 1, SEQ_CST) == 0) {  /* D2 */
    int owner = boxroot__load(&p->hot.owner, RELAXED);
    if (owner >= 0) {
      struct boxroot_domain *d = boxroot__load(&boxroot__domains[owner], ACQUIRE);
      if (d != NULL) boxroot__store(&d->delayed_flag, 1, SEQ_CST);   /* D3 */
    }
  }
  int dom = boxroot__compat_locked_domain();
  if (dom >= 0) boxroot__alloc_cursor[dom].deleted_remote++;
  else count_purely_remote();
}

int boxroot__remote_collect(struct boxroot_domain *d, pool *p)
{
  if (boxroot__load(&p->delayed_pending, SEQ_CST) == 0) return 0;   /* C1 */
  boxroot__exchange(&p->delayed_pending, 0, SEQ_CST);               /* C2 */
  int freed = 0;
  for (int w = 0; w < DELAYED_WORDS; w++) {                         /* C3 */
    if (boxroot__load(&p->delayed_bits[w], SEQ_CST) == 0) continue;
    uintptr_t bits = boxroot__exchange(&p->delayed_bits[w], 0, SEQ_CST);
    while (bits != 0) {
      int b = __builtin_ctzl(bits);
      bits &= bits - 1;
      void **slot = &p->slots[w * 8 * sizeof(uintptr_t) + b];
      debug_check_delayed_free(p, slot);
      pool_free_slot(p, slot);
      freed++;
    }
  }
  d->stats.delayed_frees_collected += freed;
  return freed;
}

long boxroot__remote_purely_remote_deletes(void)
{
  pthread_mutex_lock(&counts_lock);
  long n = exited_threads_count;
  for (struct thread_count *c = thread_counts.next; c != &thread_counts; c = c->next)
    n += boxroot__load(&c->n, RELAXED);
  pthread_mutex_unlock(&counts_lock);
  return n;
}
