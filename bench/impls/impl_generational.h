/* Generational global roots: a malloc'd cell registered with
   caml_register_generational_global_root (the usual way to get a movable
   root before boxroot). Modifications go through the runtime so that it
   can track young values. */
#include "impl_api.h"

#define IMPL_NAME "generational"
#define IMPL_REF_IS_BLOCK 0
typedef value *ref_t;

static inline ref_t ref_create(value v)
{
  value *cell = malloc(sizeof *cell);
  if (cell == NULL) impl_die("malloc");
  *cell = v;
  caml_register_generational_global_root(cell);
  return cell;
}
static inline value ref_get(ref_t r) { return *r; }
static inline void ref_modify(ref_t *r, value v) { caml_modify_generational_global_root(*r, v); }
static inline void ref_delete(ref_t r) { caml_remove_generational_global_root(r); free(r); }
static inline value ref_to_ocaml(ref_t r) { return impl_disguise(r); }
static inline ref_t ref_of_ocaml(value v) { return impl_undisguise(v); }
static inline long impl_pools_used(void) { return -1; }
static inline void impl_stats_fields(char *buf, size_t size) { if (size) buf[0] = 0; }
static inline void impl_setup(void) {}
