/* Marking pools incrementally (OCaml 5; ocaml_compat.h says where the
   runtime allows it, and compat_ocaml5.c holds the calls into it).

   OCaml 5 starts each major cycle by darkening every root inside a
   stop-the-world section; darkening slot by slot would stop every domain
   for a time proportional to the number of roots. Instead the scan hook
   gives the runtime's incremental marker each pool as one OCaml block
   whose fields are its slots, and these blocks as the fields of one
   block per domain, its directory; the marker reads them in later
   slices, as it reads the fields of arrays. What makes that correct:

   M0 The mark stack's bound. The runtime sizes each domain's mark stack
      by that domain's own major heap, which does not count our pools,
      and it does not grow a stack that holds only entries of more than
      64 words: pushing one entry per pool overflowed it (the write past
      its end corrupted the heap) with about 4,000 pools on a small heap.
      So the hook darkens one block per domain, the directory, whose
      fields are the domain's pools: one mark-stack entry. The marker then
      takes pools from the directory as it takes any block's fields,
      through its prefetch buffer of 256 values, and pushes a pool's
      remaining range only when that buffer is full: at most about 256
      pool entries and one directory entry are on a stack at any time,
      whatever the number of pools (under 1/16 of the stack's initial
      4096 entries). The directory is a C array laid out as a block (its
      header, then the pools' first slots), filled by the owner's hook at
      each cycle start and read by the marker until that cycle's marking
      is over; so it is reallocated only at a cycle start, and freed at
      teardown, after boxroot__marking_quiesce. A domain whose directory
      cannot grow (out of memory), or whose hook darkens twice in one
      cycle, marks the pools that do not fit slot by slot (scan.c).
   M1 Shape and colour. The word before a pool's first slot is a block
      header (pool.h), written by the owner's hook at each cycle start
      as the pool goes into the directory: tag 0, wosize = `fresh -
      slots`, and the cycle's UNMARKED status, so that the marker that
      reaches it through the directory marks it and pushes its fields.
      Nothing else ever reads this header: no OCaml value points
      into a pool (the debug build rejects such values), the sweeper walks
      only the runtime's own pools, and compaction and heap verification
      reach our slots through the hook, slot by slot (scan.c). So its
      colour never has to be kept valid across cycles (the runtime
      rotates their meaning): free, orphaned, recycled and new pools need
      no colour, since each cycle start writes the header afresh.
   M2 Readable fields. From its cycle start until marking ends, a domain's
      marker may read its directory and any slot of the pools listed
      there (the range up to `fresh` as it was then), at any time
      (also one slot at a time, after mark_stack_prune compressed a range
      into addresses). Every such word is an OCaml value or odd: allocated
      slots hold values (immediates and young blocks are ignored), free
      slots odd links (pool.h); slots at or above `fresh` at the cycle
      start are not in the range. The pool's header, once the marker
      reached it, is not read again. The range stays mapped and is never
      decommitted (a decommitted page reads 0, a pointer to the marker)
      while the flag below is up (chunk.c), and is unmapped only at
      teardown, which first completes the cycle (boxroot__marking_quiesce). A pool
      emptied and recycled during the cycle (freed, given to another
      domain, reset) still holds only links and values: pool_reset only
      moves `fresh` back, and pool_thread_fresh writes links.
   M3 Snapshot. OCaml 5 marks every block reachable at the cycle start
      (plus the blocks allocated since, which are born marked, also when
      promoted by a minor collection), provided every pointer overwritten
      during marking is darkened first, as caml_modify does. A slot
      pushed at the cycle start but read later is such a pointer. So:
      - When its hook enlists a pool in the directory, the owner sets the
        barrier bit of the pool's owner word (boxroot_internal.h;
        pool_set_owner keeps it when the pool changes hands). The
        owner's deletions then miss the fast path's key comparison, and
        every modification tests the bit (boxroot_internal.h): both come
        here first.
      - The owner (boxroot__marking_owner_barrier) darkens the old value
        of the slot, on its own mark stack. Once the pool has run
        barriers for more than 1/SNAPSHOT_AFTER_BARRIERS of its slots
        handed out, it darkens every value in the pool instead and
        clears the bit: each value that was in the pool at the cycle
        start is then marked, darkened, or gone through a barrier, and
        later deletions and modifications of the pool take the fast
        path. The bit is cleared with release, read with acquire, so
        that a thread that sees it clear follows that darkening.
      - Another domain modifying one of the pool's roots while the bit is
        set darkens that root's old value only: it must not read the
        slots that the owner writes.
      - Remote deletions never write the slot (remote.c): its value stays
        there until the owner collects the deletion, which runs the
        owner's barrier above while the pool has the bit
        (marking_collect_needs_barrier), except at the cycle start,
        where the deletions collected precede the snapshot.
      - After marking, a bit still set is cleared by the owner's next
        deletion, modification or collected remote deletion in the pool,
        without darkening.
      Filling a slot needs no barrier: the new value is in the snapshot,
      or allocated during the cycle and therefore marked. The cycle starts
      with a minor collection, so pushed pools hold no young value then;
      young values stored later are ignored by the marker.
   M4 The flag. `boxroot__marking_epoch` is 0 unless some domain's mark
      stack may hold pools. Directories are pushed only when a cycle
      starts marking (below), and a
      domain's stack is empty once its `marking_done` is set. So each
      domain's hook, always stop-the-world, counts its domain when it
      enlists a pool (and sets the flag to the cycle's epoch), and
      uncounts it at a later scan that finds its marking done; so does
      the barrier's slow path, on the domain whose lock it holds (its
      hook never runs meanwhile). The flag drops to 0 with the count.
      Once the runtime's Phase_sweep_and_mark_main is over, every
      domain's marking is done: a hook that sees a later phase resets the
      count, which also uncounts domains that terminated meanwhile; a
      new cycle's first count starts from 0 too. In the stop-the-world
      section that starts marking, the minor collection (whose hooks may
      reset) and the root marking (which counts) are separated by a
      global barrier. Changes take `count_lock`, readers none. The flag
      errs only on the side of being up: barriers then darken blocks that
      are already marked, which costs a header read.
   Two shapes of cycle. What "the cycle start" means above is the
   stop-the-world section in which the runtime darkens the roots, with
   the minor heaps just emptied: the section that starts the cycle on
   OCaml 5.1-5.4 (caml_major_cycles_completed is incremented there, then
   each domain's roots are darkened). OCaml 5.5 starts each cycle with a
   sweep-only phase (Phase_sweep_main): the cycle's count is incremented
   at its start, but the roots are darkened later, in the stop-the-world
   section of a minor collection (caml_mark_roots_stw, after the
   promotion and behind a global barrier that switches the phase to
   Phase_sweep_and_mark_main). The arguments hold for both:
   - the darkening hook still runs once per domain and cycle, with the
     minor heaps empty (M3), and the cycle's count no longer changes
     until the next cycle, so a directory is filled once per cycle (M0);
   - during the sweep-only phase no pool is on a mark stack: hooks see a
     phase other than Phase_sweep_and_mark_main and lower the flag (M4),
     barrier bits left from the previous cycle are cleared without
     darkening, and pools created or filled then are simply in the
     snapshot taken when marking starts, as is every value they hold
     (on 5.5, blocks allocated before marking starts are born unmarked,
     and are marked only if reachable then);
   - domains that terminate or start during the sweep-only phase leave
     orphans that the other domains adopt at their next scan, before
     they enlist their pools; teardown completes the whole cycle
     (caml_finish_major_cycle) whichever phase it is in.
   The version-specific calls are in compat_ocaml5.c.
   Cost outside marking: one load, one test and one branch in
   boxroot_modify, nothing in boxroot_delete (the barrier bit is found
   by the key comparison that it already makes); none on OCaml 4.14,
   where pools are marked slot by slot (ocaml_compat.h). Measured with
   bench/tools/callgrind.sh against slot-by-slot marking (together with
   the odd free-list links of pool.h): local_roots +1.2..3.0% instructions,
   synthetic -1.7%, perm_count -13%, globroots +8% (its marking reads all
   slots handed out, where the slot-by-slot scan stopped at the last
   root), ops +14% (it runs its loops right after Gc.full_major, in
   marking that never ends as they do not allocate).

   Domains: each domain's hook puts the pools it owns (orphans are
   adopted first: domain.c) in its own directory, on its own stack. A
   domain that terminates during marking finishes its marking before it
   goes (runtime), reading pools that others may have adopted meanwhile:
   harmless by M2. */
#include <pthread.h>
#include <stdlib.h>
#include "invariants.h"
#include "marking.h"

uint32_t boxroot__marking_epoch; /* the flag (M4): 0, or `epoch` */

/* Under count_lock: the epoch of the latest cycle in which a pool was
   pushed, how many domains may still hold pools, and the epoch in which
   each domain was counted (0: not counted). counted_in[id] is written
   only for domain id (its hook, or a thread holding its lock), which may
   read it without the lock. */
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t epoch;
static int count;
static uint32_t counted_in[BOXROOT__MAX_DOMAINS];

/* The epoch of the current cycle: increases at every cycle start; never
   0 (wraps after 2^32 cycles). */
static uint32_t current_epoch(void) { return boxroot__compat_cycle() + 1; }

/* Cycle start, domain id's hook: its stack is about to hold pools. */
static void count_domain(int id)
{
  uint32_t e = current_epoch();
  pthread_mutex_lock(&count_lock);
  if (epoch != e) {
    epoch = e;
    count = 0; /* the previous cycle's marking is over */
  }
  if (counted_in[id] != e) {
    counted_in[id] = e;
    count++;
  }
  boxroot__store(&boxroot__marking_epoch, e, RELAXED);
  pthread_mutex_unlock(&count_lock);
}

/* Domain id's stack holds no pool any more. */
static void uncount_domain(int id)
{
  pthread_mutex_lock(&count_lock);
  if (counted_in[id] == epoch && count > 0 && --count == 0)
    boxroot__store(&boxroot__marking_epoch, 0, RELAXED);
  counted_in[id] = 0;
  pthread_mutex_unlock(&count_lock);
}

/* No stack holds a pool any more. */
static void reset_count(void)
{
  pthread_mutex_lock(&count_lock);
  count = 0;
  boxroot__store(&boxroot__marking_epoch, 0, RELAXED);
  pthread_mutex_unlock(&count_lock);
}

/* If the domain of `state` (this thread's, or its hook's) has finished
   marking, uncounts it. */
static void uncount_if_done(boxroot__domain_state *state)
{
  int id = boxroot__compat_domain_id(state);
  if (counted_in[id] != 0 && boxroot__compat_marking_done(state)) uncount_domain(id);
}

/* A directory's first capacity, in pools (it doubles as needed). */
#define DIRECTORY_MIN_FIELDS 64

/* The directories (M0): one per domain id. `epoch` is the cycle whose
   marking may read `block` (0: none), `capacity` the fields `block` has
   room for, `count` those written so far at this cycle start, `open`
   whether this cycle start is filling it. Only domain id's hook touches
   its entry. */
struct directory {
  uintptr_t *block; /* block[0]: the header; then the pools' first slots */
  size_t capacity, count;
  uint32_t epoch;
  int open;
};
static struct directory directories[BOXROOT__MAX_DOMAINS];

#ifdef BOXROOT_TESTING
static long directory_growths_allowed = -1; /* testing.h; atomic */
void boxroot__testing_fail_directory_growth_after(long n)
{
  boxroot__store(&directory_growths_allowed, n, SEQ_CST);
}
static int directory_growth_fails(void)
{
  return boxroot__injected_failure(&directory_growths_allowed);
}
#else
static int directory_growth_fails(void) { return 0; }
#endif

void boxroot__marking_directory_open(boxroot__domain_state *domain_state)
{
  struct directory *dir = &directories[boxroot__compat_domain_id(domain_state)];
  /* A second darkening scan in one cycle finds this cycle's directory
     perhaps under the marker's eyes: it marks its pools slot by slot. */
  dir->open = dir->epoch != current_epoch();
  dir->count = 0;
}

/* Room for one more field; false if memory is short. The block may move:
   no marker reads it (M0). */
static int directory_reserve(struct directory *dir)
{
  if (dir->count < dir->capacity) return 1;
  size_t capacity = dir->capacity == 0 ? DIRECTORY_MIN_FIELDS : 2 * dir->capacity;
  uintptr_t *block = directory_growth_fails() ? NULL
    : realloc(dir->block, (capacity + 1) * sizeof(uintptr_t));
  if (block == NULL) return 0;
  dir->block = block;
  dir->capacity = capacity;
  return 1;
}

long boxroot__marking_enlist_pool(pool *p, boxroot__domain_state *domain_state)
{
  if (pool_alloc_count(p) == 0) return 0;
  int id = boxroot__compat_domain_id(domain_state);
  struct directory *dir = &directories[id];
  /* The owner's hook enlists its own pools (M0, M1). */
  BOXROOT__ASSERT(pool_owner(p) == id);
  if (!dir->open || !directory_reserve(dir)) return -1;
  uintptr_t slots = (uintptr_t)(p->fresh - p->slots);
  /* Counted before its pools can be marked; no reset runs meanwhile
     (M4). */
  if (counted_in[id] != current_epoch()) count_domain(id);
  /* The owner's next deletion in this pool runs the barrier (M3). */
  p->barriers = 0;
  pool_set_barrier_bit(p, 1);
  p->block_header = boxroot__compat_unmarked_header(slots); /* M1 */
  dir->block[1 + dir->count++] = (uintptr_t)p->slots;
  return (long)slots;
}

void boxroot__marking_directory_push(boxroot__domain_state *domain_state)
{
  struct directory *dir = &directories[boxroot__compat_domain_id(domain_state)];
  if (!dir->open) return;
  dir->open = 0;
  if (dir->count == 0) return;
  dir->epoch = current_epoch();
  boxroot__compat_darken_block(domain_state, dir->block, dir->count);
}

void boxroot__marking_observe(boxroot__domain_state *domain_state)
{
  if (domain_state == NULL) return; /* slot by slot: nothing is counted */
  if (!boxroot__compat_in_main_marking_phase()) {
    if (marking_pools_may_be_marked()) reset_count();
  } else {
    uncount_if_done(domain_state);
  }
}

/* The barriers' darkening: the values of slots [from, to) on the mark
   stack of `state`, if pools may still be marked (free slots hold odd
   links, which it ignores). */
static void darken_slots(void **from, void **to, boxroot__domain_state *state)
{
  uncount_if_done(state);
  (void)from; (void)to;
#ifndef BOXROOT_TESTING_NO_DELETION_BARRIER /* a broken build for tests */
  if (marking_pools_may_be_marked())
    for (void **s = from; s < to; s++)
      boxroot__compat_darken(state, (value)boxroot__load(s, RELAXED));
#endif
}

/* Darkens every value of the pool (M3) and clears the bit: the owner,
   lock held or in its scan hook. */
static void snapshot_pool(pool *p, boxroot__domain_state *state)
{
  darken_slots(p->slots, p->fresh, state);
  pool_set_barrier_bit(p, 0);
}

/* The owner's barrier darkens the slot's old value or, once the pool has
   run more barriers than 1/SNAPSHOT_AFTER_BARRIERS of its slots handed
   out, every value of the pool, which ends the barriers in this pool for
   this cycle. Either is correct (M3): one value costs about as much as a
   few slots of a pool, so programs that delete few roots per pool and
   cycle darken only those (with a snapshot at the first barrier,
   globroots ran 13% more instructions than with slot-by-slot marking at
   the cycle start; 8% like this), and those that delete many pay at most
   about twice the cheaper of the two. */
#define SNAPSHOT_AFTER_BARRIERS 8

void boxroot__marking_owner_barrier(pool *p, void **slot, boxroot__domain_state *state)
{
  /* The owner only (M3), on a slot of the pool handed out this cycle. */
  BOXROOT__ASSERT(pool_owner(p) == boxroot__compat_domain_id(state));
  BOXROOT__ASSERT(pool_of_slot(slot) == p && slot >= p->slots && slot < p->fresh);
  if (++p->barriers * SNAPSHOT_AFTER_BARRIERS >= p->fresh - p->slots
      || !marking_pools_may_be_marked()) {
    snapshot_pool(p, state);
    return;
  }
  darken_slots(slot, slot + 1, state);
}

void boxroot__marking_delete_owned(pool *p, void **slot, void const *key)
{
  BOXROOT__ASSERT(boxroot__owner_word_barrier(boxroot__owner_word_relaxed(&p->shared))
                  && boxroot__owner_word_key(boxroot__owner_word_relaxed(&p->shared)) == key);
  boxroot__marking_owner_barrier(p, slot, boxroot__compat_state());
  boxroot__delete_local(&p->hot, (boxroot)slot, key);
}

/* boxroot_modify in a pool with the barrier bit: lock held, `v` allowed
   in the pool. */
bool boxroot__modify_marking(boxroot *r, value v)
{
  boxroot root = *r;
  pool *p = pool_of_slot(root);
  /* ACQUIRE: a clear bit follows the owner's darkening. */
  boxroot__owner_word owner = boxroot__owner_word_acquire(&p->shared);
  if (boxroot__owner_word_barrier(owner)) {
    boxroot__domain_state *state = boxroot__compat_state();
    if (boxroot__owner_word_key(owner) == boxroot__compat_lock_key()) {
      boxroot__marking_owner_barrier(p, (void **)root, state);
    } else {
      /* Another domain's pool: this root's old value only, so as not to
         read slots that their owner writes. */
      darken_slots((void **)root, (void **)root + 1, state);
    }
  }
  boxroot__store((value *)root, v, RELAXED);
  return true;
}

void boxroot__marking_quiesce(void)
{
  /* Completing the current cycle empties every mark stack; the hooks are
     gone, so the next cycle pushes no pool, and no marker reads a
     directory any more. */
  if (marking_pools_may_be_marked()) boxroot__compat_finish_major_cycle();
  reset_count();
  for (int id = 0; id < BOXROOT__MAX_DOMAINS; id++) {
    free(directories[id].block);
    directories[id] = (struct directory){ 0 };
  }
}
