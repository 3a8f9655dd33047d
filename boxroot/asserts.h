/* Assertions of test builds: BOXROOT__ASSERT(e).

   BOXROOT__ASSERT(e) checks `e` in test builds (BOXROOT_TESTING, the
   library `boxroot_testing` that boxroot's own tests link) and compiles
   to nothing otherwise. A failure prints the broken invariant and
   aborts. */
#ifndef BOXROOT_ASSERTS_H
#define BOXROOT_ASSERTS_H

#ifdef BOXROOT_TESTING
_Noreturn void boxroot__invariant_failed(char const *what, char const *file, int line);
#define BOXROOT__ASSERT(e) \
  ((e) ? (void)0 : boxroot__invariant_failed(#e, __FILE__, __LINE__))
#else
#define BOXROOT__ASSERT(e) ((void)0)
#endif

#endif /* BOXROOT_ASSERTS_H */
