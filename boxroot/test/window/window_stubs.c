/* C side of the window tests (OCaml 5): a slow root-darkening hook, as
   another FFI library may chain before boxroot's, and the actions that
   another domain runs while it waits.

   The slow hook is installed before boxroot sets up, so that boxroot's
   own hook calls it first (compat_ocaml5.c chains to the previous hook):
   while it waits, the domain it runs for has not darkened boxroot's
   directory yet. It waits for one darkening scan of one domain, once
   armed, until released or until its timeout: on OCaml 5.1-5.4 the
   other domains wait at the section's final barrier and cannot release
   it; on 5.5 they may leave the section first. */
#define CAML_NAME_SPACE
#define CAML_INTERNALS
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <caml/alloc.h>
#include <caml/domain.h>
#include <caml/domain_state.h>
#include <caml/fail.h>
#include <caml/major_gc.h>
#include <caml/memory.h>
#include <caml/roots.h>
#include "boxroot.h"

static boxroot to_root(value v) { return (boxroot)(v & ~(value)1); }

static scan_roots_hook chained;
/* The domains whose next darkening waits (one bit per id, ids below 64
   in the tests), and how many are waiting in the hook now. */
static _Atomic uint64_t armed_domains;
static atomic_int waiting;
static atomic_int released;
static atomic_int timed_out;
static atomic_long timeout_ms = 2000;
static atomic_long waited_ms; /* by the last wait in the hook */

static long now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void slow_darkening_hook(scanning_action f, scanning_action_flags flags, void *data,
                                caml_domain_state *domain)
{
  if (chained != NULL) chained(f, flags, data, domain);
  if ((flags & SCANNING_ONLY_YOUNG_VALUES) || f != (scanning_action)caml_darken) return;
  uint64_t bit = domain->id < 64 ? (uint64_t)1 << domain->id : 0;
  if ((atomic_fetch_and(&armed_domains, ~bit) & bit) == 0) return;
  atomic_fetch_add(&waiting, 1);
  long start = now_ms(), deadline = start + atomic_load(&timeout_ms);
  while (!atomic_load(&released)) {
    if (now_ms() > deadline) { atomic_store(&timed_out, 1); break; }
    sched_yield();
  }
  atomic_store(&waited_ms, now_ms() - start);
  atomic_fetch_sub(&waiting, 1);
}

/* Before boxroot_setup (the first root created): boxroot then calls this
   hook before its own. */
value window_install_slow_hook(value unit)
{
  (void)unit;
  chained = atomic_exchange(&caml_scan_roots_hook, slow_darkening_hook);
  return Val_unit;
}

/* The next darkening scan of the calling domain waits (at most
   `timeout` ms) until window_release. */
value window_arm_this_domain(value timeout)
{
  atomic_store(&released, 0);
  atomic_store(&timed_out, 0);
  atomic_store(&timeout_ms, Long_val(timeout));
  atomic_store(&armed_domains, (uint64_t)1 << Caml_state->id);
  return Val_unit;
}

value window_disarm(value unit)
{
  (void)unit;
  atomic_store(&armed_domains, 0);
  atomic_store(&released, 1);
  return Val_unit;
}

/* Whether the armed domain is waiting in its hook now. No allocation and
   no poll: the caller polls (Domain.cpu_relax), so that it takes part in
   the sections that the armed domain starts. */
value window_waiting(value unit)
{
  (void)unit;
  return Val_bool(atomic_load(&waiting) > 0);
}

/* One step of a wait: takes part in the sections others start, and
   sweeps a little while its sweeping is not done (the runtime cannot
   start marking before every domain swept), but marks nothing (tests
   want markers behind) and runs no slice that may need a section of its
   own, which could not start before a domain held in a hook left the
   current one (an opportunistic slice changes no phase). */
static atomic_int waits_mark; /* window_waits_mark */

static void wait_a_little(void)
{
  caml_handle_incoming_interrupts();
  if (atomic_load(&waits_mark))
    caml_major_collection_slice(Major_slice_work_min);
  else if (!Caml_state->sweeping_done)
    caml_opportunistic_major_collection_slice(Major_slice_work_min);
  sched_yield();
}

/* With `on`, a domain waiting as above runs forced major slices, with a
   budget of their own: where no window is wanted, the cycle then does
   not wait for the slices that the others' allocation paces. Forced,
   not opportunistic: an opportunistic slice only sweeps and marks, and
   an automatic slice's budget is what allocation is ahead of the work
   counter, which the waiting domains' marking has pushed ahead. A cycle
   ends only once every domain has updated its finalisers and marked its
   ephemerons in a slice of its own (major_gc.c, major_collection_slice,
   OCaml 5.0 to 5.5): without that, OCaml 5.3 never left main marking. */
value window_waits_mark(value on)
{
  atomic_store(&waits_mark, Bool_val(on));
  return Val_unit;
}

static void sleep_us(long us)
{
  struct timespec t = { us / 1000000, (us % 1000000) * 1000 };
  nanosleep(&t, NULL);
}

static atomic_int marking_on;

value window_set_marking_on(value on)
{
  atomic_store(&marking_on, Bool_val(on));
  return Val_unit;
}

/* Waits until the armed domain waits in its hook (true) or
   window_set_marking_on (false) (wait_a_little: no slice that needs a
   section of its own). */
value window_wait_for_window(value unit)
{
  (void)unit;
  while (1) {
    if (atomic_load(&waiting) > 0) return Val_true;
    if (atomic_load(&marking_on)) return Val_false;
    wait_a_little();
  }
}

value window_release(value unit)
{
  (void)unit;
  atomic_store(&released, 1);
  return Val_unit;
}

value window_timed_out(value unit)
{
  (void)unit;
  return Val_bool(atomic_load(&timed_out));
}

/* How long the last wait in the hook lasted, in ms. */
value window_waited_ms(value unit)
{
  (void)unit;
  return Val_long(atomic_load(&waited_ms));
}

value window_domain_id(value unit)
{
  (void)unit;
  return Val_int(Caml_state->id);
}

/* What another domain does in the window: copies the value of each root
   into `hidden` (a block allocated during marking: born marked, its
   fields never scanned, so the copies keep the values alive only if the
   marker marked them otherwise), then overwrites the root with (). */
value window_hide_and_clear(value roots, value hidden)
{
  mlsize_t n = Wosize_val(roots);
  for (mlsize_t i = 0; i < n; i++) {
    boxroot r = to_root(Field(roots, i));
    caml_modify(&Field(hidden, i), boxroot_get(r));
    if (!boxroot_modify(&r, Val_unit)) caml_failwith("boxroot_modify");
    /* An immediate moves the root out of an old pool up to
       BOXROOT_OLD_VALUE_MOVES times per minor cycle (api.c): the array
       names the root afterwards. */
    Field(roots, i) = (value)r | 1; /* an immediate */
  }
  return Val_unit;
}

/* Empties this domain's mark stack (a domain that finished its own
   marking early). */
value window_finish_marking(value unit)
{
  (void)unit;
  caml_finish_marking();
  return Val_unit;
}

value window_marking_done(value unit)
{
  (void)unit;
  return Val_bool(Caml_state->marking_done);
}

/* Weak roots, disguised as immediates like strong ones. */
value window_weak_create(value v)
{
  boxroot_weak w = boxroot_weak_create(v);
  if (w == NULL) caml_failwith("boxroot_weak_create");
  return (value)w | 1;
}

static boxroot_weak to_weak(value v) { return (boxroot_weak)(v & ~(value)1); }

/* Reads each weak root into `hidden` (see window_hide_and_clear). */
value window_weak_hide(value weak_roots, value hidden)
{
  for (mlsize_t i = 0; i < Wosize_val(weak_roots); i++) {
    value v;
    if (boxroot_weak_get(to_weak(Field(weak_roots, i)), &v)) caml_modify(&Field(hidden, i), v);
  }
  return Val_unit;
}

value window_weak_delete(value w)
{
  boxroot_weak_delete(to_weak(w));
  return Val_unit;
}

/* ---- Holding a domain at a window point (test builds: window.h) ---- */
#if defined(BOXROOT_TESTING) || defined(BOXROOT_TESTING_WINDOWS)
#include "testing.h"

static atomic_int hold_point = -1, hold_domain = -2;
/* The held domain's state: it waits at its point (HELD) until another
   domain takes it (TAKEN), or gives up after a while and waits for the
   next visit (ARMED again): a visit from an opportunistic slice inside a
   stop-the-world section cannot be taken, since the other domains are in
   the section too. */
enum { IDLE, ARMED, HELD, TAKEN, DONE };
static atomic_int hold_state = IDLE;
static atomic_int go; /* the taker acted */
static atomic_long hold_after_go_ms, hold_timeout_ms;

static void sleep_ms(long ms)
{
  struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };
  nanosleep(&t, NULL);
}

/* At the point: held until taken (or given up on after 200 ms), then
   until window_hold_go, then `after_go` ms more; `timeout` ms at most
   in all. */
static void hold_at_point(int point, int domain, void *data)
{
  (void)data;
  if (point != atomic_load(&hold_point)) return;
  int want = atomic_load(&hold_domain);
  if (want != -1 && domain != want) return;
  int expected = ARMED;
  if (!atomic_compare_exchange_strong(&hold_state, &expected, HELD)) return;
  long start = now_ms(), deadline = start + atomic_load(&hold_timeout_ms);
  while (atomic_load(&hold_state) == HELD) {
    expected = HELD;
    if (now_ms() > start + 200
        && atomic_compare_exchange_strong(&hold_state, &expected, ARMED)) return;
    sched_yield();
  }
  while (!atomic_load(&go) && now_ms() < deadline) sched_yield();
  if (atomic_load(&go)) sleep_ms(atomic_load(&hold_after_go_ms));
  atomic_store(&hold_state, DONE);
}

/* The next visit of point `point` by domain `domain` (-1: any) that
   another domain takes (window_take_hold) waits for window_hold_go,
   then `after_go` ms; `timeout` ms at most. */
value window_hold(value point, value domain, value after_go, value timeout)
{
  atomic_store(&go, 0);
  atomic_store(&hold_after_go_ms, Long_val(after_go));
  atomic_store(&hold_timeout_ms, Long_val(timeout));
  atomic_store(&hold_domain, Int_val(domain));
  atomic_store(&hold_point, Int_val(point));
  atomic_store(&hold_state, ARMED);
  boxroot__testing_window_callback(hold_at_point, NULL);
  return Val_unit;
}

/* Whether this call took a held domain: it waits until window_hold_go. */
value window_take_hold(value unit)
{
  (void)unit;
  int expected = HELD;
  return Val_bool(atomic_compare_exchange_strong(&hold_state, &expected, TAKEN));
}

/* Takes a held domain (true), or returns false once
   window_set_marking_on: as window_wait_for_window, without slices. */
value window_wait_to_take_hold(value unit)
{
  (void)unit;
  while (1) {
    int expected = HELD;
    if (atomic_compare_exchange_strong(&hold_state, &expected, TAKEN)) return Val_true;
    if (atomic_load(&marking_on)) return Val_false;
    wait_a_little();
  }
}

/* Whether a domain was held and taken. */
value window_hold_taken(value unit)
{
  (void)unit;
  int s = atomic_load(&hold_state);
  return Val_bool(s == TAKEN || s == DONE);
}

value window_hold_go(value unit)
{
  (void)unit;
  atomic_store(&go, 1);
  return Val_unit;
}

value window_point_visits(value point)
{
  return Val_long(boxroot__testing_window_visits(Int_val(point)));
}

value window_point_name(value point)
{
  return caml_copy_string(boxroot__testing_window_name(Int_val(point)));
}

value window_teardown(value unit)
{
  (void)unit;
  boxroot_teardown();
  return Val_unit;
}
#endif

#include <string.h>
#include "window.h"

/* The number of the window point named `name` (window.c), or -1. */
value window_point_of_name(value name)
{
#if defined(BOXROOT_TESTING) || defined(BOXROOT_TESTING_WINDOWS)
  for (int i = 0; i < BOXROOT__WINDOW_POINTS; i++)
    if (strcmp(boxroot__testing_window_name(i), String_val(name)) == 0) return Val_int(i);
#endif
  (void)name;
  return Val_int(-1);
}

#include <pthread.h>
#include <caml/signals.h>

struct weak_batch { boxroot_weak *roots; long n; };

static void *delete_weak_batch(void *arg)
{
  struct weak_batch *b = arg;
  for (long i = 0; i < b->n; i++) boxroot_weak_delete(b->roots[i]);
  return NULL;
}

/* Deletes every weak root of `weak_roots` from a thread without any
   lock. */
value window_weak_delete_foreign(value weak_roots)
{
  long n = (long)Wosize_val(weak_roots);
  boxroot_weak *roots = malloc(n * sizeof *roots);
  if (roots == NULL) caml_failwith("window_weak_delete_foreign: out of memory");
  for (long i = 0; i < n; i++) roots[i] = to_weak(Field(weak_roots, i));
  struct weak_batch b = { roots, n };
  pthread_t t;
  caml_enter_blocking_section();
  pthread_create(&t, NULL, delete_weak_batch, &b);
  pthread_join(t, NULL);
  caml_leave_blocking_section();
  free(roots);
  return Val_unit;
}

/* ---- The window explorer (test_explore.ml) ---- */

/* The next darkening scan of each domain in the list `ids` waits in the
   slow hook, at most `timeout` ms, or until window_release. */
value window_arm_domains(value ids, value timeout)
{
  uint64_t mask = 0;
  for (value l = ids; l != Val_emptylist; l = Field(l, 1))
    if (Int_val(Field(l, 0)) < 64) mask |= (uint64_t)1 << Int_val(Field(l, 0));
  atomic_store(&released, 0);
  atomic_store(&timed_out, 0);
  atomic_store(&timeout_ms, Long_val(timeout));
  atomic_store(&armed_domains, mask);
  return Val_unit;
}

/* Flags through which domains hand each other work without running a
   major slice while they wait (see window_wait_for_window). */
#define FLAGS 64
static atomic_int flags[FLAGS];

value window_set_flag(value i, value v)
{
  atomic_store(&flags[Int_val(i) % FLAGS], Int_val(v));
  return Val_unit;
}

value window_get_flag(value i)
{
  return Val_int(atomic_load(&flags[Int_val(i) % FLAGS]));
}

/* Waits until flag `i` is `v`, taking part in the sections others start;
   after a while, sleeping between its looks (an idle domain that spins
   takes a core from those at work). */
value window_wait_flag(value i, value v)
{
  atomic_int *f = &flags[Int_val(i) % FLAGS];
  for (long n = 0; atomic_load(f) != Int_val(v); n++) {
    wait_a_little();
    if (n > 1000) sleep_us(100);
  }
  return Val_unit;
}

/* Spins `n` times, taking part in sections: a random pause. */
value window_spin(value n)
{
  for (long i = 0; i < Long_val(n); i++) {
    wait_a_little();
  }
  return Val_unit;
}

value window_delays(value seed, value per_thousand, value max_us)
{
  boxroot__testing_window_delays((unsigned long)Long_val(seed), Int_val(per_thousand),
                                 Int_val(max_us));
  return Val_unit;
}

/* The weak root's value, or None once it is empty. */
value window_weak_get(value w)
{
  CAMLparam1(w);
  CAMLlocal1(res);
  value v;
  if (!boxroot_weak_get(to_weak(w), &v)) CAMLreturn(Val_none);
  res = caml_alloc_some(v);
  CAMLreturn(res);
}

/* What the explorer records of a root it drops, to explain a loss:
   owner * 8 + (listed ? 4 : 0) + (stamp current ? 2 : 0), or -1. */
#include "pool.h"
value window_root_state(value r)
{
  pool *p = pool_of_slot(boxroot__slot_of(to_root(r)));
  int owner = pool_owner(p);
  int listed = p->listed_at != 0;
  int current = pool_stamp(p) == boxroot__current_stamp();
  return Val_int(owner * 8 + listed * 4 + current * 2);
}

/* ---- Setup chains the runtime's hooks (compat_ocaml5.c) ---- */

/* A scan hook installed before boxroot, as systhreads installs its own;
   counts its calls. */
static scan_roots_hook before_boxroot;
static atomic_int earlier_hook_calls;

static void earlier_scan_hook(scanning_action f, scanning_action_flags flags,
                              void *data, caml_domain_state *domain)
{
  atomic_fetch_add(&earlier_hook_calls, 1);
  if (before_boxroot != NULL) before_boxroot(f, flags, data, domain);
}

static void ignore_root(void *data, value v, volatile value *p)
{
  (void)data; (void)v; (void)p;
}

/* As another domain may (on OCaml 5.5, still darkening its roots while
   this one sets boxroot up): call the scan hook the moment boxroot's is
   published (the first hook setup chains). No root exists yet, so
   boxroot's part scans nothing. */
static atomic_int publications_seen;

static void call_hook_when_published(int point, int domain, void *data)
{
  (void)domain; (void)data;
  if (point != BOXROOT__AT_HOOK_PUBLISHED) return;
  if (atomic_fetch_add(&publications_seen, 1) != 0) return;
  scan_roots_hook h = atomic_load((_Atomic scan_roots_hook *)&caml_scan_roots_hook);
  if (h != NULL && h != earlier_scan_hook)
    h(ignore_root, SCANNING_ONLY_YOUNG_VALUES, NULL, Caml_state);
}

/* Returns how many times the earlier hook ran when boxroot_setup()
   published its scan hook (before boxroot is set up). */
value window_setup_with_earlier_hook(value unit)
{
  (void)unit;
  before_boxroot = caml_scan_roots_hook;
  caml_scan_roots_hook = earlier_scan_hook;
  atomic_store(&earlier_hook_calls, 0);
  boxroot__testing_window_callback(call_hook_when_published, NULL);
  if (!boxroot_setup()) caml_failwith("boxroot_setup");
  boxroot__testing_window_callback(NULL, NULL);
  return Val_int(atomic_load(&earlier_hook_calls));
}
