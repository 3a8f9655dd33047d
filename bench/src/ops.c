/* Single operations, timed in C so that only the operation is measured
   (no OCaml-to-C call per operation). The roots alive are the handles
   in an OCaml array `alive` made by ops.ml; for implementations whose
   handles are OCaml blocks the array is written with caml_modify, for
   the others (immediates) with a plain store. Each function returns the
   CPU time of its loop in nanoseconds. */
#include <caml/memory.h>
#include <caml/alloc.h>
#include "impl.h"

long bench_clock_cpu_ns(void);

static inline void store_handle(value alive, long j, ref_t r)
{
#if IMPL_REF_IS_BLOCK
  caml_modify(&Field(alive, j), ref_to_ocaml(r));
#else
  Field(alive, j) = ref_to_ocaml(r);
#endif
}

/* Each step creates a root holding `v` and deletes the oldest of the
   `alive` ones in its place (round robin): k roots stay alive. */
value bench_ops_replace(value alive, value iters, value v)
{
  CAMLparam2(alive, v);
  long k = Wosize_val(alive), n = Long_val(iters), j = 0;
  long t0 = bench_clock_cpu_ns();
  for (long i = 0; i < n; i++) {
    ref_t r = ref_create(v);
    ref_delete(ref_of_ocaml(Field(alive, j)));
    store_handle(alive, j, r);
    if (++j == k) j = 0;
  }
  CAMLreturn(Val_long(bench_clock_cpu_ns() - t0));
}

/* Each step sets the next root (round robin) to `v1` or `v2`. */
value bench_ops_modify(value alive, value iters, value v1, value v2)
{
  CAMLparam3(alive, v1, v2);
  long k = Wosize_val(alive), n = Long_val(iters), j = 0;
  long t0 = bench_clock_cpu_ns();
  for (long i = 0; i < n; i++) {
    ref_t r = ref_of_ocaml(Field(alive, j));
    ref_modify(&r, (i & 1) ? v1 : v2);
    store_handle(alive, j, r);
    if (++j == k) j = 0;
  }
  CAMLreturn(Val_long(bench_clock_cpu_ns() - t0));
}

/* As above with young values: a fresh block every YOUNG_EVERY steps. */
#define YOUNG_EVERY 64
value bench_ops_modify_young(value alive, value iters)
{
  CAMLparam1(alive);
  CAMLlocal1(young);
  long k = Wosize_val(alive), n = Long_val(iters), j = 0;
  long t0 = bench_clock_cpu_ns();
  for (long i = 0; i < n; i++) {
    if (i % YOUNG_EVERY == 0) {
      young = caml_alloc_small(1, 0);
      Field(young, 0) = Val_long(i);
    }
    ref_t r = ref_of_ocaml(Field(alive, j));
    ref_modify(&r, young);
    store_handle(alive, j, r);
    if (++j == k) j = 0;
  }
  CAMLreturn(Val_long(bench_clock_cpu_ns() - t0));
}
