/* C stubs through which the OCaml tests drive boxroot. A boxroot crosses
   into OCaml disguised as an immediate (its address with bit 0 set): the
   GC ignores it, so only boxroot keeps its value alive. */
#define CAML_NAME_SPACE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <caml/alloc.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include <caml/signals.h>
#include <caml/threads.h>
#include "boxroot.h"
#include "boxroot_stats.h"
/* Linked with the test build (boxroot_testing), or with a broken build
   that has its hooks (window.h). */
#if defined(BOXROOT_TESTING) || defined(BOXROOT_TESTING_WINDOWS)
#include "testing.h"
#endif

static value of_root(boxroot r) { return (value)r | 1; }
static boxroot to_root(value v) { return (boxroot)(v & ~(value)1); }

static void raise_error(char const *op)
{
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s (errno %d: %s)", op, boxroot_error_string(),
           errno, strerror(errno));
  caml_failwith(msg);
}

value test_create(value v)
{
  boxroot r = boxroot_create(v);
  if (r == NULL) raise_error("boxroot_create");
  return of_root(r);
}

/* Like test_create, but returns None on failure instead of raising. */
value test_try_create(value v)
{
  CAMLparam1(v);
  CAMLlocal1(res);
  boxroot r = boxroot_create(v);
  if (r == NULL) CAMLreturn(Val_none);
  res = caml_alloc_some(of_root(r));
  CAMLreturn(res);
}

value test_get(value r) { return boxroot_get(to_root(r)); }
value test_get_ref(value r) { return *boxroot_get_ref(to_root(r)); }

value test_delete(value r)
{
  boxroot_delete(to_root(r));
  return Val_unit;
}

/* The path a thread without the domain lock takes (remote.c). */
value test_delete_remote(value r)
{
  boxroot__delete_remote(to_root(r), boxroot__compat_lock_key());
  return Val_unit;
}

/* Deletes from inside a blocking section: no domain lock held. */
value test_delete_unlocked(value r)
{
  boxroot b = to_root(r);
  caml_enter_blocking_section();
  boxroot_delete(b);
  caml_leave_blocking_section();
  return Val_unit;
}

/* Returns the (possibly moved) root, raising on failure. */
value test_modify(value r, value v)
{
  boxroot b = to_root(r);
  if (!boxroot_modify(&b, v)) raise_error("boxroot_modify");
  return of_root(b);
}

/* Returns Some root or None; on failure the root must be unchanged. */
value test_try_modify(value r, value v)
{
  CAMLparam2(r, v);
  CAMLlocal1(res);
  boxroot b = to_root(r);
  if (!boxroot_modify(&b, v)) CAMLreturn(Val_none);
  res = caml_alloc_some(of_root(b));
  CAMLreturn(res);
}

value test_status(value unit) { (void)unit; return Val_int(boxroot_status()); }
value test_error_string(value unit) { (void)unit; return caml_copy_string(boxroot_error_string()); }
value test_errno(value unit) { (void)unit; return Val_int(errno); }
value test_clear_errno(value unit) { (void)unit; errno = 0; return Val_unit; }
value test_eperm(value unit) { (void)unit; return Val_int(EPERM); }
value test_enomem(value unit) { (void)unit; return Val_int(ENOMEM); }
value test_enotsup(value unit) { (void)unit; return Val_int(ENOTSUP); }
value test_teardown(value unit) { (void)unit; boxroot_teardown(); return Val_unit; }
value test_setup(value unit) { (void)unit; return Val_bool(boxroot_setup()); }
value test_print_stats(value unit) { (void)unit; boxroot_print_stats(); return Val_unit; }

value test_fail_pool_allocations_after(value n)
{
#if defined(BOXROOT_TESTING) || defined(BOXROOT_TESTING_WINDOWS)
  boxroot__testing_fail_allocations(BOXROOT__ALLOC_POOL, Long_val(n), 1);
  return Val_unit;
#else
  (void)n;
  caml_failwith("test_fail_pool_allocations_after: needs the test build");
#endif
}

/* Whether the invariants of this domain's rings were checked (an
   invariant that does not hold aborts); false outside the test build. */
value test_check_invariants(value unit)
{
  (void)unit;
#ifdef BOXROOT_TESTING
  return Val_bool(boxroot__testing_check_invariants());
#else
  return Val_false;
#endif
}

/* Create from inside a blocking section: must fail with EPERM. */
value test_create_unlocked(value v)
{
  caml_enter_blocking_section();
  errno = 0;
  boxroot r = boxroot_create(v);
  int err = errno;
  caml_leave_blocking_section();
  if (r != NULL) caml_failwith("boxroot_create succeeded without the domain lock");
  return Val_int(err);
}

value test_modify_unlocked(value r, value v)
{
  boxroot b = to_root(r), before = b;
  caml_enter_blocking_section();
  errno = 0;
  bool ok = boxroot_modify(&b, v);
  int err = errno;
  caml_leave_blocking_section();
  if (ok || b != before) caml_failwith("boxroot_modify succeeded without the domain lock");
  return Val_int(err);
}

/* From a thread the OCaml runtime never saw. */
struct foreign_call { value v; boxroot result; int err; boxroot to_delete; };

static void *foreign_thread(void *arg)
{
  struct foreign_call *c = arg;
  if (c->to_delete != NULL) {
    boxroot_delete(c->to_delete);
  } else {
    errno = 0;
    c->result = boxroot_create(c->v);
    c->err = errno;
  }
  return NULL;
}

static void run_foreign(struct foreign_call *c)
{
  pthread_t t;
  caml_enter_blocking_section();
  pthread_create(&t, NULL, foreign_thread, c);
  pthread_join(t, NULL);
  caml_leave_blocking_section();
}

value test_create_foreign_thread(value v)
{
  struct foreign_call c = { .v = Val_int(Int_val(v)), .result = NULL, .err = 0, .to_delete = NULL };
  run_foreign(&c);
  if (c.result != NULL) caml_failwith("boxroot_create succeeded in a foreign thread");
  return Val_int(c.err);
}

value test_delete_foreign_thread(value r)
{
  struct foreign_call c = { .to_delete = to_root(r) };
  run_foreign(&c);
  return Val_unit;
}

/* Whether the current major cycle has started marking: on OCaml 5.5 a
   cycle starts with a sweep-only phase, and roots (our directories) are
   darkened later, in a minor collection's stop-the-world section; before
   5.5, at the cycle start. OCaml 4.14: always (slot by slot). */
#if BOXROOT_MULTICORE
#define CAML_INTERNALS
#include <caml/major_gc.h>
#endif
value test_marking_started(value unit)
{
  (void)unit;
#if !BOXROOT_MULTICORE
  return Val_true;
#elif OCAML_VERSION_MINOR >= 5
  return Val_bool(caml_marking_started());
#else
  return Val_bool(caml_gc_phase == Phase_sweep_and_mark_main);
#endif
}

/* Asks for the mark phase as OCaml 5.5's runtime does once a cycle's
   idle phase is over (major_gc.c, request_mark_phase): the next minor
   collection darkens the roots. Elsewhere, nothing: cycles start by
   marking. */
value test_request_marking(value unit)
{
  (void)unit;
#if BOXROOT_MULTICORE && OCAML_VERSION_MINOR >= 5
  if (caml_gc_phase == Phase_sweep_main
      && atomic_load_explicit(&caml_gc_mark_phase_requested, memory_order_relaxed) == 0)
    atomic_store_explicit(&caml_gc_mark_phase_requested, 1, memory_order_release);
#endif
  return Val_unit;
}

/* Completes the current major cycle and the next cycle's start, which
   compacts the heap (OCaml 5.2 and later: one cycle, where Gc.compact
   runs three). Returns false where there is no such cycle. */
value test_finish_cycle_compacting(value unit)
{
  (void)unit;
#if BOXROOT_MULTICORE && OCAML_VERSION_MINOR >= 2
  caml_finish_major_cycle(1);
  return Val_true;
#else
  return Val_false;
#endif
}

/* Test-build entry points (testing.h); they fail in other builds. */
#if defined(BOXROOT_TESTING) || defined(BOXROOT_TESTING_WINDOWS)
value test_fail_directory_growth_after(value n)
{
  boxroot__testing_fail_allocations(BOXROOT__ALLOC_DIRECTORY, Long_val(n), 1);
  return Val_unit;
}
value test_cycle_offset(value n)
{
  boxroot__testing_cycle_offset((uint64_t)Long_val(n));
  return Val_unit;
}
value test_retired_directory_blocks(value unit)
{
  (void)unit;
  return Val_long(boxroot__testing_retired_directory_blocks());
}
value test_stale_marker(value on)
{
  boxroot__testing_stale_marker(Bool_val(on));
  return Val_unit;
}
value test_fail_allocations(value sites, value after, value persistent)
{
  boxroot__testing_fail_allocations((unsigned)Long_val(sites), Long_val(after),
                                    Bool_val(persistent));
  return Val_unit;
}
value test_allocation_attempts(value sites)
{
  return Val_long(boxroot__testing_allocation_attempts((unsigned)Long_val(sites)));
}
value test_allocation_failures(value sites)
{
  return Val_long(boxroot__testing_allocation_failures((unsigned)Long_val(sites)));
}
value test_alloc_sites_all(value unit) { (void)unit; return Val_long(BOXROOT__ALLOC_ALL); }
value test_adopt_at_compaction_only(value on)
{
  boxroot__testing_adopt_at_compaction_only(Bool_val(on));
  return Val_unit;
}

value test_adopt_at_darkening_only(value on)
{
  boxroot__testing_adopt_at_darkening_only(Int_val(on));
  return Val_unit;
}
#else
static value not_a_test_build(value v)
{
  (void)v;
  caml_failwith("this entry point needs the test build of boxroot (BOXROOT_TESTING)");
}
value test_fail_directory_growth_after(value n) { return not_a_test_build(n); }
value test_cycle_offset(value n) { return not_a_test_build(n); }
value test_retired_directory_blocks(value unit) { return not_a_test_build(unit); }
value test_stale_marker(value on) { return not_a_test_build(on); }
value test_fail_allocations(value sites, value after, value persistent)
{
  (void)after; (void)persistent;
  return not_a_test_build(sites);
}
value test_allocation_attempts(value sites) { return not_a_test_build(sites); }
value test_allocation_failures(value sites) { return not_a_test_build(sites); }
value test_alloc_sites_all(value unit) { return not_a_test_build(unit); }
value test_adopt_at_compaction_only(value on) { return not_a_test_build(on); }
value test_adopt_at_darkening_only(value on) { return not_a_test_build(on); }
#endif

/* The id of this thread's domain (0 on OCaml 4.14). */
value test_domain_id(value unit)
{
  (void)unit;
  return Val_int(boxroot__compat_locked_domain());
}

