/* Stubs of test_stats_race.ml: a watchdog that turns a hang into a
   failure, and the statistics read without the domain lock. */
#define CAML_NAME_SPACE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <caml/mlvalues.h>
#include <caml/signals.h>
#include "boxroot.h"
#include "boxroot_stats.h"

/* A hang may hold a domain lock in C and stop every domain at the next
   stop-the-world section: only a thread outside OCaml can end it. */
static void *watchdog(void *arg)
{
  unsigned seconds = (unsigned)(uintptr_t)arg;
  sleep(seconds);
  fprintf(stderr, "FAIL: watchdog: the test did not finish within %u s (hang)\n", seconds);
  _exit(3);
  return NULL;
}

/* Ends the process unless it exits first. */
value stats_race_watchdog(value seconds)
{
  pthread_t t;
  if (pthread_create(&t, NULL, watchdog, (void *)(uintptr_t)Long_val(seconds)) == 0)
    pthread_detach(t);
  return Val_unit;
}

/* boxroot_get_stats and boxroot_print_stats from a thread holding no
   domain lock: whether the call was refused with EPERM. */
value stats_race_refused_without_lock(value unit)
{
  (void)unit;
  struct boxroot_stats s;
  caml_enter_blocking_section();
  errno = 0;
  bool ok = boxroot_get_stats(&s);
  int err = errno;
  boxroot_print_stats();
  fflush(stdout);
  caml_leave_blocking_section();
  return Val_bool(!ok && err == EPERM);
}
