/* The differences between OCaml 4.14 and OCaml 5 that boxroot depends on,
   in one place. Everything else in boxroot is version-independent.

   - Who holds the runtime lock. OCaml 5 has one lock per domain and
     clears the thread-local `Caml_state` when a thread releases it, so
     "this thread holds a domain lock" is `Caml_state_opt != NULL`, and the
     domain is `Caml_state->id` (< Max_domains_max = 4096). OCaml 4.14 has a
     single master lock and a global `Caml_state`; boxroot tracks
     ownership in a thread-local flag maintained by the blocking-section
     hooks (see scan.c), and there is one domain, number 0.
   - Youth. `Is_young` compares against the reserved area of all minor
     heaps in OCaml 5, against the one minor heap in OCaml 4.14.
   - The scanning hook's signature (see scan.c). */
#ifndef BOXROOT_OCAML_COMPAT_H
#define BOXROOT_OCAML_COMPAT_H

#include <caml/version.h>
#include <caml/mlvalues.h>
#include <caml/address_class.h>

#if OCAML_VERSION_MAJOR >= 5
#define BOXROOT_MULTICORE 1
#include <caml/domain_state.h>
#else
#define BOXROOT_MULTICORE 0
#if OCAML_VERSION_MAJOR < 4 || OCAML_VERSION_MINOR < 14
#error "boxroot needs OCaml 4.14 or later"
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if BOXROOT_MULTICORE

/* The id of the domain whose lock this thread holds, or -1. */
static inline int boxroot_compat_locked_domain(void)
{
  caml_domain_state *state = Caml_state_opt;
  if (state == NULL) return -1;
  /* Domain ids are never negative: telling the compiler lets it reduce
     `boxroot_compat_locked_domain() >= 0` to the NULL test above. */
  if (state->id < 0) __builtin_unreachable();
  return state->id;
}

static inline int boxroot_compat_is_young(value v)
{
  return Is_block(v) && Is_young(v);
}

#else /* OCaml 4.14 */

/* Set by boxroot while this thread holds the master lock (scan.c). */
extern __thread int boxroot_compat_holds_master_lock;

static inline int boxroot_compat_locked_domain(void)
{
  return boxroot_compat_holds_master_lock ? 0 : -1;
}

static inline int boxroot_compat_is_young(value v)
{
  return Is_block(v) && Is_young(v);
}

#endif

#ifdef __cplusplus
}
#endif

#endif /* BOXROOT_OCAML_COMPAT_H */
