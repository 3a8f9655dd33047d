/* The report of a misuse in the debug build (checks.h). The release
   build compiles this file to nothing. */
#if defined(BOXROOT_DEBUG) || defined(BOXROOT__DEBUG_IMPLEMENTATION)
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "checks.h"

_Noreturn void boxroot__debug_misuse(char const *op, void const *addr,
                                    char const *what_format, ...)
{
  char what[512];
  va_list args;
  va_start(args, what_format);
  vsnprintf(what, sizeof what, what_format, args);
  va_end(args);
  fprintf(stderr, "boxroot debug: %s(%p): %s\n", op, addr, what);
  fflush(stderr);
  abort();
}

#endif
