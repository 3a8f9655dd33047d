/* C side of weak_bench.ml: strong and weak boxroots, and the workaround
   that programs use today (a root holding a one-element Weak.t), behind
   [@@noalloc] externals. Roots cross into OCaml as immediates (address
   | 1). */
#define CAML_NAME_SPACE
#include <stdlib.h>
#include <time.h>
#include <caml/alloc.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>
#include "boxroot.h"
#include "boxroot_stats.h"

#define TO(v) ((void *)((v) & ~(value)1))
#define OF(p) ((value)(p) | 1)

value wb_create(value v) { return OF(boxroot_create(v)); }
value wb_get(value r) { return boxroot_get(TO(r)); }
value wb_delete(value r) { boxroot_delete(TO(r)); return Val_unit; }

value wb_weak_create(value v) { return OF(boxroot_weak_create(v)); }
/* The value, or () once it is gone (no option: nothing allocated). */
value wb_weak_get(value w)
{
  value v;
  return boxroot_weak_get(TO(w), &v) ? v : Val_unit;
}
value wb_weak_delete(value w) { boxroot_weak_delete(TO(w)); return Val_unit; }

/* A generational global root in a malloc'd cell. */
value wb_global_create(value v)
{
  value *cell = malloc(sizeof *cell);
  if (cell == NULL) caml_failwith("malloc");
  *cell = v;
  caml_register_generational_global_root(cell);
  return OF(cell);
}
value wb_global_get(value g) { return *(value *)TO(g); }
value wb_global_delete(value g)
{
  caml_remove_generational_global_root(TO(g));
  free(TO(g));
  return Val_unit;
}

/* Statistics: weak clearing time in slices and stop-the-world sections
   (ns), weak roots cleared so far. */
value wb_weak_stats(value unit)
{
  CAMLparam1(unit);
  CAMLlocal1(r);
  struct boxroot_stats s;
  boxroot_get_stats(&s);
  r = caml_alloc_tuple(3);
  Store_field(r, 0, Val_long(s.weak_clear_ns));
  Store_field(r, 1, Val_long(s.weak_clear_stw_ns));
  Store_field(r, 2, Val_long(s.weak_cleared));
  CAMLreturn(r);
}

/* Gets timed in C, loop included (as bench/src/ops.c times single
   operations): what a C binding pays per read, without the OCaml-to-C
   call that the OCaml-side loop adds to each. The workaround reads its
   Weak.t through the runtime's primitive behind Weak.get (which
   allocates the option), the one way C code has on OCaml 5, whose
   headers export no ephemeron accessor. `handles` holds roots as
   immediates; `kind`: 0 strong, 1 weak, 2 boxroot + Weak.t,
   3 global root + Weak.t. Returns ns per get; the values read are
   `int ref`s, summed into `wb_get_loop_sink`. */
CAMLextern value caml_weak_get(value ar, value n);
long wb_get_loop_sink;

static double elapsed_ns(struct timespec const *t0)
{
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) * 1e9 + (double)(t1.tv_nsec - t0->tv_nsec);
}

#define WB_LOOP(READ)                                          \
  for (long round = 0; round < rounds; round++)                \
    for (long i = 0; i < n; i++) {                             \
      value h = Field(handles, i), v;                          \
      READ;                                                    \
      sum += Long_val(Field(v, 0));                            \
    }

value wb_get_loop(value kind, value handles, value vrounds)
{
  CAMLparam1(handles);
  CAMLlocal1(opt);
  long n = Wosize_val(handles), rounds = Long_val(vrounds), sum = 0;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  switch (Long_val(kind)) {
  case 0: WB_LOOP(v = boxroot_get(TO(h))); break;
  case 1: WB_LOOP(if (!boxroot_weak_get(TO(h), &v)) caml_failwith("weak root emptied")); break;
  case 2:
    WB_LOOP(opt = caml_weak_get(boxroot_get(TO(h)), Val_int(0));
            if (Is_long(opt)) caml_failwith("Weak.t emptied");
            v = Field(opt, 0));
    break;
  default:
    WB_LOOP(opt = caml_weak_get(*(value *)TO(h), Val_int(0));
            if (Is_long(opt)) caml_failwith("Weak.t emptied");
            v = Field(opt, 0));
    break;
  }
  double ns = elapsed_ns(&t0) / ((double)n * (double)rounds);
  wb_get_loop_sink += sum;
  CAMLreturn(caml_copy_double(ns));
}

/* A table of weak entries (weak_bench.ml, "table"): entry i holds
   Field(vals, i) weakly, by a notifying root (word i) or a plain one.
   Cleaning removes the entries whose value died: by draining the
   notices, or by polling every entry. Removed entries wait on a stack
   for wb_table_refill. */
static boxroot_weak *table_roots;
static long table_n, *table_removed, table_nremoved;
static int table_notifying;

static boxroot_weak table_root(value v, long i)
{
  boxroot_weak w = table_notifying ? boxroot_weak_create_notifying(v, (uintptr_t)i)
                                   : boxroot_weak_create(v);
  if (w == NULL) caml_failwith("boxroot_weak_create");
  return w;
}

value wb_table_init(value vals, value notifying)
{
  table_n = Wosize_val(vals);
  table_notifying = Bool_val(notifying);
  table_roots = malloc(table_n * sizeof *table_roots);
  table_removed = malloc(table_n * sizeof *table_removed);
  if (table_roots == NULL || table_removed == NULL) caml_failwith("malloc");
  table_nremoved = 0;
  for (long i = 0; i < table_n; i++) table_roots[i] = table_root(Field(vals, i), i);
  return Val_unit;
}

static void table_remove(long i)
{
  boxroot_weak_delete(table_roots[i]);
  table_roots[i] = NULL;
  table_removed[table_nremoved++] = i;
}

/* Cleans the table; returns the ns it took (the number removed:
   wb_table_removed). */
value wb_table_clean(value unit)
{
  (void)unit;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (table_notifying) {
    boxroot_weak w;
    uintptr_t i;
    while (boxroot_weak_next_emptied(&w, &i)) table_remove((long)i);
  } else {
    for (long i = 0; i < table_n; i++) {
      value v;
      if (table_roots[i] != NULL && !boxroot_weak_get(table_roots[i], &v)) table_remove(i);
    }
  }
  return caml_copy_double(elapsed_ns(&t0));
}

value wb_table_removed(value unit) { (void)unit; return Val_long(table_nremoved); }

/* Entries removed get a root to their new value, Field(vals, i). */
value wb_table_refill(value vals)
{
  for (long k = 0; k < table_nremoved; k++) {
    long i = table_removed[k];
    table_roots[i] = table_root(Field(vals, i), i);
  }
  table_nremoved = 0;
  return Val_unit;
}

value wb_table_free(value unit)
{
  (void)unit;
  for (long i = 0; i < table_n; i++)
    if (table_roots[i] != NULL) boxroot_weak_delete(table_roots[i]);
  free(table_roots);
  free(table_removed);
  /* Notices of roots deleted here are dropped (never reported). */
  boxroot_weak w;
  uintptr_t word;
  while (boxroot_weak_next_emptied(&w, &word)) boxroot_weak_delete(w);
  return Val_unit;
}
