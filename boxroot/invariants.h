/* Checking the invariants that pool.h, domain.h and chunk.h state.

   BOXROOT__ASSERT(e) checks `e` in test builds (BOXROOT_TESTING, the
   library `boxroot_testing` that boxroot's own tests link) and compiles to
   nothing otherwise. boxroot__check_domain walks a domain's rings and
   checks every structural invariant of domain.h and pool.h; test builds
   run it at the end of every scan, and the tests call it through
   boxroot__testing_check_invariants (testing.h). A failure prints the
   broken invariant and aborts. */
#ifndef BOXROOT_INVARIANTS_H
#define BOXROOT_INVARIANTS_H

struct boxroot_domain;

#ifdef BOXROOT_TESTING
_Noreturn void boxroot__invariant_failed(char const *what, char const *file, int line);
#define BOXROOT__ASSERT(e) \
  ((e) ? (void)0 : boxroot__invariant_failed(#e, __FILE__, __LINE__))
/* Checks the rings of `d` and their pools. `d`'s owner or its scan. */
void boxroot__check_domain(struct boxroot_domain *d);
#else
#define BOXROOT__ASSERT(e) ((void)0)
static inline void boxroot__check_domain(struct boxroot_domain *d) { (void)d; }
#endif

#endif /* BOXROOT_INVARIANTS_H */
