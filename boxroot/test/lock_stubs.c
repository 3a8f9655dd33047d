/* Probes of boxroot's lock detection (test_locks.ml): what
   boxroot__compat_locked_domain() answers in each situation where a thread
   gains or loses the runtime lock. -1 means "holds no lock". */
#define CAML_NAME_SPACE
#include <pthread.h>
#include <signal.h>
#include <caml/alloc.h>
#include <caml/memory.h>
#include <caml/signals.h>
#include <caml/threads.h>
#include "boxroot.h"

/* OCaml signal number to system signal number (not in the public headers). */
CAMLextern int caml_convert_signal_number(int);

value test_locked_domain(value unit)
{
  (void)unit;
  return Val_int(boxroot__compat_locked_domain());
}

value test_locked_in_blocking_section(value unit)
{
  (void)unit;
  caml_enter_blocking_section();
  int d = boxroot__compat_locked_domain();
  caml_leave_blocking_section();
  return Val_int(d);
}

/* Sends `sig` to this thread, then enters a blocking section: the signal
   is pending while caml_enter_blocking_section runs its loop (process
   the signals, release, and re-acquire if one arrived meanwhile). */
value test_locked_after_signal_in_blocking_section(value sig)
{
  int s = caml_convert_signal_number(Int_val(sig));
  pthread_kill(pthread_self(), s);
  caml_enter_blocking_section();
  int d = boxroot__compat_locked_domain();
  caml_leave_blocking_section();
  return Val_int(d);
}

/* Whether boxroot's blocking-section hooks are the installed ones (OCaml
   4.14; always true on OCaml 5, which needs none). */
value test_blocking_hooks_are_boxroots(value unit)
{
  (void)unit;
#if BOXROOT_MULTICORE
  return Val_true;
#else
  return Val_bool(boxroot__compat_blocking_hooks_are_ours());
#endif
}

/* A thread the runtime never saw. */
static void *probe_foreign(void *arg)
{
  *(int *)arg = boxroot__compat_locked_domain();
  return NULL;
}

value test_locked_in_foreign_thread(value unit)
{
  (void)unit;
  pthread_t t;
  int seen = 1000;
  caml_enter_blocking_section();
  pthread_create(&t, NULL, probe_foreign, &seen);
  pthread_join(t, NULL);
  caml_leave_blocking_section();
  return Val_int(seen);
}

/* A C thread that registers with the runtime, enters it, creates and
   deletes a root, leaves it and unregisters; the lock state at each step. */
enum { REG_BEFORE, REG_REGISTERED, REG_INSIDE, REG_ROOT_OK, REG_LEFT,
       REG_UNREGISTERED, REG_STEPS };

static void *registered_thread(void *arg)
{
  int *seen = arg;
  seen[REG_BEFORE] = boxroot__compat_locked_domain();
  if (!caml_c_thread_register()) return NULL;
  seen[REG_REGISTERED] = boxroot__compat_locked_domain();
  caml_leave_blocking_section();
  seen[REG_INSIDE] = boxroot__compat_locked_domain();
  boxroot r = boxroot_create(Val_int(1234));
  seen[REG_ROOT_OK] = r != NULL && boxroot_get(r) == Val_int(1234);
  if (r != NULL) boxroot_delete(r);
  caml_enter_blocking_section();
  seen[REG_LEFT] = boxroot__compat_locked_domain();
  caml_c_thread_unregister();
  seen[REG_UNREGISTERED] = boxroot__compat_locked_domain();
  return NULL;
}

value test_locked_in_registered_thread(value unit)
{
  CAMLparam1(unit);
  CAMLlocal1(res);
  int seen[REG_STEPS];
  for (int i = 0; i < REG_STEPS; i++) seen[i] = 1000;
  pthread_t t;
  caml_enter_blocking_section();
  pthread_create(&t, NULL, registered_thread, seen);
  pthread_join(t, NULL);
  caml_leave_blocking_section();
  res = caml_alloc_tuple(REG_STEPS);
  for (int i = 0; i < REG_STEPS; i++) Store_field(res, i, Val_int(seen[i]));
  CAMLreturn(res);
}

/* Runs `n` blocking sections while a plain C thread keeps sending `sig`
   to this thread, so that signals arrive at every point of
   caml_enter_blocking_section's loop. Returns how many times the lock
   state was wrong (held inside, or not held outside). */
struct storm { pthread_t target; int sig; int stop; };

static void *send_signals(void *arg)
{
  struct storm *st = arg;
  while (!__atomic_load_n(&st->stop, __ATOMIC_ACQUIRE)) {
    pthread_kill(st->target, st->sig);
    for (volatile int i = 0; i < 2000; i++) {}
  }
  return NULL;
}

value test_blocking_sections_under_signals(value sig, value n)
{
  struct storm st = { pthread_self(), caml_convert_signal_number(Int_val(sig)), 0 };
  pthread_t sender;
  pthread_create(&sender, NULL, send_signals, &st);
  long wrong = 0;
  for (long i = 0; i < Long_val(n); i++) {
    caml_enter_blocking_section();
    wrong += boxroot__compat_locked_domain() >= 0;
    caml_leave_blocking_section();
    wrong += boxroot__compat_locked_domain() < 0;
  }
  __atomic_store_n(&st.stop, 1, __ATOMIC_RELEASE);
  caml_enter_blocking_section();
  pthread_join(sender, NULL);
  caml_leave_blocking_section();
  return Val_long(wrong);
}

/* Records the lock state when the calling thread's thread-local data is
   destroyed, i.e. after its OCaml code returned. */
static pthread_key_t exit_probe_key;
static pthread_once_t exit_probe_once = PTHREAD_ONCE_INIT;
static int exit_probe_seen = 1000;

static void exit_probe(void *arg)
{
  (void)arg;
  __atomic_store_n(&exit_probe_seen, boxroot__compat_locked_domain(), __ATOMIC_RELEASE);
}

static void make_exit_probe_key(void)
{
  pthread_key_create(&exit_probe_key, exit_probe);
}

value test_arm_exit_probe(value unit)
{
  (void)unit;
  pthread_once(&exit_probe_once, make_exit_probe_key);
  pthread_setspecific(exit_probe_key, &exit_probe_seen);
  return Val_unit;
}

value test_exit_probe_seen(value unit)
{
  (void)unit;
  return Val_int(__atomic_load_n(&exit_probe_seen, __ATOMIC_ACQUIRE));
}

/* The main thread waits in a blocking section until another thread says
   it went on (test_locks_early: after it made boxroot take its hooks
   back), then reports whether it is taken for the lock holder. */
static pthread_mutex_t went_on_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t went_on_cond = PTHREAD_COND_INITIALIZER;
static int went_on;

value test_locked_in_blocking_section_until_went_on(value unit)
{
  (void)unit;
  caml_enter_blocking_section();
  pthread_mutex_lock(&went_on_lock);
  while (!went_on) pthread_cond_wait(&went_on_cond, &went_on_lock);
  pthread_mutex_unlock(&went_on_lock);
  int d = boxroot__compat_locked_domain();
  caml_leave_blocking_section();
  return Val_int(d);
}

value test_went_on(value unit)
{
  (void)unit;
  pthread_mutex_lock(&went_on_lock);
  went_on = 1;
  pthread_cond_broadcast(&went_on_cond);
  pthread_mutex_unlock(&went_on_lock);
  return Val_unit;
}

/* Replaces the installed enter hook (boxroot's) with one of another
   library's, which releases the lock through the hook that was installed
   at its first call (OCaml 4.14; nothing on OCaml 5). boxroot takes its
   hooks back at its next creation slow path or scan, with an enter hook
   it never installed before, as long as it has one left. */
#if !BOXROOT_MULTICORE
static void (*first_replaced)(void);
static void foreign_enter_hook(void) { first_replaced(); }
#endif

value test_replace_enter_hook(value unit)
{
  (void)unit;
#if !BOXROOT_MULTICORE
  if (first_replaced == NULL) first_replaced = caml_enter_blocking_section_hook;
  caml_enter_blocking_section_hook = foreign_enter_hook;
#endif
  return Val_unit;
}
