/* Stubs of early_setup.ml: one root created before Thread starts. */
#define CAML_NAME_SPACE
#include <caml/fail.h>
#include <caml/mlvalues.h>
#include <caml/signals.h>
#include "boxroot.h"

static boxroot early_root;

value early_setup_and_root(value v)
{
  if (!boxroot_setup()) caml_failwith("early boxroot_setup failed");
  early_root = boxroot_create(v);
  if (early_root == NULL) caml_failwith("early boxroot_create failed");
  return Val_unit;
}

value early_root_value(value unit)
{
  (void)unit;
  return boxroot_get(early_root);
}

value early_delete_root_unlocked(value unit)
{
  (void)unit;
  boxroot r = early_root;
  early_root = NULL;
  caml_enter_blocking_section();
  boxroot_delete(r);
  caml_leave_blocking_section();
  return Val_unit;
}
