/* Any library with the boxroot 0.4 API (ours, or upstream's compiled
   from the crate at bench time): the handle is the boxroot itself. */
#include "impl_api.h"
#include "boxroot.h"

#define IMPL_REF_IS_BLOCK 0
typedef boxroot ref_t;

static inline ref_t ref_create(value v)
{
  boxroot r = boxroot_create(v);
  if (r == NULL) impl_die("boxroot_create");
  return r;
}
static inline value ref_get(ref_t r) { return boxroot_get(r); }
static inline void ref_modify(ref_t *r, value v)
{
  if (!boxroot_modify(r, v)) impl_die("boxroot_modify");
}
static inline void ref_delete(ref_t r) { boxroot_delete(r); }
static inline value ref_to_ocaml(ref_t r) { return impl_disguise(r); }
/* The documented protocol (required by upstream with OCaml 4.14). */
static inline void impl_setup(void)
{
  if (!boxroot_setup()) impl_die("boxroot_setup");
}
static inline ref_t ref_of_ocaml(value v) { return impl_undisguise(v); }
