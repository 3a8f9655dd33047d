/* Stubs of the many-pools test: a set of roots kept in C memory, as a
   binding keeps them, that OCaml code cannot reach. */
#define CAML_NAME_SPACE
#include <stdlib.h>
#include <string.h>
#include <caml/alloc.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include "boxroot.h"

struct root_set {
  long n;       /* roots created, 0 .. n-1 */
  long keep;    /* root i survives the thinning iff i % keep == 0 */
  long blocks;  /* a survivor i holds a string iff i % (keep * blocks) == 0 */
  boxroot *roots;
};

static value of_set(struct root_set *s) { return (value)s | 1; }
static struct root_set *to_set(value v) { return (struct root_set *)(v & ~(value)1); }

static int holds_block(struct root_set *s, long i)
{
  return s->blocks > 0 && i % (s->keep * s->blocks) == 0;
}

/* Creates n roots (root i holds i), then deletes all but every keep-th;
   every blocks-th survivor is then made to hold a fresh string. */
value mp_fill(value vn, value vkeep, value vblocks)
{
  CAMLparam0();
  CAMLlocal1(str);
  struct root_set *s = malloc(sizeof *s);
  if (s == NULL) caml_raise_out_of_memory();
  s->n = Long_val(vn);
  s->keep = Long_val(vkeep);
  s->blocks = Long_val(vblocks);
  s->roots = malloc(s->n * sizeof(boxroot));
  if (s->roots == NULL) caml_raise_out_of_memory();
  for (long i = 0; i < s->n; i++) {
    s->roots[i] = boxroot_create(Val_long(i));
    if (s->roots[i] == NULL) caml_failwith(boxroot_error_string());
  }
  for (long i = 0; i < s->n; i++) {
    if (i % s->keep != 0) {
      boxroot_delete(s->roots[i]);
      s->roots[i] = NULL;
    } else if (holds_block(s, i)) {
      str = caml_alloc_sprintf("root %ld", i);
      if (!boxroot_modify(&s->roots[i], str)) caml_failwith(boxroot_error_string());
    }
  }
  CAMLreturn(of_set(s));
}

/* The number of survivors that do not hold what they were given. */
value mp_wrong(value vs)
{
  struct root_set *s = to_set(vs);
  long wrong = 0;
  char expected[64];
  for (long i = 0; i < s->n; i += s->keep) {
    value v = boxroot_get(s->roots[i]);
    if (holds_block(s, i)) {
      snprintf(expected, sizeof expected, "root %ld", i);
      if (Is_long(v) || Tag_val(v) != String_tag || strcmp(String_val(v), expected) != 0)
        wrong++;
    } else if (v != Val_long(i)) {
      wrong++;
    }
  }
  return Val_long(wrong);
}

value mp_clear(value vs)
{
  struct root_set *s = to_set(vs);
  for (long i = 0; i < s->n; i += s->keep) boxroot_delete(s->roots[i]);
  free(s->roots);
  free(s);
  return Val_unit;
}

#include "testing.h"
value mp_fail_directory_growth_after(value n)
{
  boxroot__testing_fail_allocations(BOXROOT__ALLOC_DIRECTORY, Long_val(n), 1);
  return Val_unit;
}
