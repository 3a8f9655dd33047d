/* The contract every implementation header (impl_*.h) fulfils. Each
   benchmark executable is built for one implementation: its impl_X.h is
   copied to impl.h next to the generic stubs (ref_stubs.c, ops.c), so the
   operations inline into the stubs and nothing is dispatched at run time.

     typedef ... ref_t;                 the C handle of a rooted value
     IMPL_REF_IS_BLOCK                  1 if ref_t is an OCaml block (it must
                                        then be stored with caml_modify)
     ref_t ref_create(value v);         never fails (aborts instead)
     value ref_get(ref_t r);
     void  ref_modify(ref_t *r, value v);   may move the root
     void  ref_delete(ref_t r);
     value ref_to_ocaml(ref_t r);       how a handle crosses into OCaml:
     ref_t ref_of_ocaml(value v);       pointer | 1, an immediate, for every
                                        root kept outside the OCaml heap
     long  impl_pools_used(void);       boxroot pools, or -1 if meaningless
     void  impl_stats_fields(char *buf, size_t size);
                                        the library's own statistics as
                                        " stat_<name>=<integer>" fields of a
                                        RESULT line ("" if it has none)
     void  impl_setup(void);            at program start (boxroot_setup)
     const char *IMPL_NAME;
*/
#ifndef BENCH_IMPL_API_H
#define BENCH_IMPL_API_H

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <caml/mlvalues.h>
#include <caml/memory.h>
#include <caml/alloc.h>

static inline void impl_die(const char *what)
{
  fprintf(stderr, "bench: %s failed\n", what);
  abort();
}

/* Handles outside the OCaml heap are word-aligned pointers: setting bit 0
   makes them OCaml immediates, which the GC ignores. */
static inline value impl_disguise(void *p) { return (value)((uintptr_t)p | 1); }
static inline void *impl_undisguise(value v) { return (void *)((uintptr_t)v & ~(uintptr_t)1); }

#endif
