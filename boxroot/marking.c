/* Marking pools incrementally (OCaml 5).

   OCaml 5 starts each major cycle by darkening every root inside a
   stop-the-world section; darkening slot by slot would stop every domain
   for a time proportional to the number of roots. Instead the scan hook
   darkens each pool once, as one OCaml block whose fields are its slots:
   the runtime marks its header and pushes the slots on the domain's mark
   stack, and its incremental marker reads them in later slices, as it
   reads the fields of an array. What makes that correct:

   M1 Shape and colour. The word before a pool's first slot is a block
      header (pool.h), written by the owner's hook at each cycle start
      right before darkening: tag 0, wosize = `fresh - slots`, and the
      cycle's UNMARKED status, so that caml_darken marks it and pushes its
      fields. Nothing else ever reads this header: no OCaml value points
      into a pool (the debug build rejects such values), the sweeper walks
      only the runtime's own pools, and compaction and heap verification
      reach our slots through the hook, slot by slot (scan.c). So its
      colour never has to be kept valid across cycles (the runtime
      rotates their meaning): free, orphaned, recycled and new pools need
      no colour, since each darkening writes the header afresh.
   M2 Readable fields. From its cycle start until marking ends, a domain's
      marker may read any slot of the ranges it was given, at any time
      (also one slot at a time, after mark_stack_prune compressed a range
      into addresses). Every such word is an OCaml value or odd: allocated
      slots hold values (immediates and young blocks are ignored), free
      slots odd links (pool.h); slots at or above `fresh` at the cycle
      start are not in the range. The range stays mapped and is never
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
      pushed at the cycle start but read later is such a pointer: while
      the flag is up,
      - boxroot_delete (local path) and boxroot_modify darken the old
        value before overwriting the slot (boxroot.h), on the mark stack
        of the domain whose lock they hold;
      - remote deletions never write the slot (remote.c): its value stays
        there until the owner collects the deletion, and then darkens it
        (remote_collect) on its own stack, except at the cycle start,
        where the deletions collected precede the snapshot.
      Filling a slot needs no barrier: the new value is in the snapshot,
      or allocated during the cycle and therefore marked. The cycle starts
      with a minor collection, so pushed pools hold no young value then;
      young values stored later are ignored by the marker.
   M4 The flag. `boxroot__marking_pools` is raised by every hook that
      pushes a pool (cycle start, stop-the-world), and lowered by a later
      hook (stop-the-world) that finds `caml_gc_phase` past
      Phase_sweep_and_mark_main: that phase ends only when every domain's
      mark stack is empty, and pools are pushed only at cycle starts. In
      the stop-the-world section that starts a cycle, the minor
      collection (whose hooks may lower it) and the root marking (which
      raises it) are separated by a global barrier. The flag errs only on
      the side of being up (while that phase finishes sweeping, and until
      the next minor collection): the barrier then darkens blocks that
      are already marked, which costs a header read.
   Cost outside marking: one load and one branch in boxroot_delete and
   boxroot_modify (the constant 0 on OCaml 4.14, where pools are marked
   slot by slot: ocaml_compat.h).

   Domains: each domain's hook pushes the pools it owns (orphans are
   adopted first: domain.c) on its own stack. A domain that terminates
   during marking finishes its marking before it goes (runtime), reading
   pools that others may have adopted meanwhile: harmless by M2. */
#define CAML_INTERNALS
#include <caml/mlvalues.h>
#include "marking.h"

#if BOXROOT_MULTICORE
#include <caml/gc.h>
#include <caml/major_gc.h>
#include <caml/shared_heap.h>
#include <caml/domain_state.h>

int boxroot__marking_pools;

static void raise_flag(void)
{
  if (!boxroot__load(&boxroot__marking_pools, RELAXED))
    boxroot__store(&boxroot__marking_pools, 1, RELAXED);
}

long boxroot__marking_darken_pool(pool *p, void *domain_state)
{
  if (pool_alloc_count(p) == 0) return 0;
  mlsize_t slots = (mlsize_t)(p->fresh - p->slots);
  p->block_header = Make_header(slots, 0, caml_global_heap_state.UNMARKED);
  raise_flag();
  caml_darken(domain_state, Val_hp(&p->block_header), NULL);
  return (long)slots;
}

void boxroot__marking_observe_phase(void)
{
  if (boxroot__load(&boxroot__marking_pools, RELAXED)
      && caml_gc_phase != Phase_sweep_and_mark_main)
    boxroot__store(&boxroot__marking_pools, 0, RELAXED);
}

void boxroot__darken_old(value old)
{
  if (Is_block(old)) caml_darken(Caml_state, old, NULL);
}

void boxroot__darken_old_for(void *domain_state, value old)
{
  if (Is_block(old)) caml_darken(domain_state, old, NULL);
}

void boxroot__marking_quiesce(void)
{
  /* Completing the current cycle empties every mark stack; the hooks are
     gone, so the next cycle pushes no pool. */
  if (marking_pools_may_be_marked()) caml_finish_major_cycle(0);
  boxroot__store(&boxroot__marking_pools, 0, RELAXED);
}

#else /* OCaml 4.14: slot by slot (scan.c) */

long boxroot__marking_darken_pool(pool *p, void *domain_state)
{
  (void)p; (void)domain_state;
  return 0;
}
void boxroot__marking_observe_phase(void) {}
void boxroot__marking_quiesce(void) {}

#endif
