/* Remote deletion: lock-free, and never blocking a scan.

   A deletion is *local* when the deleting thread holds the lock of the
   domain that owns the pool: it pushes the slot on the pool's free list
   (inline fast path in boxroot_internal.h). Otherwise it is *remote*:
   either the thread holds another domain's lock (remote-domain), or no
   lock at all (purely remote: a C thread, a Rust destructor during a
   panic). Neither writes to the slot or to the owner's header line (the
   inline test reads the pool's shared line, pool.h), so both run in
   parallel with the owner's allocations and with a scan of the pool (the
   Boxroot paper, §3.2.2). A deletion sets the slot's bit in the pool's
   delayed-free bitmap; the owner frees the slots of the set bits later.

   Protocol. All operations on `bits`, `pending` and the owner's
   `delayed_flag` are sequentially consistent atomics (atomics.h; plain
   loads and locked RMWs on x86-64). Publishing a set `b` of deleted
   slots of one bitmap word w:
     deleter (any thread)              owner (lock held, or stop-the-world)
     D1 fetch_or(bits[w], b)           C1 if load(pending) == 0: stop
     D2 if load(pending) == 0 and      C2 exchange(pending, 0)
          exchange(pending, 1) == 0:   C3 for each w with bits[w] != 0:
     D3   store(owner's delayed_flag, 1)     b = exchange(bits[w], 0),
                                             free the slots of b
   (C1 inline in remote.h, C2 and C3 in boxroot__remote_collect.)
   Who publishes when:
   - Purely remote: each deletion publishes its own slot at once.
   - Remote-domain: the deleting domain gathers its deletions in its
     cursor (boxroot_internal.h) as a *run*: the word `run_word` and the
     bits `run_bits` deleted there, plain fields that only the holder of
     its lock and its scan hook touch. A deletion in the run's word only
     sets its bit (R1); one in another word publishes the run and starts
     a new one with its own bit (R2). The run is also published first
     thing in each of the domain's scans (scan.c), and when it terminates
     (domain.c); after that, each of its deletions publishes its own slot
     at once (boxroot__remote_terminate). A batch of roots deleted in the
     order they were created thus costs one D1 per 64 roots, and no
     atomic operation otherwise.
   Invariants and why:
   - Until the owner frees it (C3), a deleted slot still holds its value
     and still counts in pool_alloc_count, whether it is in a run or
     published: it is scanned like a live root and the pool cannot be
     emptied and recycled under the deleter. So a run may name a pool
     of any domain, its own included (tests call this path directly).
   - No deletion is lost: if D2 sees pending == 1, that store precedes C2
     in the total order, so C3 (after C2) sees D1; if D2 sets pending, the
     next C1 sees it. That takes the total order of SEQ_CST (atomics.h,
     store buffering): D1 then D2's load, and C2 then C3's loads, each
     write one word and then read the other; under release/acquire D2
     may read a stale pending == 1 while C3 misses D1, and the slot would
     wait for a later deletion in the pool, which may never come (its
     value kept alive meanwhile). A run is published by its domain's
     next scan at the latest, so a remote deletion's value stops being
     kept alive at the owner's first scan after that one: one collection
     later than a local deletion's, at most two for a remote-domain one
     (the owner may scan before the deleter publishes, in the same
     stop-the-world section).
   - D3 tells the owner that an old pool needs collecting (young pools are
     collected at every minor scan and, the last few filled, when the
     owner needs room while its flag is raised: domain.c; on OCaml 4.14
     every pool at every major scan). A deleter may read a stale owner if the pool was orphaned
     meanwhile; the adopting domain then sets its own flag (domain.c),
     and in any case every pool is collected within a bounded number of
     cycles: on OCaml 5 by the aging hand of the owner's minor scans
     (marking.c, S; scan.c), on 4.14 at the next major scan. A domain publishes its
     run before it adopts orphans (scan.c), so its own run never names a
     pool it owns by adoption.
   - After D1, the deleter may still touch `pending` and the flag of a pool
     that has since been emptied and recycled. That is harmless: pools are
     never unmapped before teardown (chunk.h), and a spurious `pending`
     costs one look at the bitmap.
   Cost: a purely remote deletion does one RMW on the bitmap and one load
   of `pending`; a remote-domain one, a few instructions on its cursor's
   line while the run goes on, and the same once per run. Once per pool
   and collection, one more RMW and a store. No CAS loop, no mutex.
   Collecting writes each freed slot (its free-list link), a bitmap
   word's slots in one pass, and reads them only while the pool has the
   deletion barrier's bit (marking.c, M3), not whenever some pool may be
   marked: in bench/src/parallel.ml's prodcons mode with 2 domains, whose
   major cycles follow each other without pause, that cut the owner's
   collection from 3.9 to 1.3 ns per root (bench/tools/perf_parallel.py;
   bench/README.md, "Scaling to many domains"). What remains is mostly
   the wait for each slot's line, which the deleting domain read last.

   Statistics: a remote-domain deletion counts in the deleting domain's
   cursor when its run is published (readers add the current run). A
   purely remote one counts in a counter of
   the deleting thread, so that parallel deleters share no cache line;
   each thread links its counter into `thread_counts` at its first such
   deletion, and folds it into `exited_threads_count` when it exits (a
   pthread key destructor; deletions by destructors that run later count
   there directly, as do those of a thread for which no key could be
   set: out of memory). Readers sum them under `counts_lock`. */
#include <pthread.h>
#include "alloc_failures.h"
#include "asserts.h"
#include "barrier.h"
#include "boxroot.h"
#include "checks.h"
#include "remote.h"
#include "window.h"

struct thread_count {
  long n;          /* written by its thread only; atomic, relaxed (statistics) */
  struct thread_count *next, *prev;  /* under counts_lock */
};
/* Initial-exec, like the runtime's own Caml_state: no call to reach them,
   hence no register to save on the remote paths. */
static __thread struct thread_count my_count __attribute__((tls_model("initial-exec")));
/* Whether my_count is in thread_counts; after this thread's key
   destructor ran, deletions (by later destructors) count in the total. */
static __thread enum { UNLINKED, LINKED, EXITED } my_count_state
  __attribute__((tls_model("initial-exec")));
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

static int thread_exit_key_made; /* written once, in pthread_once */

static void make_thread_exit_key(void)
{
  thread_exit_key_made = !boxroot__allocation_fails(BOXROOT__ALLOC_THREAD_KEY)
    && pthread_key_create(&thread_exit_key, unlink_my_count) == 0;
}

/* Links my_count, if the key's destructor will unlink it: without the
   key (none could be made) or this thread's value for it (out of
   memory), the link would outlive the thread, and the thread counts as
   one that exited. */
static void link_my_count(void)
{
  pthread_once(&thread_exit_key_once, make_thread_exit_key);
  if (!thread_exit_key_made || boxroot__allocation_fails(BOXROOT__ALLOC_THREAD_SPECIFIC)
      || pthread_setspecific(thread_exit_key, &my_count) != 0) {
    my_count_state = EXITED;
    return;
  }
  pthread_mutex_lock(&counts_lock);
  my_count.next = thread_counts.next;
  my_count.prev = &thread_counts;
  thread_counts.next->prev = &my_count;
  thread_counts.next = &my_count;
  pthread_mutex_unlock(&counts_lock);
  my_count_state = LINKED;
}

/* Counts a purely remote deletion: the first of this thread, or one made
   after its key destructor ran (or with no key: link_my_count). */
static void count_purely_remote_slow(void)
{
  if (my_count_state == UNLINKED) link_my_count();
  if (my_count_state == LINKED) {
    boxroot__store(&my_count.n, 1, RELAXED);
    return;
  }
  pthread_mutex_lock(&counts_lock);
  exited_threads_count++;
  pthread_mutex_unlock(&counts_lock);
}

#define BITS_PER_WORD (8 * sizeof(uintptr_t))

/* D1-D3 for the slots `bits` of `word`, a word of `p`'s bitmap; D3
   raises the flag that `owner_flag` gives for the pool's owner. */
static inline void publish_to(pool *p, uintptr_t *word, uintptr_t bits,
                              int *(*owner_flag)(int owner))
{
  uintptr_t before = boxroot__fetch_or(word, bits, SEQ_CST);          /* D1 */
  debug_check_remote_delete(p, word, before & bits);
  BOXROOT__WINDOW(BOXROOT__AT_REMOTE_PUBLISH, boxroot__load(&p->shared.owner, RELAXED));
  if (boxroot__load(&p->delayed_pending, SEQ_CST) == 0
      && boxroot__exchange(&p->delayed_pending, 1, SEQ_CST) == 0) {  /* D2 */
    int owner = boxroot__load(&p->shared.owner, RELAXED);
    int *flag = owner >= 0 ? owner_flag(owner) : NULL;
    if (flag != NULL) boxroot__store(flag, 1, SEQ_CST);               /* D3 */
  }
}

void boxroot__remote_publish(pool *p, uintptr_t *word, uintptr_t bits,
                             int *(*owner_flag)(int owner))
{
  publish_to(p, word, bits, owner_flag);
}

struct boxroot__remote_flag boxroot__remote_flags[BOXROOT__MAX_DOMAINS];

static void publish(pool *p, uintptr_t *word, uintptr_t bits)
{
  publish_to(p, word, bits, remote_owner_flag);
}

static void publish_run(struct boxroot__alloc_cursor *c)
{
  uintptr_t bits = c->run_bits;
  if (bits == 0) return;
  c->deleted_remote += __builtin_popcountl(bits);
  publish(pool_of_slot(c->run_word), c->run_word, bits);
  c->run_bits = 0;
}

void boxroot__remote_flush(int dom)
{
  publish_run(&boxroot__alloc_cursor[dom]);
}

/* Per domain id: 1 + the unique id of its incarnation that ran its
   terminated hook, or 0. Written by that incarnation, read by threads
   holding the lock of the id's current incarnation. After that hook the
   domain still runs finalisers (of its young custom blocks, in its last
   minor collection) whose deletions no later scan of it would publish:
   it publishes them at once instead of gathering runs. */
static uintnat terminated_incarnation[BOXROOT__MAX_DOMAINS];

void boxroot__remote_terminate(int dom)
{
  struct boxroot__alloc_cursor *c = &boxroot__alloc_cursor[dom];
  publish_run(c);
  c->run_word = NULL; /* no word: R1 misses, R2 publishes */
  terminated_incarnation[dom] = boxroot__compat_domain_unique_id() + 1;
}

/* R2. Out of line: R1 then needs no register saved. */
static __attribute__((noinline))
void start_run(struct boxroot__alloc_cursor *c, uintptr_t *word, uintptr_t bit)
{
  publish_run(c);
  if (terminated_incarnation[c - boxroot__alloc_cursor]
      == boxroot__compat_domain_unique_id() + 1) {
    c->deleted_remote++;
    publish(pool_of_slot(word), word, bit);
    return;
  }
  c->run_word = word;
  c->run_bits = bit;
}

static __attribute__((noinline))
void delete_purely_remote_slow(pool *p, uintptr_t *word, uintptr_t bit)
{
  count_purely_remote_slow();
  publish(p, word, bit);
}

/* Whether `key` owns `p`: then its stamp is not current (the fast path
   failed), and the owner's slow path runs the barrier (barrier.c). */
static inline int owned(pool *p, void const *key)
{
  return BOXROOT__COMPAT_DELETION_BARRIER
    && boxroot__owner_word_key(boxroot__owner_word_relaxed(&p->shared)) == key;
}

/* The deletion of `slot` by a thread that is not known to own its pool:
   `key` is its lock key. Every path ends in a tail call or in R1, so that
   none saves a register. `check_owner`: whether `key` may be the owner's
   (boxroot_delete's slow path, which the owner takes while its pool's
   stamp is not current: barrier.c); R1 comes first all the same, since a run
   may name any pool. */
static inline __attribute__((always_inline))
void delete_not_local(void **slot, void const *key, int check_owner)
{
  pool *p = pool_of_slot(slot);
  size_t i = (size_t)(slot - p->slots);
  uintptr_t *word = &p->delayed_bits[i / BITS_PER_WORD];
  uintptr_t bit = (uintptr_t)1 << (i % BITS_PER_WORD);
  if (BOXROOT__LIKELY(key != NULL)) {
    struct boxroot__alloc_cursor *c = &boxroot__alloc_cursor[boxroot__compat_key_domain(key)];
    if (BOXROOT__LIKELY((void *)word == c->run_word)) {               /* R1 */
      debug_check_remote_delete(p, word, c->run_bits & bit);
      c->run_bits |= bit;
    } else if (check_owner && owned(p, key)) {
      boxroot__barrier_delete_owned(p, slot, key);
    } else {
      start_run(c, word, bit);                                       /* R2 */
    }
    return;
  }
  if (BOXROOT__LIKELY(my_count_state == LINKED)) {
    long n = boxroot__load(&my_count.n, RELAXED);
    boxroot__store(&my_count.n, n + 1, RELAXED);
    publish(p, word, bit);
  } else {
    delete_purely_remote_slow(p, word, bit);
  }
}

void boxroot__delete_other(boxroot r)
{
  delete_not_local(boxroot__slot_of(r), boxroot__compat_lock_key(), 1);
}

void boxroot__delete_remote(boxroot r, void const *key)
{
  delete_not_local(boxroot__slot_of(r), key, 0);
}

/* After C1 (boxroot__remote_free_delayed, remote.h) found a deletion
   pending. */
int boxroot__remote_collect(pool *p, boxroot__domain_state *barrier_state)
{
  boxroot__exchange(&p->delayed_pending, 0, SEQ_CST);               /* C2 */
  BOXROOT__WINDOW(BOXROOT__AT_REMOTE_COLLECT, pool_owner(p));
  int freed = 0;
  for (int w = 0; w < DELAYED_WORDS; w++) {                         /* C3 */
    if (boxroot__load(&p->delayed_bits[w], SEQ_CST) == 0) continue;
    uintptr_t bits = boxroot__exchange(&p->delayed_bits[w], 0, SEQ_CST);
    void **base = &p->slots[w * BITS_PER_WORD];
    debug_check_delayed_frees(p, base, bits);
    /* Slot by slot while the barrier is needed: a snapshot of the pool
       (barrier.c) may end it midway. */
    for (; bits != 0 && barrier_needed_to_collect(barrier_state, p); bits &= bits - 1) {
      boxroot__barrier_owner(p, base + __builtin_ctzl(bits), barrier_state);
      freed += pool_free_slots(p, base, bits & -bits);
    }
    freed += pool_free_slots(p, base, bits);
  }
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
