/* The library's status and errors inside the library (status.c). */
#ifndef BOXROOT_STATUS_H
#define BOXROOT_STATUS_H

#include <stdbool.h>

/* Records why the calling thread's last call failed. */
void boxroot__fail(int err, char const *why);
/* Whether this thread holds a domain lock; records EPERM and `why`
   otherwise. */
bool boxroot__lock_held_or_fail(char const *why);
/* Sets boxroot up if needed; false (error recorded) if it is not running
   afterwards. */
bool boxroot__running_or_fail(void);
/* boxroot_teardown: if boxroot runs, marks it torn down, removes the
   runtime's hooks and calls `release`, which gives back what the layers
   above hold; all under the setup lock, so that no setup runs meanwhile.
   If it was never set up, it cannot be any more. */
void boxroot__tear_down(void (*release)(void));

#endif /* BOXROOT_STATUS_H */
