#include <caml/mlvalues.h>
#include <caml/custom.h>
#include <caml/memory.h>
#include <caml/fail.h>
#include <boxroot/boxroot.h>

/* An OCaml value owned by a custom block: the block's finalizer, which
   the GC calls when the block dies, deletes the root. Deleting roots
   (boxroot_delete, boxroot_weak_delete) is the only boxroot call a
   finalizer may make. */
struct handle { boxroot payload; };

#define Handle_val(v) ((struct handle *)Data_custom_val(v))

static long finalized;

static void handle_finalize(value h)
{
  boxroot payload = Handle_val(h)->payload;
  if (payload != NULL) boxroot_delete(payload);
  finalized++;
}

static struct custom_operations handle_ops = {
  "boxroot.example.handle", handle_finalize,
  custom_compare_default, custom_hash_default,
  custom_serialize_default, custom_deserialize_default,
  custom_compare_ext_default, custom_fixed_length_default,
};

value handle_make(value payload)
{
  CAMLparam1(payload);
  CAMLlocal1(h);
  h = caml_alloc_custom_mem(&handle_ops, sizeof(struct handle), sizeof(struct handle));
  Handle_val(h)->payload = boxroot_create(payload);  /* NULL on failure */
  if (Handle_val(h)->payload == NULL) caml_failwith(boxroot_error_string());
  CAMLreturn(h);
}

value handle_payload(value h)
{
  return boxroot_get(Handle_val(h)->payload);
}

value handle_finalized(value unit)
{
  (void)unit;
  return Val_long(finalized);
}
