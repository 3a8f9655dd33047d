/* OCaml 5: the runtime's hooks and the per-thread cursor cache
   (ocaml_compat.h says what differs from OCaml 4.14, and why).

   The root-scanning hook runs once per domain at every minor collection
   and at the start of every major cycle (and for compaction and heap
   verification), always in a stop-the-world section, on the domain's own thread or on its backup
   thread while the domain is in a blocking section: either way on behalf
   of the domain whose roots it scans (scan.c). The termination hook runs
   on the terminating domain, lock held, before its last minor collection
   (domain.h says what that implies). The major slice hooks run on
   behalf of the domain doing the slice: on its thread with its lock, in
   a slice of its own or in opportunistic work inside a stop-the-world
   section, or on its backup thread while it is in a blocking section
   (weak.c, W3). */
#define CAML_INTERNALS
#define CAML_NAME_SPACE
#include "boxroot.h"

#if BOXROOT_MULTICORE
#include <caml/domain.h>
#include <caml/gc.h>
#include <caml/major_gc.h>
#include <caml/shared_heap.h>
#include <sched.h>
#include <stdatomic.h>
#include "domain.h"
#include "weak_clearing.h"
#include "weak_domain.h"
#include "window.h"

/* Domain ids index static arrays (domain.h): a runtime that allowed more
   domains would overrun them, so it does not compile. */
#ifdef Max_domains_max
_Static_assert(Max_domains_max <= BOXROOT__MAX_DOMAINS,
               "BOXROOT__MAX_DOMAINS is below the runtime's Max_domains_max");
#endif

/* The one conversion between the two types (ocaml_compat.h). */
static boxroot__domain_state *of_caml(caml_domain_state *s) { return (boxroot__domain_state *)s; }
static caml_domain_state *to_caml(boxroot__domain_state *s) { return (caml_domain_state *)s; }

static struct boxroot__pool_hot *const no_pool = &boxroot__empty_pool;
__thread struct boxroot__thread_cursor boxroot__thread_cursor
  __attribute__((tls_model("initial-exec"))) = {
  .key = BOXROOT__NO_OWNER_KEY, .pool = &no_pool,
};

void boxroot__compat_point_thread_cursor(int id)
{
  boxroot__thread_cursor.key = boxroot__compat_lock_key();
  boxroot__thread_cursor.pool = &boxroot__alloc_cursor[id].pool;
}

/* The hooks ours replaced: stored with release before ours is published,
   read by ours once the runtime's load of ours made that store visible
   (publication, atomics.h: CHAIN_HOOK and previous_timing_hook say how). */
static scan_roots_hook previous_scan_hook;
static caml_timing_hook previous_terminated_hook;
static caml_timing_hook previous_slice_begin_hook, previous_slice_end_hook;

/* Hooks in flight. The runtime calls hooks on several domains at once,
   and not always inside a section that the caller of teardown has
   joined: slice hooks run in slices, sections started without waiting
   for every domain (the major slice's) run scan hooks on the domains
   that joined, and on OCaml 5.5 a domain may leave the section that
   darkens roots while another is still in its scan hook. So removing
   the hooks waits until no call is in flight, after which no call gets
   past hook_enter: teardown then frees what the hooks use. The two
   counters are sequentially consistent (atomics.h): a call that reads
   `hooks_enabled` as 1 incremented `in_flight` before the removal's
   store of 0 in the total order, so the removal's wait sees it. */
static int hooks_enabled; /* atomic */
static long hooks_in_flight; /* atomic */

static int hook_enter(void)
{
  boxroot__fetch_add(&hooks_in_flight, 1, SEQ_CST);
  if (boxroot__load(&hooks_enabled, SEQ_CST)) return 1;
  boxroot__fetch_add(&hooks_in_flight, -1, SEQ_CST);
  return 0;
}

static void hook_exit(void)
{
  boxroot__fetch_add(&hooks_in_flight, -1, SEQ_CST);
}

static void scan_hook(scanning_action f, scanning_action_flags flags,
                      void *data, caml_domain_state *domain)
{
  scan_roots_hook previous = boxroot__load(&previous_scan_hook, ACQUIRE);
  if (previous != NULL) previous(f, flags, data, domain);
  if (!hook_enter()) return;
  boxroot__scan_domain(domain->id, (boxroot__scanner){ f, data },
                       (flags & SCANNING_ONLY_YOUNG_VALUES) != 0, of_caml(domain));
  boxroot__weak_scan(domain->id, (boxroot__scanner){ f, data },
                     (flags & SCANNING_ONLY_YOUNG_VALUES) != 0);
  hook_exit();
}

/* The hook that a timing hook replaced (CHAIN_HOOK). The runtime loads
   the timing hooks with relaxed order (misc.h, call_timing_hook), which
   orders nothing: this acquire fence, after that load of the pointer to
   the hook that runs, synchronizes with the compare-and-swap that
   published it (C11 7.17.4, fences), so the store of `*previous` made
   before is seen. The scan hook needs none: the runtime loads it
   sequentially consistent. No instruction on x86-64; one barrier per call
   on ARM64, once per slice. */
static caml_timing_hook previous_timing_hook(caml_timing_hook *previous)
{
  atomic_thread_fence(memory_order_acquire);
  return boxroot__load(previous, RELAXED);
}

/* Weak roots are cleared by their owner in a major slice (weak.c, W3).
   Other domains run the slice hooks outside any section that orders them
   after setup: the previous hooks are read as CHAIN_HOOK says. */
static void slice_begin_hook(void)
{
  caml_timing_hook previous = previous_timing_hook(&previous_slice_begin_hook);
  if (previous != NULL) previous();
  if (!hook_enter()) return;
  boxroot__weak_slice();
  hook_exit();
}

static void slice_end_hook(void)
{
  caml_timing_hook previous = previous_timing_hook(&previous_slice_end_hook);
  if (previous != NULL) previous();
  if (!hook_enter()) return;
  boxroot__weak_slice();
  hook_exit();
}

/* The other domains adopt the orphans in the terminating domain's last
   minor collection, while the terminating one adopts none; the last
   domain keeps its pools (domain.h). Alone, it cannot stop being alone:
   only a running domain can spawn another. */
static void terminated_hook(void)
{
  caml_timing_hook previous = previous_timing_hook(&previous_terminated_hook);
  if (previous != NULL) previous();
  if (!hook_enter()) return;
  BOXROOT__WINDOW(BOXROOT__AT_ORPHANING, Caml_state->id);
  int alone = caml_domain_alone();
  boxroot__domain_terminate(Caml_state->id, alone);
  boxroot__weak_terminate(Caml_state->id, alone);
  hook_exit();
}

/* The runtime declares its hooks C11 `_Atomic`: they are accessed with
   <stdatomic.h>'s explicit functions (clang refuses atomics.h's
   `__atomic` builtins on `_Atomic` objects); our own fields keep
   atomics.h. */

/* Chains `mine` in front of the hook in `*hook`, of type `type`. The hook
   it replaces is stored in `*previous` before `mine` is published, with
   release, and read after an acquire by `mine` (the load of `*previous`
   in the scan hook, a fence in the timing hooks): a domain that calls `mine` as
   soon as it is published (a slice, a termination, or on OCaml 5.5 a
   domain still darkening its roots while another sets boxroot up) also
   calls the hook it replaced, such as systhreads' scan of the other
   threads' stacks. */
#define CHAIN_HOOK(type, hook, mine, previous) do {                         \
    type chain_seen = atomic_load_explicit((hook), memory_order_seq_cst);    \
    do {                                                                   \
      if (!PREVIOUS_STORED_LATE) boxroot__store((previous), chain_seen, RELEASE); \
    } while (!atomic_compare_exchange_weak_explicit((hook), &chain_seen, (mine), \
               memory_order_seq_cst, memory_order_relaxed));               \
    BOXROOT__WINDOW(BOXROOT__AT_HOOK_PUBLISHED, -1);                       \
    if (PREVIOUS_STORED_LATE) boxroot__store((previous), chain_seen, RELEASE); \
  } while (0)
#ifndef BOXROOT_TESTING_PREVIOUS_HOOK_LATE /* a broken build for tests */
#define PREVIOUS_STORED_LATE 0
#else
#define PREVIOUS_STORED_LATE 1
#endif

/* Puts back the hook that `mine` replaced, unless another was chained in
   front of it since. */
#define UNCHAIN_HOOK(type, hook, mine, previous) do {                       \
    type unchain_mine = (mine);                                            \
    atomic_compare_exchange_strong_explicit((hook), &unchain_mine,          \
      boxroot__load((previous), RELAXED), memory_order_seq_cst,            \
      memory_order_relaxed);                                               \
  } while (0)

void boxroot__compat_install_hooks(void)
{
  boxroot__store(&hooks_enabled, 1, SEQ_CST);
  CHAIN_HOOK(scan_roots_hook, &caml_scan_roots_hook, scan_hook, &previous_scan_hook);
  CHAIN_HOOK(caml_timing_hook, &caml_domain_terminated_hook, terminated_hook,
             &previous_terminated_hook);
  CHAIN_HOOK(caml_timing_hook, &caml_major_slice_begin_hook, slice_begin_hook,
             &previous_slice_begin_hook);
  CHAIN_HOOK(caml_timing_hook, &caml_major_slice_end_hook, slice_end_hook,
             &previous_slice_end_hook);
}

void boxroot__compat_remove_hooks(void)
{
  UNCHAIN_HOOK(scan_roots_hook, &caml_scan_roots_hook, scan_hook, &previous_scan_hook);
  UNCHAIN_HOOK(caml_timing_hook, &caml_domain_terminated_hook, terminated_hook,
               &previous_terminated_hook);
  UNCHAIN_HOOK(caml_timing_hook, &caml_major_slice_begin_hook, slice_begin_hook,
               &previous_slice_begin_hook);
  UNCHAIN_HOOK(caml_timing_hook, &caml_major_slice_end_hook, slice_end_hook,
               &previous_slice_end_hook);
  boxroot__store(&hooks_enabled, 0, SEQ_CST);
  BOXROOT__WINDOW(BOXROOT__AT_TEARDOWN, boxroot__compat_locked_domain());
  /* The calls in flight end without the caller's help: none waits for
     another domain, nor takes a lock that this thread holds (boxroot's
     own mutexes, taken briefly). */
#ifndef BOXROOT_TESTING_TEARDOWN_NO_WAIT /* a broken build for tests */
  while (boxroot__load(&hooks_in_flight, SEQ_CST) != 0) sched_yield();
#endif
}

/* The debug build's check of calls from finalizers (ocaml_compat.h). */
int boxroot__compat_in_collection(void)
{
#if OCAML_VERSION_MINOR >= 3 /* checked in 5.3's and 5.5's sources */
  caml_domain_state *state = Caml_state_opt;
  return state != NULL && state->inside_stw_handler;
#else
  return 0;
#endif
}

/* ---- Marking pools as blocks (ocaml_compat.h, marking.c) ---- */

int boxroot__compat_marks_pools_as_blocks(void) { return 1; }

boxroot__domain_state *boxroot__compat_state(void) { return of_caml(Caml_state); }

void boxroot__compat_darken_slots(boxroot__domain_state *state, void **from, void **to)
{
  status unmarked = caml_global_heap_state.UNMARKED;
  uintnat young_start = (uintnat)caml_minor_heaps_start, young_end = (uintnat)caml_minor_heaps_end;
  for (void **s = from; s < to; s++) {
    uintnat v = (uintnat)boxroot__load(s, RELAXED);
    if ((v & 1) != 0 || (v > young_start && v < young_end)) continue;
    /* Most values are marked already: look before calling (an infix
       pointer's own header says nothing of its closure's colour). */
    header_t hd = Hd_val(v);
    if (Has_status_hd(hd, unmarked) || Tag_hd(hd) == Infix_tag)
      caml_darken(to_caml(state), (value)v, NULL);
  }
}

/* The cycle's unmarked status: the marker that reaches the block marks
   its header and pushes its fields on the mark stack. */
uintptr_t boxroot__compat_unmarked_header(uintptr_t wosize)
{
  return Make_header(wosize, 0, caml_global_heap_state.UNMARKED);
}

/* The colour of new blocks: born marked once marking has started
   (always on 5.1-5.4, where the cycle starts by marking; on 5.5 from the
   end of the sweep-only phase on). */
uintptr_t boxroot__compat_allocation_header(uintptr_t wosize)
{
#if OCAML_VERSION_MINOR >= 5
  return Make_header(wosize, 0, caml_allocation_status());
#else
  return Make_header(wosize, 0, caml_global_heap_state.MARKED);
#endif
}

/* The colour that markers skip: MARKED in the current cycle. */
uintptr_t boxroot__compat_marked_header(uintptr_t wosize)
{
  return Make_header(wosize, 0, caml_global_heap_state.MARKED);
}

int boxroot__compat_header_is_marked(uintptr_t header)
{
  return Has_status_hd(header, caml_global_heap_state.MARKED);
}

int boxroot__compat_header_is_unmarked(uintptr_t header)
{
  return Has_status_hd(header, caml_global_heap_state.UNMARKED);
}

uintptr_t boxroot__compat_header_wosize(uintptr_t header) { return Wosize_hd(header); }

uintptr_t boxroot__compat_header_with_wosize(uintptr_t header, uintptr_t wosize)
{
  return (header & ~HEADER_WOSIZE_MASK) | ((header_t)wosize << HEADER_WOSIZE_SHIFT);
}

/* Phase_sweep_and_mark_main and Phase_mark_final follow the cycle start
   that darkens the roots (on 5.5, the end of Phase_sweep_main);
   Phase_sweep_ephe comes once marking is over. */
int boxroot__compat_marking_in_progress(void)
{
  return caml_gc_phase == Phase_sweep_and_mark_main || caml_gc_phase == Phase_mark_final;
}

void boxroot__compat_darken_block(boxroot__domain_state *state, uintptr_t *header, uintptr_t wosize)
{
  *header = boxroot__compat_unmarked_header(wosize);
  caml_darken(to_caml(state), Val_hp(header), NULL);
}

int boxroot__compat_domain_id(boxroot__domain_state *state) { return to_caml(state)->id; }

int boxroot__compat_marking_done(boxroot__domain_state *state)
{
  return to_caml(state)->marking_done != 0;
}

/* Incremented in the stop-the-world section that starts a cycle, before
   the roots are marked. */
uint64_t boxroot__compat_cycle(void) { return caml_major_cycles_completed; }

/* The phase ends only once every domain's mark stack is empty. */
int boxroot__compat_in_main_marking_phase(void)
{
  return caml_gc_phase == Phase_sweep_and_mark_main;
}

/* OCaml 5.2 added the argument (force_compaction), with compaction. */
void boxroot__compat_finish_major_cycle(void)
{
#if OCAML_VERSION_MINOR >= 2
  caml_finish_major_cycle(0);
#else
  caml_finish_major_cycle();
#endif
}

/* ---- Weak roots (weak.h) ---- */

/* OCaml 5.5's sweep-only phase (Phase_sweep_main) marks nothing, and
   follows the clearing of the previous cycle; Phase_sweep_and_mark_main
   and Phase_mark_final may mark (finalisers); Phase_sweep_ephe is the
   window between marking and the cycle's end, where the runtime cleans
   its own ephemerons. */
int boxroot__compat_weak_phase(void)
{
  switch (caml_gc_phase) {
#if OCAML_VERSION_MINOR >= 5
  case Phase_sweep_main: return BOXROOT__WEAK_IDLE;
#endif
  case Phase_sweep_ephe: return BOXROOT__WEAK_CLEANING;
  default: return BOXROOT__WEAK_MARKING;
  }
}

/* The header of `v`, or of its closure for an infix pointer: atomic,
   since markers of other domains may be writing it. */
static header_t weak_header(value v)
{
  header_t hd = boxroot__load((header_t *)Hp_val(v), RELAXED);
  if (Tag_hd(hd) == Infix_tag)
    hd = boxroot__load((header_t *)Hp_val(v - Infix_offset_hd(hd)), RELAXED);
  return hd;
}

static int weak_unmarked(value v)
{
  return Is_block(v) && !Is_young(v)
    && Has_status_hd(weak_header(v), caml_global_heap_state.UNMARKED);
}

/* As the runtime's ephemeron reads do: darken while marking (also in
   Phase_mark_final, where finalisers may still mark); in
   Phase_sweep_ephe, an unmarked value is dead. In 5.5's Phase_sweep_main
   every value is unmarked and nothing needs darkening. */
int boxroot__compat_weak_read(value v, int darken, int check_dead)
{
  if (!weak_unmarked(v)) return 1;
  switch (caml_gc_phase) {
#if OCAML_VERSION_MINOR >= 5
  case Phase_sweep_main: return 1;
#endif
  case Phase_sweep_ephe: return !check_dead;
  default:
    if (darken) caml_darken(Caml_state, v, NULL);
    return 1;
  }
}

int boxroot__compat_weak_is_dead(value v) { return weak_unmarked(v); }

uint64_t boxroot__compat_weak_cycle(void) { return caml_major_cycles_completed; }

_Static_assert(BOXROOT__WEAK_INFIX_TAG == Infix_tag, "boxroot_weak_internal.h's Infix_tag");
uintptr_t boxroot__compat_weak_marked_colour(void) { return caml_global_heap_state.MARKED; }

/* ---- Reading every domain's state (ocaml_compat.h) ---- */
#include <sched.h>

/* One visit: on the caller's stack, which the leader leaves only once
   every other participant is done with it. */
struct visit {
  void (*each_domain)(int id, void *data);
  void (*shared)(void *data);
  void *data;
  caml_domain_state *leader;
  /* Counted with release once a participant's writes are done, waited
     for with acquire (publication, atomics.h): the leader reads what the
     participants added, and they read what the leader did. */
  int arrived;  /* atomic: participants done with their own id */
  int released; /* atomic: the leader is done, they may go */
  int left;     /* atomic: participants that will not touch the visit again */
};

/* Waits, inside the section, for the other participants: the wait is as
   short as their own visit, but they may share this CPU. */
static void wait_until_at_least(int *counter, int n)
{
  for (unsigned spins = 0; boxroot__load(counter, ACQUIRE) < n; spins++)
    if (spins >= 64) sched_yield();
}

static void stw_visit_domains(caml_domain_state *self, void *arg, int participants,
                              caml_domain_state **participating)
{
  struct visit *v = arg;
  /* Every participant is past the section's entry barrier: none runs
     boxroot operations until the leader releases them. */
  v->each_domain(self->id, v->data);
  if (self != v->leader) {
    boxroot__fetch_add(&v->arrived, 1, RELEASE);
    wait_until_at_least(&v->released, 1);
    boxroot__fetch_add(&v->left, 1, RELEASE);
    return;
  }
  unsigned char running[BOXROOT__MAX_DOMAINS] = { 0 };
  for (int i = 0; i < participants; i++) running[participating[i]->id] = 1;
  for (int id = 0; id < BOXROOT__MAX_DOMAINS; id++)
    if (!running[id]) v->each_domain(id, v->data);
  v->shared(v->data);
  wait_until_at_least(&v->arrived, participants - 1);
  boxroot__store(&v->released, 1, RELEASE);
  wait_until_at_least(&v->left, participants - 1);
}

int boxroot__compat_visit_domains(void (*each_domain)(int id, void *data),
                                  void (*shared)(void *data), void *data)
{
  if (boxroot__compat_locked_domain() < 0) return 0;
  struct visit v = { .each_domain = each_domain, .shared = shared, .data = data,
                     .leader = Caml_state };
  /* A failed attempt lets the section that is in the way run first. */
  while (!caml_try_run_on_all_domains(stw_visit_domains, &v, NULL)) {}
  return 1;
}

#endif /* BOXROOT_MULTICORE */
