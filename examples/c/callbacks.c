#include <stdlib.h>
#include <caml/mlvalues.h>
#include <caml/alloc.h>
#include <caml/callback.h>
#include <caml/fail.h>
#include <boxroot/boxroot.h>

/* An OCaml closure kept by C, outside the OCaml heap: the root keeps it
   alive and follows it when the GC moves it. */
struct callback { boxroot closure; };

/* The OCaml side holds the C pointer in a block the GC does not scan. */
static struct callback *callback_of(value handle)
{
  return *(struct callback **)Data_abstract_val(handle);
}

value callback_register(value f)
{
  struct callback *cb = malloc(sizeof *cb);
  if (cb == NULL) caml_raise_out_of_memory();
  cb->closure = boxroot_create(f);      /* NULL on failure */
  if (cb->closure == NULL) {
    free(cb);
    caml_failwith(boxroot_error_string());
  }
  /* `f` is rooted from here on: allocating cannot lose it. */
  value handle = caml_alloc_small(1, Abstract_tag);
  *(struct callback **)Data_abstract_val(handle) = cb;
  return handle;
}

value callback_fire(value handle)
{
  return caml_callback(boxroot_get(callback_of(handle)->closure), Val_unit);
}

value callback_release(value handle)
{
  struct callback *cb = callback_of(handle);
  boxroot_delete(cb->closure);          /* also fine from any thread */
  free(cb);
  return Val_unit;
}
