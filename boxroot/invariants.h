/* The ring walker of test builds: checks the invariants that pool.h and
   domain.h state.

   boxroot__check_domain walks a domain's rings and checks every
   structural invariant of domain.h and pool.h; test builds run it at the
   end of every scan, and the tests call it through
   boxroot__testing_check_invariants (testing.h). A failure prints the
   broken invariant and aborts (asserts.h). */
#ifndef BOXROOT_INVARIANTS_H
#define BOXROOT_INVARIANTS_H

struct boxroot_domain;

#ifdef BOXROOT_TESTING
/* Checks the rings of `d` and their pools. `d`'s owner or its scan. */
void boxroot__check_domain(struct boxroot_domain *d);
#else
static inline void boxroot__check_domain(struct boxroot_domain *d) { (void)d; }
#endif

#endif /* BOXROOT_INVARIANTS_H */
