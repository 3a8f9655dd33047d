/* The library's status and errors inside the library (status.c). */
#ifndef BOXROOT_STATUS_H
#define BOXROOT_STATUS_H

#include <stdbool.h>

/* Records why the calling thread's last call failed. */
void boxroot__fail(int err, char const *why);
/* The id of the domain whose lock this thread holds
   (boxroot__compat_lock_held_slow, ocaml_compat.h); -1 if it holds none,
   after recording EPERM and `why`. */
int boxroot__locked_domain_or_fail(char const *why);
/* Sets boxroot up if needed; false (error recorded) if it is not running
   afterwards. */
bool boxroot__running_or_fail(void);
/* boxroot_teardown: if boxroot runs, marks it torn down, removes the
   runtime's hooks and calls `release`, which gives back what the layers
   above hold; all under the setup lock, so that no setup runs meanwhile.
   If it was never set up, it cannot be any more. */
void boxroot__tear_down(void (*release)(void));

#endif /* BOXROOT_STATUS_H */
