/* OCaml 4.14: the runtime's hooks, and tracking who holds the master lock
   (ocaml_compat.h states the tracking protocol and its known gaps).

   One domain, scanned by the thread holding the master lock. The scan
   hook tells minor from major scans by the scanning action: only the
   minor collection passes caml_oldify_one; the major cycle start
   (caml_darken) and compaction (caml_invert_root, which must see each
   root exactly once) go through caml_do_roots. */
#define _GNU_SOURCE /* pthread_getattr_np */
#define CAML_INTERNALS
#define CAML_NAME_SPACE
#include "boxroot.h"

#if !BOXROOT_MULTICORE
#include <pthread.h>
#include <caml/signals.h>
#include <caml/address_class.h>
#include <caml/major_gc.h>
#include "weak_clearing.h"

void boxroot__compat_point_thread_cursor(int id)
{
  (void)id; /* one domain: boxroot_create reads its cursor directly */
}

/* Lock tracking (protocol in ocaml_compat.h). The hooks' state below is
   written only by the thread holding the master lock; a thread writes
   its own token. */
__thread boxroot__compat_hook boxroot__compat_thread_token
  __attribute__((tls_model("initial-exec"))); /* 0: never seen by our hooks */
int boxroot__compat_domain0_key;
#define RELEASED_THROUGH_OUR_HOOK ((boxroot__compat_hook)1)

/* This thread's stack, [lo, hi); lo = hi = 0 until known. */
static __thread uintptr_t stack_lo, stack_hi;

static int in_my_stack(void const *p)
{
  if (stack_hi == 0) {
    pthread_attr_t attr;
    void *base;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return 0;
    int ok = pthread_attr_getstack(&attr, &base, &size) == 0;
    pthread_attr_destroy(&attr);
    if (!ok) return 0;
    stack_lo = (uintptr_t)base;
    stack_hi = (uintptr_t)base + size;
  }
  return (uintptr_t)p >= stack_lo && (uintptr_t)p < stack_hi;
}

/* Whether the runtime's own record of the lock holder is this thread.
   systhreads restores, at every acquisition (through any path), the
   holder's top of stack (native code) or its interpreter's exception
   buffer (bytecode), both in the holder's stack; the other is NULL.
   Before the runtime starts there is no Caml_state, and no holder. */
static int runtime_says_i_hold_the_lock(void)
{
  if (Caml_state == NULL) return 0;
  void const *holder_mark = Caml_state_field(top_of_stack);
  if (holder_mark == NULL) holder_mark = Caml_state_field(external_raise);
  return holder_mark != NULL && in_my_stack(holder_mark);
}

static void (*previous_scan_hook)(scanning_action);
static void (*previous_major_gc_hook)(void);
static void (*previous_leave_blocking)(void);

/* The enter hooks, one per installation (ocaml_compat.h): hook k
   releases through the hook it replaced, previous_enter[k]. Distinct
   functions, also to a compiler or linker that merges identical ones:
   each calls through an entry of its own. */
#define ENTER_HOOKS BOXROOT__COMPAT_ENTER_HOOKS
static void (*previous_enter[ENTER_HOOKS])(void);
#define ENTER_HOOK(k)                                       \
  static void enter_hook_##k(void)                          \
  {                                                         \
    boxroot__compat_thread_token = RELEASED_THROUGH_OUR_HOOK; \
    previous_enter[k]();                                    \
  }
/* Hook 0nm for n, m in 0..7: octal literals 000 to 077, 64 hooks. */
#define ENTER_HOOKS_8(n)                                                        \
  ENTER_HOOK(0##n##0) ENTER_HOOK(0##n##1) ENTER_HOOK(0##n##2) ENTER_HOOK(0##n##3) \
  ENTER_HOOK(0##n##4) ENTER_HOOK(0##n##5) ENTER_HOOK(0##n##6) ENTER_HOOK(0##n##7)
#define ENTER_HOOKS_LIST_8(n)                                                   \
  enter_hook_0##n##0, enter_hook_0##n##1, enter_hook_0##n##2, enter_hook_0##n##3, \
  enter_hook_0##n##4, enter_hook_0##n##5, enter_hook_0##n##6, enter_hook_0##n##7,
ENTER_HOOKS_8(0) ENTER_HOOKS_8(1) ENTER_HOOKS_8(2) ENTER_HOOKS_8(3)
ENTER_HOOKS_8(4) ENTER_HOOKS_8(5) ENTER_HOOKS_8(6) ENTER_HOOKS_8(7)
static void (*const enter_hooks[ENTER_HOOKS])(void) = {
  ENTER_HOOKS_LIST_8(0) ENTER_HOOKS_LIST_8(1) ENTER_HOOKS_LIST_8(2) ENTER_HOOKS_LIST_8(3)
  ENTER_HOOKS_LIST_8(4) ENTER_HOOKS_LIST_8(5) ENTER_HOOKS_LIST_8(6) ENTER_HOOKS_LIST_8(7)
};
_Static_assert(ENTER_HOOKS == 64, "enter_hooks lists 64 hooks");
/* The installation in force: enter_hooks[installed], or none (-1). */
static int installed = -1;

static int our_enter_hook_is_installed(void)
{
  return installed >= 0 && caml_enter_blocking_section_hook == enter_hooks[installed];
}

static void leave_blocking_hook(void)
{
  previous_leave_blocking();
  boxroot__compat_thread_token =
    our_enter_hook_is_installed() ? enter_hooks[installed] : RELEASED_THROUGH_OUR_HOOK;
}

static int blocking_hooks_are_ours(void)
{
  return our_enter_hook_is_installed() && caml_leave_blocking_section_hook == leave_blocking_hook;
}

int boxroot__compat_blocking_hooks_are_ours(void)
{
  return blocking_hooks_are_ours();
}

/* Puts our blocking-section hooks on top of the current ones, and records
   that the calling thread, which must hold the master lock, holds it. An
   enter hook that is not ours in force is replaced by the next of ours,
   which voids the tokens of threads that may have released the lock
   through the hook that replaced ours; when none is left, the hooks stay
   as they are (ocaml_compat.h). */
static void install_blocking_hooks(void)
{
  if (caml_leave_blocking_section_hook != leave_blocking_hook) {
    previous_leave_blocking = caml_leave_blocking_section_hook;
    caml_leave_blocking_section_hook = leave_blocking_hook;
  }
  if (!our_enter_hook_is_installed()) {
    if (installed + 1 == ENTER_HOOKS) return;
    installed++;
    previous_enter[installed] = caml_enter_blocking_section_hook;
    boxroot__store(&caml_enter_blocking_section_hook, enter_hooks[installed], RELAXED);
  }
  boxroot__compat_thread_token = enter_hooks[installed];
}

/* The hooks miss the acquisitions of threads that were already waiting
   for the lock in systhreads' hook when ours were installed (and these
   threads keep the lock through Thread.yield): ask the runtime, unless
   this thread released the lock through our hook since. The runtime's
   record is stale while the lock is free after a release: trusted only
   for releases that bypassed our enter hook, i.e. at thread exit (the gap
   in ocaml_compat.h), before setup, or through systhreads' hook before
   ours were taken back. There only a caller that does not hold the lock,
   against the API's rule, would be misjudged. */
static int lock_held_per_runtime(void)
{
  return !(boxroot__compat_thread_token == RELEASED_THROUGH_OUR_HOOK
           && blocking_hooks_are_ours())
    && runtime_says_i_hold_the_lock();
}

int boxroot__compat_lock_held_slow(void)
{
  if (boxroot__compat_lock_held()) return 1;
  if (!lock_held_per_runtime()) return 0;
  if (boxroot_status() == BOXROOT_RUNNING) install_blocking_hooks();
  return 1;
}

static void scan_hook(scanning_action f)
{
  if (previous_scan_hook != NULL) previous_scan_hook(f);
  /* The GC runs on the thread that holds the lock: a safe point to take
     the blocking-section hooks back if systhreads replaced them. */
  if (!blocking_hooks_are_ours()) install_blocking_hooks();
  /* The minor collection is the only caller with caml_oldify_one; the
     others (major cycle start, compaction) need every root once. */
  boxroot__scan_domain(0, (boxroot__scanner){ f }, f == caml_oldify_one, NULL);
  boxroot__weak_scan(0, (boxroot__scanner){ f }, f == caml_oldify_one);
}

/* Between the end of marking and cleaning and the first sweep (weak.c,
   W3). */
static void major_gc_hook(void)
{
  if (previous_major_gc_hook != NULL) previous_major_gc_hook();
  boxroot__weak_major_end();
}

void boxroot__compat_install_hooks(void)
{
  previous_scan_hook = caml_scan_roots_hook;
  caml_scan_roots_hook = scan_hook;
  previous_major_gc_hook = caml_major_gc_hook;
  caml_major_gc_hook = major_gc_hook;
  install_blocking_hooks();
}

void boxroot__compat_remove_hooks(void)
{
  if (caml_scan_roots_hook == scan_hook) caml_scan_roots_hook = previous_scan_hook;
  if (caml_major_gc_hook == major_gc_hook) caml_major_gc_hook = previous_major_gc_hook;
  if (our_enter_hook_is_installed())
    boxroot__store(&caml_enter_blocking_section_hook, previous_enter[installed], RELAXED);
  if (caml_leave_blocking_section_hook == leave_blocking_hook)
    caml_leave_blocking_section_hook = previous_leave_blocking;
}

/* The debug build's check of calls from finalizers (ocaml_compat.h). */
int boxroot__compat_in_collection(void)
{
  return Caml_state != NULL && Caml_state->in_minor_collection;
}

/* Marking pools as blocks: not on OCaml 4.14 (ocaml_compat.h). */
int boxroot__compat_marks_pools_as_blocks(void) { return 0; }
boxroot__domain_state *boxroot__compat_state(void) { return NULL; }
void boxroot__compat_darken_slots(boxroot__domain_state *state, void **from, void **to)
{
  (void)state; (void)from; (void)to;
}
void boxroot__compat_darken_block(boxroot__domain_state *state, uintptr_t *header, uintptr_t wosize)
{
  (void)state; (void)header; (void)wosize;
}
uintptr_t boxroot__compat_unmarked_header(uintptr_t wosize) { (void)wosize; return 0; }
uintptr_t boxroot__compat_allocation_header(uintptr_t wosize) { (void)wosize; return 0; }
uintptr_t boxroot__compat_marked_header(uintptr_t wosize) { (void)wosize; return 0; }
int boxroot__compat_header_is_marked(uintptr_t header) { (void)header; return 0; }
int boxroot__compat_header_is_unmarked(uintptr_t header) { (void)header; return 0; }
uintptr_t boxroot__compat_header_wosize(uintptr_t header) { (void)header; return 0; }
uintptr_t boxroot__compat_header_with_wosize(uintptr_t header, uintptr_t wosize)
{
  (void)wosize;
  return header;
}
int boxroot__compat_marking_in_progress(void) { return 0; }
int boxroot__compat_domain_id(boxroot__domain_state *state) { (void)state; return 0; }
int boxroot__compat_marking_done(boxroot__domain_state *state) { (void)state; return 1; }
uint64_t boxroot__compat_cycle(void) { return 0; }
int boxroot__compat_in_main_marking_phase(void) { return 0; }
void boxroot__compat_finish_major_cycle(void) {}

/* Weak roots (weak.h). Phase_mark darkens (its final subphase too, as
   the runtime's ephemeron reads); in Phase_clean, and in
   caml_major_gc_hook (called with Phase_sweep already set, before any
   sweeping), a white block of the heap is dead; values outside the heap
   (the page table) never die. */
int boxroot__compat_weak_phase(void)
{
  switch (caml_gc_phase) {
  case Phase_mark: return BOXROOT__WEAK_MARKING;
  case Phase_clean: return BOXROOT__WEAK_CLEANING;
  default: return BOXROOT__WEAK_IDLE;
  }
}

int boxroot__compat_weak_is_dead(value v)
{
  if (!Is_block(v) || !Is_in_heap(v)) return 0;
  if (Tag_val(v) == Infix_tag) v -= Infix_offset_val(v);
  return Is_white_val(v);
}

/* White: darkened while marking, dead in Phase_clean, alive otherwise
   (during sweeping, white blocks below the sweep pointer were allocated
   since; the dead ones were cleared at caml_major_gc_hook). */
int boxroot__compat_weak_read(value v, int darken, int check_dead)
{
  if (!boxroot__compat_weak_is_dead(v)) return 1;
  switch (caml_gc_phase) {
  case Phase_mark:
    if (darken) caml_darken(v, NULL);
    return 1;
  case Phase_clean: return !check_dead;
  default: return 1;
  }
}

/* Counted at the end of each cycle's sweep. */
uint64_t boxroot__compat_weak_cycle(void) { return Caml_state->stat_major_collections; }

_Static_assert(BOXROOT__WEAK_INFIX_TAG == Infix_tag, "boxroot_weak_internal.h's Infix_tag");
uintptr_t boxroot__compat_weak_marked_colour(void) { return Caml_black; }

/* Reading every domain's state (ocaml_compat.h): the master lock keeps
   every other thread from changing it. Whether this thread holds it is
   boxroot__compat_lock_held_slow's test, without taking the hooks back:
   reading statistics changes nothing. */
int boxroot__compat_visit_domains(void (*each_domain)(int id, void *data),
                                  void (*shared)(void *data), void *data)
{
  if (!boxroot__compat_lock_held() && !lock_held_per_runtime()) return 0;
  for (int id = 0; id < BOXROOT__MAX_DOMAINS; id++) each_domain(id, data);
  shared(data);
  return 1;
}

#endif /* !BOXROOT_MULTICORE */
