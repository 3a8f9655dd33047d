/* "OCaml ref via C": a one-field block allocated with caml_alloc_small.
   Deletion overwrites the field with an immediate; the GC finds the
   value through the block, which is reachable from the OCaml heap. */
#include "impl_api.h"

#define IMPL_NAME "gc"
#define IMPL_REF_IS_BLOCK 1
typedef value ref_t;

static inline ref_t ref_create(value v)
{
  CAMLparam1(v);
  CAMLlocal1(r);
  r = caml_alloc_small(1, 0);
  Field(r, 0) = v;
  CAMLreturnT(ref_t, r);
}
static inline value ref_get(ref_t r) { return Field(r, 0); }
static inline void ref_modify(ref_t *r, value v) { caml_modify(&Field(*r, 0), v); }
static inline void ref_delete(ref_t r) { caml_modify(&Field(r, 0), Val_unit); }
static inline value ref_to_ocaml(ref_t r) { return r; }
static inline ref_t ref_of_ocaml(value v) { return v; }
static inline long impl_pools_used(void) { return -1; }
static inline void impl_stats_fields(char *buf, size_t size) { if (size) buf[0] = 0; }
static inline void impl_setup(void) {}
