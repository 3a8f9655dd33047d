/* C stubs for test_leaks.ml: roots created by known functions, which the
   leak report must name by their symbols (OCaml links its programs with
   -Wl,-E, so dladdr sees them). Built with -DBOXROOT_DEBUG. */
#define CAML_NAME_SPACE
#include <stdio.h>
#include <stdlib.h>
#include <caml/alloc.h>
#include <caml/memory.h>
#include "boxroot.h"

#define LEAKED 1000
#define WEAK_LEAKED 3
static boxroot leaked[LEAKED];
static boxroot_weak weak_leaked[WEAK_LEAKED];
/* Unknown to the compiler, so that it does not unroll the loop: a site
   is a call instruction. */
static int volatile weak_leaked_count = WEAK_LEAKED;

static void check_created(void const *r)
{
  if (r == NULL) { fprintf(stderr, "boxroot_create failed\n"); exit(2); }
}

/* Not inlined, not static: each creating function keeps its own symbol. */
__attribute__((noinline)) void leaks_test_leak_a_thousand(void)
{
  for (int i = 0; i < LEAKED; i++) {
    leaked[i] = boxroot_create(Val_long(i));
    check_created(leaked[i]);
  }
}

__attribute__((noinline)) void leaks_test_create_and_delete_ten(void)
{
  for (int i = 0; i < 10; i++) {
    boxroot r = boxroot_create(Val_long(i));
    check_created(r);
    boxroot_delete(r);
  }
}

__attribute__((noinline)) void leaks_test_leak_three_weak(void)
{
  for (int i = 0; i < weak_leaked_count; i++) {
    weak_leaked[i] = boxroot_weak_create(Val_long(i));
    check_created(weak_leaked[i]);
  }
}

value leaks_test_create(value unit)
{
  leaks_test_leak_a_thousand();
  leaks_test_create_and_delete_ten();
  leaks_test_leak_three_weak();
  return unit;
}

/* Moves the first leaked root (its pool is old after a minor collection,
   the value young): it must keep its creation site. */
value leaks_test_move_one(value v)
{
  boxroot before = leaked[0];
  if (!boxroot_modify(&leaked[0], v)) exit(2);
  return Val_bool(leaked[0] != before);
}

value leaks_test_delete_all(value unit)
{
  for (int i = 0; i < LEAKED; i++) boxroot_delete(leaked[i]);
  for (int i = 0; i < WEAK_LEAKED; i++) boxroot_weak_delete(weak_leaked[i]);
  return unit;
}

value leaks_test_report(value unit)
{
  fflush(stdout);
  boxroot_debug_report_leaks(stdout);
  return unit;
}
