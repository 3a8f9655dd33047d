/* The library's status and errors: setup, the status word, and why the
   calling thread's last call failed. */
#include <errno.h>
#include <pthread.h>
#include "boxroot.h"
#include "status.h"
#include "ticks.h"

/* Written under setup_lock, read without it: release once what it says
   is set up (or torn down), acquire (publication, atomics.h). */
static int status = BOXROOT_NOT_SETUP;
static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread char const *last_error;

void boxroot__fail(int err, char const *why)
{
  last_error = why;
  errno = err;
}

int boxroot_status(void) { return boxroot__load(&status, ACQUIRE); }

char const *boxroot_error_string(void)
{
  if (last_error != NULL) return last_error;
  switch (boxroot_status()) {
  case BOXROOT_NOT_SETUP: return "boxroot is not set up yet (no root created)";
  case BOXROOT_RUNNING: return "boxroot is running; no failure in this thread";
  case BOXROOT_TORE_DOWN: return "boxroot was torn down (boxroot_teardown)";
  default: return "boxroot could not be set up";
  }
}

int boxroot__locked_domain_or_fail(char const *why)
{
  if (boxroot__compat_lock_held_slow()) return boxroot__compat_held_domain();
  boxroot__fail(EPERM, why);
  return -1;
}

bool boxroot_setup(void)
{
  if (boxroot__locked_domain_or_fail("boxroot_setup: this thread does not hold the OCaml domain lock") < 0)
    return false;
  pthread_mutex_lock(&setup_lock);
  if (boxroot_status() == BOXROOT_NOT_SETUP) {
    boxroot__ticks_calibrate();
    boxroot__compat_install_hooks();
    boxroot__store(&status, BOXROOT_RUNNING, RELEASE);
  }
  pthread_mutex_unlock(&setup_lock);
  /* Read once: each read may see a later status. */
  int now = boxroot_status();
  if (now == BOXROOT_RUNNING) return true;
  boxroot__fail(ENOTSUP, now == BOXROOT_TORE_DOWN
       ? "boxroot_setup: boxroot was torn down and cannot be set up again"
       : "boxroot_setup: boxroot is in an invalid state");
  return false;
}

void boxroot__tear_down(void (*release)(void))
{
  pthread_mutex_lock(&setup_lock);
  if (boxroot_status() == BOXROOT_RUNNING) {
    boxroot__store(&status, BOXROOT_TORE_DOWN, RELEASE);
    boxroot__compat_remove_hooks();
    release();
  } else if (boxroot_status() == BOXROOT_NOT_SETUP) {
    boxroot__store(&status, BOXROOT_TORE_DOWN, RELEASE);
  }
  pthread_mutex_unlock(&setup_lock);
}

/* Lock held. */
bool boxroot__running_or_fail(void)
{
  /* Read once: another domain's first creation may set boxroot up
     between two reads, which then disagree (NOT_SETUP, then RUNNING). */
  int now = boxroot_status();
  if (now == BOXROOT_RUNNING) return true;
  if (now == BOXROOT_NOT_SETUP) return boxroot_setup();
  boxroot__fail(ENOTSUP, now == BOXROOT_TORE_DOWN
       ? "boxroot_create: boxroot was torn down"
       : "boxroot_create: boxroot is in an invalid state");
  return false;
}
