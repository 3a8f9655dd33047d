/* The report of a broken assertion in test builds (asserts.h). */
#ifdef BOXROOT_TESTING
#include <stdio.h>
#include <stdlib.h>
#include "asserts.h"

_Noreturn void boxroot__invariant_failed(char const *what, char const *file, int line)
{
  fprintf(stderr, "boxroot: invariant broken at %s:%d: %s\n", file, line, what);
  fflush(stderr);
  abort();
}
#endif /* BOXROOT_TESTING */
