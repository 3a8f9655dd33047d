/* A root deleted by the finaliser of a young custom block: on a
   terminating domain, such finalisers run in its last minor collection,
   after its last scan. */
#define CAML_NAME_SPACE
#include <caml/alloc.h>
#include <caml/custom.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include "boxroot.h"
#include "boxroot_stats.h"

static void finalize_holder(value v)
{
  boxroot r = *(boxroot *)Data_custom_val(v);
  if (r != NULL) boxroot_delete(r);
}

static struct custom_operations holder_ops = {
  "boxroot.test.late_deletion", finalize_holder, custom_compare_default,
  custom_hash_default, custom_serialize_default, custom_deserialize_default,
  custom_compare_ext_default, custom_fixed_length_default
};

/* A young custom block that holds a new root of `v`, deleted when the
   block is finalised. */
value late_holder(value v)
{
  CAMLparam1(v);
  CAMLlocal1(block);
  block = caml_alloc_custom(&holder_ops, sizeof(boxroot), 0, 1);
  *(boxroot *)Data_custom_val(block) = NULL;
  boxroot r = boxroot_create(v);
  if (r == NULL) caml_failwith(boxroot_error_string());
  *(boxroot *)Data_custom_val(block) = r;
  CAMLreturn(block);
}

value late_slots_in_use(value unit)
{
  (void)unit;
  struct boxroot_stats s;
  if (!boxroot_get_stats(&s)) return Val_long(0); /* not set up yet */
  return Val_long(s.slots_in_use);
}
