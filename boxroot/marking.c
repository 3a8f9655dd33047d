/* Marking pools incrementally (OCaml 5; ocaml_compat.h says where the
   runtime allows it, and compat_ocaml5.c holds the calls into it).

   OCaml 5 starts each major cycle by darkening every root inside a
   stop-the-world section; darkening slot by slot would stop every domain
   for a time proportional to the number of roots, and even touching each
   pool would stop it for a time proportional to the number of pools.
   Instead each pool is an OCaml block whose fields are its slots, listed
   as a field of one block per domain, its directory, kept up to date as
   the domain gains and loses pools; at the cycle start the hook darkens
   each domain's directory (one block) and changes one global word, the
   stamp, and the marker reads directories and pools in later slices, as
   it reads the fields of arrays. The section's work is O(domains). What
   makes that correct:

   M0 The mark stack's bound. The runtime sizes each domain's mark stack
      by that domain's own major heap, which does not count our pools,
      and it does not grow a stack that holds only entries of more than
      64 words: pushing one entry per pool overflowed it (the write past
      its end corrupted the heap) with about 4,000 pools on a small heap.
      So the hook darkens one block per domain, the directory: one
      mark-stack entry. The marker takes pools from it as it takes any
      block's fields, through its prefetch buffer of 256 values, and
      pushes a pool's remaining range only when that buffer is full: at
      most about 256 pool entries and one directory entry are on a stack
      at any time, whatever the number of pools. The directory is a C
      array laid out as a block (its header, then one field per pool
      listed, or an odd word for a hole); a domain's pools are listed in
      its own directory while they are on its young or old ring: from the
      moment it takes them (from the chunk allocator, its free ring or the
      orphans) to the moment it gives them up (domain.c calls
      boxroot__marking_join and _leave); free pools hold no value. Only the owner (its lock held, or its hook)
      writes its directory, and only its own marker reads it, so the two
      never run at once. Growing it while its marker may still read the
      old block retires that block, which is freed at a hook that finds
      the domain's marking done. A pool that cannot be listed (out of
      memory) is darkened slot by slot at each cycle start instead,
      until it can be (scan.c).
   M1 Shape and colour. The word before a pool's first slot is a block
      header (pool.h): tag 0, a colour, and as its size the slots handed
      out (`fresh - slots`), updated as they grow, so that the marker
      reads no never-used slot. The marker that reaches an UNMARKED pool
      through a directory marks it and pushes its fields; a MARKED one it
      skips. The runtime rotates the colours at each cycle start (MARKED
      becomes UNMARKED, UNMARKED becomes GARBAGE), so a header is right
      at the next cycle start if every listed pool is reached in every
      cycle: its directory is darkened at each cycle start and the marker
      reads every field. When a pool joins a directory it gets the colour
      the runtime gives new blocks (UNMARKED on 5.5 before marking
      starts, MARKED otherwise): a pool that joins before its directory
      is darkened is reached, one that joins after needs not be, for a
      pool that holds no value (a new or free one) has nothing to mark.
      A pool that holds values is an orphan, adopted in a scan hook
      (domain.h), and what it needs while marking is in progress depends
      on the scan:
      - At a minor collection's scan, its values are darkened as it joins
        if no marker reached it (not MARKED); so are those of one that
        cannot be listed, even if reached: the marker that reached it may
        not have read its slots yet, and no barrier covers an unlisted
        pool (M3).
      - At any other scan it is never darkened, and gets the colour
        UNMARKED and the stamp 0: these scans come before the root
        darkening of their section, or are that darkening before it
        darkens the directory (scan.c), which then reaches the pool (or
        darkens it slot by slot if it is unlisted, M0). On 5.1-5.4 the
        phase already says marking when compaction and heap verification
        run, in the section that starts the cycle, between the colours'
        rotation and the roots' darkening (major_gc.c,
        stw_cycle_all_domains): a value darkened there would be MARKED,
        which compaction reads as "moved, its first field forwards". On
        5.5 they run in the sweep-only phase, outside marking.
      Nothing else
      reads this header: no OCaml value points into a pool (the debug
      build rejects such values), the sweeper walks only the runtime's
      own pools, and compaction and heap verification reach our slots
      through the hook, slot by slot (scan.c).
      Who loads a pool's header. A marker finds a header UNMARKED, marks
      it by writing back the header it loaded, MARKED (so that a size
      written by another thread in between would be undone), and pushes
      the fields (major_gc.c: do_some_marking, mark_slice_darken,
      caml_darken; a MARKED header it leaves alone). The runtimes of 5.1
      to 5.5 load and store within one marking step, never across a
      return; the test build's stale marker (testing.h) emulates the
      stronger case of a store arbitrarily late. It reaches a pool
      only by reading a field of its own domain's directory: the
      marker empties its prefetch buffer before it returns, and its mark
      stack (compressed or not) holds the addresses of fields, which it
      reads when it takes them. A domain's marker runs on whichever
      thread acts for that domain, never at once with that domain's
      mutator or hooks, but at once with other domains' (in a slice, or
      in a section's opportunistic work, on every OCaml 5). So a pool
      that leaves a directory (free, or orphaned) is replaced by a hole
      in the current block and in every retired block that lists it
      (boxroot__marking_leave), by the thread acting for that domain:
      from then on no marker loads its header, and its next owner may
      write it freely. The test builds check at each cycle start that
      every listed pool's header has the size of the slots handed out
      and is UNMARKED.
   M2 Readable fields. From a directory's darkening until its domain's
      marking is done, the marker may read any of its fields (retired
      blocks included) and any slot of the pools listed, also after they
      left (the marker may have pushed a pool's slots on its stack
      before), also one slot at a time (after mark_stack_prune
      compressed a range into addresses). Every such
      word is an OCaml value or odd: allocated slots hold values
      (immediates and young blocks are ignored), free and never-used
      slots odd words (pool.h), holes odd words. Pools are decommitted
      (whose pages would read 0, a pointer to the marker) only while the
      flag below is down (chunk.c), unmapped only at teardown, which first
      completes the cycle (boxroot__marking_quiesce), and filled again
      with odd words when they come back from the chunk allocator. A
      terminating domain finishes its marking after its terminated hook
      (runtime), reading pools that others may have adopted meanwhile:
      harmless by this rule.
   M3 Snapshot. OCaml 5 marks every block reachable at the cycle start
      (plus the blocks allocated since, which are born marked, also when
      promoted by a minor collection), provided every pointer overwritten
      during marking is darkened first, as caml_modify does. A slot
      darkened at the cycle start but read later is such a pointer. So:
      - S, the stamp. The owner word (boxroot_internal.h) holds a stamp
        beside the owner's key, and the fast paths compare it with the
        current stamp `boxroot__marking_stamp`, which the hooks change at
        each cycle start (stamp_of_cycle): that sends the owner's first
        deletion and every modification in each pool to the slow path
        at once, without touching any pool. The stamp is current in a
        pool only if every value that was in the pool at this cycle
        start is marked, darkened, or gone through a barrier: the owner
        sets it after darkening the pool's values (snapshot_pool, barrier.c), for
        a pool that joins while holding no value, or outside marking
        (when the flag is down) on its slow paths. A new owner (pool.h)
        sets 0, which no cycle's stamp equals.
      - The owner's barrier (boxroot__barrier_owner, barrier.c) darkens the
        old value of the slot, on its own mark stack. Once the pool has
        run barriers for more than 1/SNAPSHOT_AFTER_BARRIERS of its
        slots handed out, it darkens every value of the pool instead and
        makes the stamp current: later deletions and modifications of
        the pool take the fast path. The stamp is written with release,
        read with acquire, so that a thread that sees it current follows
        that darkening.
      - Another domain modifying one of the pool's roots while the stamp
        is not current darkens that root's old value only: it must not
        read the slots that the owner writes.
      - Remote deletions never write the slot (remote.c): its value stays
        there until the owner collects the deletion, which runs the
        owner's barrier above while the stamp is not current and the
        flag is up (barrier_needed_to_collect).
      - Stamps take STAMP_PERIOD values, so that an old stamp could come
        back: each domain's minor hooks visit its directory with a hand
        (boxroot__marking_age), AGING_CYCLES cycles per round, and set
        every stamp that is not current to 0. A stamp is thus never
        older than 2 * AGING_CYCLES + 1 < STAMP_PERIOD cycles. The hand
        walks only the directory: a pool that could not be listed, and
        is darkened slot by slot at each cycle start instead (M0), keeps
        the stamp 0 (make_stamp_current, barrier.c), so that its barrier is on
        until it is listed again: on OCaml 5.5 another domain may modify
        its roots before its owner's hook darkens them (M5).
      Filling a slot needs no barrier: the new value is in the snapshot,
      or allocated during the cycle and therefore marked. The cycle starts
      with a minor collection, so pools hold no young value then (but
      orphans adopted at a darkening scan on 5.5, domain.h); young values
      stored later are ignored by the marker.
   M4 The flag. `boxroot__marking_epoch` is 0 unless some domain's mark
      stack may hold pools. Directories are pushed only when a cycle
      starts marking (below), and a domain's stack is empty once its
      `marking_done` is set. So each domain's hook, always
      stop-the-world, counts its domain when it darkens its directory
      (and sets the flag to the cycle's epoch), and uncounts it at a
      later scan that finds its marking done; so does the barrier's slow
      path, on the domain whose lock it holds (its hook never runs
      meanwhile). The flag drops to 0 with the count. Once the runtime's
      Phase_sweep_and_mark_main is over, every domain's marking is done:
      a hook that sees a later phase resets the count, which also
      uncounts domains that terminated meanwhile; a new cycle's first
      count starts from 0 too. A domain is counted while the epoch it
      was counted in is the flag's, so a reset uncounts every domain at
      once. Epochs are 64 bits wide and never repeat (nor does the
      cycle count that stamps are drawn from, S). In the stop-the-world
      section that starts marking, the minor collection (whose hooks may
      reset) and the root marking (which counts) are separated by a
      global barrier. Changes take `count_lock`, readers none. The flag
      errs only on the side of being up, except in M5's window: barriers
      then darken blocks that are already marked, which costs a header
      read.
   M5 Domains that leave early. OCaml 5.5 lets a domain leave the
      section that darkens the roots once its own roots and the global
      ones are darkened (major_gc.c, caml_mark_roots_stw: "a domain's
      local roots can only be changed by that domain"); 5.1-5.4 end that
      section with a global barrier. Boxroot's roots are not local in
      that sense: any domain may modify them. So a domain W may run
      while another domain M has not darkened its directory yet: M's
      pools are in the snapshot but on no stack, and the flag may be
      down (W was never counted, or counted, done and uncounted: M4
      counts only domains that pushed pools). Of the writers of M's
      slots, M itself is still in its hook, remote deletions never write
      a slot (remote.c), and orphans are adopted inside hooks (M1); what
      remains is another domain's boxroot_modify (not from a finaliser,
      which may only delete: boxroot.h). It overwrites a
      slot of a pool whose stamp is not current: every darkening hook
      switches the stamp first, W's too, even one with nothing to darken
      (boxroot__marking_switch_stamp), and a pool that could not be
      listed keeps the stamp 0 (S). That barrier therefore darkens the
      old value whenever the runtime says marking is in progress,
      whatever the flag says, as caml_modify does
      (boxroot__barrier_modify, barrier.c). The owner's barriers keep the flag:
      they run after the owner's own hook counted it. Teardown waits for
      the hooks in flight (compat_ocaml5.c): a domain that left early may
      tear down while another is still in its hook.
   Two shapes of cycle. What "the cycle start" means above is the
   stop-the-world section in which the runtime darkens the roots, with
   the minor heaps just emptied: the section that starts the cycle on
   OCaml 5.1-5.4 (caml_major_cycles_completed is incremented there, the
   colours rotate, then each domain's roots are darkened). OCaml 5.5
   starts each cycle with a sweep-only phase (Phase_sweep_main): the
   colours rotate and the cycle's count is incremented at its start, but
   the roots are darkened later, in the stop-the-world section of a
   minor collection (caml_mark_roots_stw, after the promotion and behind
   a global barrier that switches the phase to
   Phase_sweep_and_mark_main). The arguments hold for both:
   - the darkening hook runs once per domain and cycle, with the minor
     heaps empty (M3), and changes the stamp once per cycle (S);
   - during the sweep-only phase no pool is on a mark stack: hooks see a
     phase other than Phase_sweep_and_mark_main and lower the flag (M4),
     and stamps made current then are made stale by the stamp change
     when marking starts; pools that join then are UNMARKED, and so
     reached when it does (M1), as is every value they hold (on 5.5,
     blocks allocated before marking starts are born unmarked, and are
     marked only if reachable then);
   - domains that terminate or start during the sweep-only phase leave
     orphans that the other domains adopt at their next scan; teardown
     completes the whole cycle (caml_finish_major_cycle) whichever phase
     it is in;
   - the root-marking section has no final barrier on 5.5 (M5).
   The version-specific calls are in compat_ocaml5.c.
   Cost outside marking: in boxroot_delete, one load and one
   subtraction, folded into the key comparison that it already makes; in boxroot_modify, one
   subtraction from memory, folded into its class test; a slow path per
   pool and cycle, the first time the pool is touched. None on OCaml 4.14, where pools are marked
   slot by slot (ocaml_compat.h) and the stamps are the constant 0.
   Where the rules are enforced: directory.c keeps the directories (M0,
   the holes of M1 and M2); barrier.c runs the barriers (M3, M5); this
   file sets the colour and stamp of pools that join and leave (M1, S),
   darkens at the cycle start, ages the stamps (S) and keeps the flag
   (M4). */
#include <pthread.h>
#include <stdlib.h>
#include "asserts.h"
#include "directory.h"
#include "marking.h"
#include "stale_marker.h"
#include "window.h"

/* The flag (M4): 0, or the counting epoch. Written under count_lock by
   scan hooks and the barrier's slow path, read without it, relaxed: a
   reader is ordered after the hooks by the stop-the-world sections
   (atomics.h), except in M5's window, which M5 covers. */
uint64_t boxroot__marking_epoch;
uintptr_t boxroot__marking_stamp; /* S: 0 until the first cycle start */

/* The cycle count, 64 bits wide (M4, S: a narrower one would wrap, and
   two cycles would share a stamp and an epoch). Test builds may start it
   further on (testing.h), so that a test crosses 2^32; the broken build
   BOXROOT_TESTING_32BIT_CYCLES truncates it, as the count once was. */
static uint64_t cycle(void)
{
  uint64_t c = boxroot__compat_cycle() + boxroot__window_cycle_offset();
#ifdef BOXROOT_TESTING_32BIT_CYCLES /* a broken build for tests */
  c = (uint32_t)c;
#endif
  return c;
}

/* The epoch of the current cycle: increases at every cycle start, never
   0, never repeats. */
static uint64_t current_epoch(void)
{
#ifdef BOXROOT_TESTING_32BIT_CYCLES
  return (uint32_t)(cycle() + 1);
#else
  return cycle() + 1;
#endif
}

/* M4's count. Domain id is counted while `counted_in[id]` equals the
   flag: its stack may hold pools of this epoch. A reset (the flag down)
   thus uncounts every domain at once, and an epoch never comes back.
   Changes take count_lock; counted_in[id] is written only on behalf of
   domain id (its hook, or a thread holding its lock), which may read it
   without the lock. */
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static int count; /* domains counted */
static uint64_t counted_in[BOXROOT__MAX_DOMAINS];

static int counted(int id)
{
  uint64_t e = counted_in[id];
  return e != 0 && e == boxroot__load(&boxroot__marking_epoch, RELAXED);
}

/* Cycle start, domain id's hook: its stack is about to hold pools. */
static void count_domain(int id)
{
  uint64_t e = current_epoch();
  pthread_mutex_lock(&count_lock);
  /* The first count of this epoch: the earlier ones are over. */
  if (boxroot__load(&boxroot__marking_epoch, RELAXED) != e) count = 0;
  if (counted_in[id] != e) {
    counted_in[id] = e;
    count++;
  }
  boxroot__store(&boxroot__marking_epoch, e, RELAXED);
  pthread_mutex_unlock(&count_lock);
  BOXROOT__WINDOW(BOXROOT__AT_FLAG_RAISED, id);
}

/* Domain id's stack holds no pool any more. */
static void uncount_domain(int id)
{
  pthread_mutex_lock(&count_lock);
  int lowered = 0;
  if (counted(id) && --count == 0) {
    boxroot__store(&boxroot__marking_epoch, 0, RELAXED);
    lowered = 1;
  }
  counted_in[id] = 0;
  pthread_mutex_unlock(&count_lock);
  if (lowered) BOXROOT__WINDOW(BOXROOT__AT_FLAG_LOWERED, id);
}

/* No stack holds a pool any more. */
static void reset_count(int id)
{
  pthread_mutex_lock(&count_lock);
  count = 0;
  boxroot__store(&boxroot__marking_epoch, 0, RELAXED);
  pthread_mutex_unlock(&count_lock);
  BOXROOT__WINDOW(BOXROOT__AT_FLAG_LOWERED, id);
}

/* If the domain of `state` (this thread's, or its hook's) has finished
   marking, uncounts it. */
/* Test builds: a directory held back by a test (testing.h) is pushed
   later, by its domain; until then that domain's stack is to hold its
   pools: it stays counted, whatever its marker did meanwhile. */
#if BOXROOT__TEST_HOOKS
static int darkening_held(int id) { return boxroot__window_hold_darkening(id); }
static int darkening_owed(int id) { return boxroot__window_darkening_owed(id); }
#else
static int darkening_held(int id) { (void)id; return 0; }
static int darkening_owed(int id) { (void)id; return 0; }
#endif

void boxroot__marking_uncount_if_done(boxroot__domain_state *state)
{
  int id = boxroot__compat_domain_id(state);
  if (counted(id) && boxroot__compat_marking_done(state) && !darkening_owed(id))
    uncount_domain(id);
}

/* ---- Stamps (S) ---- */

/* How many stamps there are, and how many cycles a round of the aging
   hand takes: 2 * AGING_CYCLES + 1 < STAMP_PERIOD (M3). The test builds
   use few stamps, so that they come back within a test. */
#if defined(BOXROOT_TESTING) || defined(BOXROOT_TESTING_FEW_STAMPS)
#define STAMP_PERIOD 7
#define AGING_CYCLES 2
#else
#define STAMP_PERIOD 65535
#define AGING_CYCLES 4096
#endif
_Static_assert(2 * AGING_CYCLES + 1 < STAMP_PERIOD, "an old stamp must not come back");
_Static_assert(STAMP_PERIOD < ((uintptr_t)1 << (64 - BOXROOT__STAMP_SHIFT)),
               "stamps fit above the key");

static uintptr_t stamp_of_cycle(uint64_t c)
{
  return ((uintptr_t)(c % STAMP_PERIOD) + 1) << BOXROOT__STAMP_SHIFT;
}

/* ---- Directories (M0: directory.c) ---- */

/* Domain id's aging hand (S): the next field it visits, and the cycle of
   its last visit. */
static struct { size_t hand; uint64_t aged_cycle; } aging[BOXROOT__MAX_DOMAINS];

/* The test builds' stale marker (stale_marker.c, M1): a pool that a
   retired block still lists as it leaves, while its domain is counted,
   may have its header loaded by that domain's marker; the store comes
   after every growth of the pool in the same epoch. */
#if BOXROOT__TEST_HOOKS
static void stale_marker_load(int id, pool *p)
{
  if (counted(id)) boxroot__stale_marker_load(p, current_epoch());
}
static void stale_marker_store(pool *p) { boxroot__stale_marker_store(p, current_epoch()); }
#else
static void stale_marker_load(int id, pool *p) { (void)id; (void)p; }
static void stale_marker_store(pool *p) { (void)p; }
#endif

/* Darkens the values of `p` (on the mark stack of `state`). */
static void darken_values(pool *p, boxroot__domain_state *state)
{
  boxroot__compat_darken_slots(state, p->slots, p->fresh);
}

void boxroot__marking_join(pool *p, int id, boxroot__domain_state *state, enum boxroot__join join)
{
  if (!boxroot__compat_marks_pools_as_blocks()) return;
  BOXROOT__ASSERT(pool_owner(p) == id && p->listed_at == 0);
  int holds_values = join != JOIN_EMPTY;
  int marking = holds_values && boxroot__compat_marking_in_progress();
  int reached = boxroot__compat_header_is_marked(p->block_header);
  uintptr_t wosize = (uintptr_t)(p->fresh - p->slots);
  /* Only its owner's marker reads a directory (M0): listing first is
     safe, and tells whether the barrier will cover the pool. */
  boxroot__directory_add(boxroot__directory(id), p);
#ifndef BOXROOT_TESTING_JOIN_DARKENS_AT_ANY_SCAN /* a broken build for tests */
  if (marking && join == JOIN_AT_OTHER_SCAN) {
    /* M1: the root darkening of this section, to come or under way,
       reaches it; darkening now could be in the middle of compaction. */
    p->block_header = boxroot__compat_unmarked_header(wosize);
#ifndef BOXROOT_TESTING_ADOPT_STAMP_CURRENT /* a broken build for tests */
    pool_set_stamp(p, 0);
#else
    pool_set_stamp(p, boxroot__current_stamp());
#endif
    return;
  }
#endif
  /* M1, at a minor scan: an orphan that the marker has not reached; or
     one that could not be listed, whose owner runs no barrier for the
     rest of the cycle (M3): a marker that reached it may not have read
     its slots yet (M2), and later deletions would overwrite them. */
  int darkened = 0;
  if (marking
#ifndef BOXROOT_TESTING_UNLISTED_ORPHANS_UNDARKENED /* a broken build */
      && (!reached || p->listed_at == 0)
#else
      && !reached
#endif
      ) {
#ifndef BOXROOT_TESTING_NO_JOIN_DARKENING /* a broken build for tests */
    darken_values(p, state);
    darkened = 1;
#else
    (void)darken_values; (void)state;
#endif
  }
#ifndef BOXROOT_TESTING_JOIN_UNMARKED /* a broken build for tests */
  p->block_header = boxroot__compat_allocation_header(wosize);
#else
  p->block_header = boxroot__compat_unmarked_header(wosize);
#endif
  /* S: no value, or every value darkened; else the barrier is on. An
     unlisted pool keeps the stamp 0: no aging hand visits it. */
#ifndef BOXROOT_TESTING_UNLISTED_STAMPS /* a broken build for tests */
  int listed = p->listed_at != 0;
#else
  int listed = 1;
#endif
  pool_set_stamp(p, listed && (!holds_values || darkened) ? boxroot__current_stamp() : 0);
}

void boxroot__marking_leave(pool *p, int id)
{
  if (!boxroot__compat_marks_pools_as_blocks()) return;
  /* M1: a hole wherever it was listed, so that the marker of this
     domain, which may still read the retired blocks, reaches it no more. */
  if (boxroot__directory_remove(boxroot__directory(id), p)) stale_marker_load(id, p);
}

size_t boxroot__marking_unlisted(int id) { return boxroot__directory(id)->unlisted; }

int boxroot__marking_list_again(pool *p, int id)
{
  if (p->listed_at != 0) return 1;
  if (!boxroot__directory_list_again(boxroot__directory(id), p)) return 0;
  /* At the cycle start, before the directory is darkened: reached (M1),
     and no other marker reads it any more. Its stamp may be of any age:
     the aging hand did not visit it (S). */
  p->block_header = boxroot__compat_unmarked_header((uintptr_t)(p->fresh - p->slots));
#ifndef BOXROOT_TESTING_UNLISTED_STAMPS /* a broken build for tests */
  pool_set_stamp(p, 0);
#endif
  return 1;
}

void boxroot__marking_resize(pool *p)
{
  /* Only a listed pool's header is read (weak pools, unlisted ones:
     boxroot__marking_list_again sizes it). */
  if (!boxroot__compat_marks_pools_as_blocks() || p->listed_at == 0) return;
  p->block_header = boxroot__compat_header_with_wosize(p->block_header,
                                                       (uintptr_t)(p->fresh - p->slots));
  stale_marker_store(p);
}

#ifdef BOXROOT_TESTING
/* M1, at the cycle start: every pool listed is a block whose header
   gives the slots handed out, in the colour that the marker reads
   (UNMARKED): a pool that joined with the allocation colour got MARKED
   only in a cycle that ended since (the colours rotated), or UNMARKED
   before the roots' darkening (5.5); one adopted during this cycle's
   root-darkening section got UNMARKED (JOIN_AT_OTHER_SCAN). */
static void check_listed_headers(struct boxroot__directory *dir)
{
  for (size_t i = 1; i <= dir->used; i++) {
    if (directory_field_is_hole(dir->block[i])) continue;
    pool *p = pool_of_slot((void *)dir->block[i]);
    BOXROOT__ASSERT(boxroot__compat_header_wosize(p->block_header)
                    == (uintptr_t)(p->fresh - p->slots));
    BOXROOT__ASSERT(boxroot__compat_header_is_unmarked(p->block_header));
  }
}
#else
static void check_listed_headers(struct boxroot__directory *dir) { (void)dir; }
#endif

void boxroot__marking_switch_stamp(void)
{
  /* The stamp of this cycle (S): the same for every domain's hook, so
     only the first hook of the cycle writes it. Threads that read it
     meanwhile (with a plain load, atomics.h) then read the one value. */
#ifndef BOXROOT_TESTING_NO_STAMP_SWITCH /* a broken build for tests */
  uintptr_t stamp = stamp_of_cycle(cycle());
  if (boxroot__load(&boxroot__marking_stamp, RELAXED) != stamp)
    boxroot__store(&boxroot__marking_stamp, stamp, RELAXED);
#else
  (void)stamp_of_cycle;
#endif
}

void boxroot__marking_start(int id, boxroot__domain_state *domain_state)
{
  struct boxroot__directory *dir = boxroot__directory(id);
  check_listed_headers(dir);
  if (dir->listed == 0) return;
#ifdef BOXROOT_TESTING_LATE_STAMP_SWITCH /* a broken build for tests */
  boxroot__marking_switch_stamp();
#endif
  BOXROOT__WINDOW(BOXROOT__AT_STAMP_SWITCHED, id);
  /* Counted before its pools can be marked; no reset runs meanwhile
     (M4). */
  count_domain(id);
  BOXROOT__WINDOW(BOXROOT__AT_DIRECTORY_DARKENING, id);
  if (darkening_held(id)) return;
  boxroot__compat_darken_block(domain_state, dir->block, dir->used);
  BOXROOT__WINDOW(BOXROOT__AT_DIRECTORY_DARKENED, id);
}

#if BOXROOT__TEST_HOOKS
int boxroot__testing_release_darkening(void)
{
  boxroot__domain_state *state = boxroot__compat_state();
  if (state == NULL) return -1;
  int id = boxroot__compat_domain_id(state);
  if (!boxroot__window_take_owed_darkening(id)) return -1;
  /* M4: pushed while this cycle's main marking phase lasts, as at the
     cycle start; after it, hooks have lowered the flag, and the barriers
     that ran meanwhile darkened nothing. */
  if (!boxroot__compat_in_main_marking_phase()) return 0;
  struct boxroot__directory *dir = boxroot__directory(id);
  boxroot__compat_darken_block(state, dir->block, dir->used);
  BOXROOT__WINDOW(BOXROOT__AT_DIRECTORY_DARKENED, id);
  return 1;
}
#endif

void boxroot__marking_age(int id, void (*visit)(pool *p, void *data), void *data)
{
  struct boxroot__directory *dir = boxroot__directory(id);
  uint64_t now = cycle();
  uint64_t elapsed = now - aging[id].aged_cycle;
  aging[id].aged_cycle = now;
  if (elapsed == 0 || dir->used == 0) return;
  size_t per_cycle = (dir->used + AGING_CYCLES - 1) / AGING_CYCLES;
  size_t budget = elapsed >= AGING_CYCLES ? dir->used : elapsed * per_cycle;
  if (budget > dir->used) budget = dir->used;
  uintptr_t current = boxroot__current_stamp();
  for (; budget > 0; budget--) {
    if (aging[id].hand >= dir->used) aging[id].hand = 0;
    uintptr_t field = dir->block[1 + aging[id].hand++];
    if (directory_field_is_hole(field)) continue;
    pool *p = pool_of_slot((void *)field);
    uintptr_t stamp = pool_stamp(p);
#ifndef BOXROOT_TESTING_NO_AGING /* a broken build for tests */
    if (stamp != 0 && stamp != current) pool_set_stamp(p, 0);
#else
    (void)stamp; (void)current;
#endif
    visit(p, data);
  }
}

void boxroot__marking_observe(boxroot__domain_state *domain_state)
{
  if (domain_state == NULL) return; /* slot by slot: nothing is counted */
  if (!boxroot__compat_in_main_marking_phase()) {
    if (marking_pools_may_be_marked()) reset_count(boxroot__compat_domain_id(domain_state));
  } else {
    boxroot__marking_uncount_if_done(domain_state);
  }
  /* Its marker reads no directory any more. */
  int id = boxroot__compat_domain_id(domain_state);
  struct boxroot__directory *dir = boxroot__directory(id);
  if (dir->retired_count != 0 && !counted(id)) boxroot__directory_release(dir, 0);
}

void boxroot__marking_quiesce(void)
{
  /* Completing the current cycle empties every mark stack; the hooks are
     gone, so the next cycle pushes no directory, and no marker reads one
     any more. */
#ifndef BOXROOT_TESTING_TEARDOWN_NO_WAIT /* a broken build for tests */
  if (marking_pools_may_be_marked() || boxroot__compat_marking_in_progress())
#else
  if (marking_pools_may_be_marked())
#endif
    boxroot__compat_finish_major_cycle();
  reset_count(-1);
  for (int id = 0; id < BOXROOT__MAX_DOMAINS; id++) {
    boxroot__directory_release(boxroot__directory(id), 1);
    aging[id].hand = 0;
    aging[id].aged_cycle = 0;
  }
}
