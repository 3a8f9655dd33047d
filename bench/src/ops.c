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

/* ---- Plain C loops, as a user writes them ----

   The loops above keep k roots alive in an OCaml array. These keep their
   roots in C variables, as foreign code usually does, so that only the
   operations and the loop are measured. Implementations whose handles
   are OCaml blocks (IMPL_REF_IS_BLOCK) cannot keep them in C across an
   allocation: they return -1 and ops.ml reports nothing. */

/* Create a root and delete it at once: no other root of this loop
   alive. */
value bench_loop_create_delete(value iters, value v)
{
  CAMLparam1(v);
#if IMPL_REF_IS_BLOCK
  CAMLreturn(Val_long(-1));
#else
  long n = Long_val(iters);
  long t0 = bench_clock_cpu_ns();
  for (long i = 0; i < n; i++) ref_delete(ref_create(v));
  CAMLreturn(Val_long(bench_clock_cpu_ns() - t0));
#endif
}

/* Batches of LOOP_BATCH roots: all created, then all deleted in creation
   order; `iters` create+delete pairs in all (the last batch may be
   smaller). */
#define LOOP_BATCH 10000
value bench_loop_batches(value iters, value v)
{
  CAMLparam1(v);
#if IMPL_REF_IS_BLOCK
  CAMLreturn(Val_long(-1));
#else
  static ref_t batch[LOOP_BATCH];
  long n = Long_val(iters);
  long t0 = bench_clock_cpu_ns();
  for (long done = 0; done < n; done += LOOP_BATCH) {
    long m = n - done < LOOP_BATCH ? n - done : LOOP_BATCH;
    for (long i = 0; i < m; i++) batch[i] = ref_create(v);
    for (long i = 0; i < m; i++) ref_delete(batch[i]);
  }
  CAMLreturn(Val_long(bench_clock_cpu_ns() - t0));
#endif
}

/* One root, set alternately to `v1` and `v2` (both old). */
value bench_loop_modify(value iters, value v1, value v2)
{
  CAMLparam2(v1, v2);
#if IMPL_REF_IS_BLOCK
  CAMLreturn(Val_long(-1));
#else
  long n = Long_val(iters);
  ref_t r = ref_create(v1);
  long t0 = bench_clock_cpu_ns();
  for (long i = 0; i < n; i++) ref_modify(&r, (i & 1) ? v1 : v2);
  long t = bench_clock_cpu_ns() - t0;
  ref_delete(r);
  CAMLreturn(Val_long(t));
#endif
}
