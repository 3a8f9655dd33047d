/* The deletion barriers: darkening a value before a slot that marking
   may still read is freed or overwritten (marking.c, M3 and M5).

   The owner's barrier (M3) runs on its own mark stack, with its lock held
   or in its scan hook, in pools whose stamp is not current (S), while
   pools may be marked (the flag, M4); outside marking it only makes the
   stamp current. Another domain's barrier (M5) darkens only the root it
   modifies, since the owner writes the other slots, and whenever the
   runtime says marking is in progress, whatever the flag says: on OCaml
   5.5 that domain may run before the owner darkened its directory. */
#include "asserts.h"
#include "barrier.h"
#include "window.h"

/* The barriers' darkening: the values of slots [from, to) on the mark
   stack of `state`, if pools may still be marked (free slots hold odd
   links, which it ignores). The snapshot first checks whether this
   domain's marking is done (M4): a cheap barrier does not. */
static inline void darken_slots(void **from, void **to, boxroot__domain_state *state)
{
  (void)from; (void)to; (void)state;
#ifndef BOXROOT_TESTING_NO_DELETION_BARRIER /* a broken build for tests */
  if (marking_pools_may_be_marked()) boxroot__compat_darken_slots(state, from, to);
#endif
}

/* Another domain's barrier (M5): the value of `slot`, whenever marking
   is in progress. */
static inline void darken_for_another_domain(void **slot, boxroot__domain_state *state)
{
#if defined(BOXROOT_TESTING_NO_DELETION_BARRIER) /* broken builds for tests */
  (void)slot; (void)state;
#elif defined(BOXROOT_TESTING_BARRIER_NEEDS_FLAG)
  darken_slots(slot, slot + 1, state);
#else
  if (boxroot__compat_marking_in_progress()) boxroot__compat_darken_slots(state, slot, slot + 1);
#endif
}

/* Makes the stamp of `p` current (S), unless `p` is not listed: no
   aging hand visits it, so its stamp stays 0 (its values are darkened
   slot by slot at each cycle start, M0). */
static void make_stamp_current(pool *p)
{
#ifndef BOXROOT_TESTING_UNLISTED_STAMPS /* a broken build for tests */
  if (p->listed_at == 0) return;
#endif
  pool_set_stamp(p, boxroot__current_stamp());
}

/* Darkens every value of the pool (M3) and makes its stamp current: the
   owner, lock held or in its scan hook. */
static void snapshot_pool(pool *p, boxroot__domain_state *state)
{
  BOXROOT__WINDOW(BOXROOT__AT_SNAPSHOT, pool_owner(p));
  boxroot__marking_uncount_if_done(state);
  darken_slots(p->slots, p->fresh, state);
  make_stamp_current(p);
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

void boxroot__barrier_owner(pool *p, void **slot, boxroot__domain_state *state)
{
  /* The owner only (M3), on a slot of the pool handed out. */
  BOXROOT__ASSERT(pool_owner(p) == boxroot__compat_domain_id(state));
  BOXROOT__ASSERT(pool_of_slot(slot) == p && slot >= p->slots && slot < p->fresh);
  uintptr_t current = boxroot__current_stamp();
  if (!marking_pools_may_be_marked()) {
    /* Outside marking: nothing to darken until the next cycle start. */
    make_stamp_current(p);
    return;
  }
  /* Not listed: its values were darkened slot by slot at this cycle's
     start (M0), or as it joined during marking (M1); its stamp stays 0
     (S). */
  if (p->listed_at == 0) return;
  uint32_t cycle_stamp = (uint32_t)(current >> BOXROOT__STAMP_SHIFT);
  if (p->barriers_stamp != cycle_stamp) {
    p->barriers_stamp = cycle_stamp;
    p->barriers = 0;
  }
  if (++p->barriers * SNAPSHOT_AFTER_BARRIERS >= p->fresh - p->slots) {
    snapshot_pool(p, state);
    return;
  }
  BOXROOT__WINDOW(BOXROOT__AT_OWNER_BARRIER, pool_owner(p));
  darken_slots(slot, slot + 1, state);
}

void boxroot__barrier_delete_owned(pool *p, void **slot, void const *key)
{
  (void)key; /* only asserted */
  BOXROOT__ASSERT(!marking_stamp_is_current(p)
                  && boxroot__owner_word_key(boxroot__owner_word_relaxed(&p->shared)) == key);
  boxroot__barrier_owner(p, slot, boxroot__compat_state());
  boxroot__delete_local(&p->hot, boxroot__free_entry(slot));
}

/* boxroot_modify's slow path, lock held (boxroot__modify_slow, api.c). */
void boxroot__barrier_modify(boxroot root)
{
  pool *p = pool_of_slot(root);
  /* ACQUIRE: a current stamp follows the owner's darkening. */
  boxroot__owner_word owner = boxroot__owner_word_acquire(&p->shared);
  if (boxroot__owner_word_stamp(owner) != boxroot__current_stamp()) {
    boxroot__domain_state *state = boxroot__compat_state();
    if (boxroot__owner_word_key(owner) == boxroot__compat_lock_key()) {
      boxroot__barrier_owner(p, boxroot__slot_of(root), state);
    } else {
      /* Another domain's pool: this root's old value only, so as not to
         read slots that their owner writes; whenever marking is in
         progress, whether or not the owner has darkened its directory
         yet (M5). */
      BOXROOT__WINDOW(BOXROOT__AT_OTHER_DOMAIN_BARRIER, boxroot__compat_domain_id(state));
      darken_for_another_domain(boxroot__slot_of(root), state);
    }
  }
}
