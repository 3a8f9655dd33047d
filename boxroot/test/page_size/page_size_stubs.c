/* Stubs of the page-size test: roots kept in C, grouped by the 64 KiB
   page that their pool lies in, the largest page that ARM64 Linux
   kernels use. */
#define CAML_NAME_SPACE
#include <stdlib.h>
#include <unistd.h>
#include <caml/alloc.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include "boxroot.h"
#include "testing.h"

#define GROUP_BYTES ((uintptr_t)1 << 16)

struct root_set {
  long n;
  boxroot *roots;
};

static struct root_set set;

static uintptr_t pool_of(boxroot r) { return (uintptr_t)r & ~(uintptr_t)(BOXROOT__POOL_SIZE - 1); }
static uintptr_t group_of(boxroot r) { return (uintptr_t)r / GROUP_BYTES; }
/* Which pool of its group: 0 .. GROUP_BYTES / BOXROOT__POOL_SIZE - 1. */
static long place_in_group(boxroot r) { return (long)((pool_of(r) % GROUP_BYTES) / BOXROOT__POOL_SIZE); }

/* Creates roots (root i holds i) until they fill `pools` pools. */
value ps_fill(value vpools)
{
  long pools = Long_val(vpools), seen = 0, cap = 1 << 16;
  uintptr_t last = 0;
  set.roots = malloc(cap * sizeof(boxroot));
  set.n = 0;
  for (;;) {
    if (set.roots == NULL) caml_raise_out_of_memory();
    boxroot r = boxroot_create(Val_long(set.n));
    if (r == NULL) caml_failwith(boxroot_error_string());
    if (pool_of(r) != last) {
      last = pool_of(r);
      if (++seen > pools) { boxroot_delete(r); break; }
    }
    if (set.n == cap) { cap *= 2; set.roots = realloc(set.roots, cap * sizeof(boxroot)); }
    set.roots[set.n++] = r;
  }
  return Val_long(set.n);
}

/* Deletes the live roots that `doomed(i)` selects; returns how many. */
static long delete_where(int (*doomed)(boxroot r, long arg), long arg)
{
  long deleted = 0;
  for (long i = 0; i < set.n; i++)
    if (set.roots[i] != NULL && doomed(set.roots[i], arg)) {
      boxroot_delete(set.roots[i]);
      set.roots[i] = NULL;
      deleted++;
    }
  return deleted;
}

/* All but one pool of each group: the group's place `group % places`,
   so that each place keeps its pool in some groups. */
static int outside_survivor(boxroot r, long places)
{
  return place_in_group(r) != (long)(group_of(r) % (uintptr_t)places);
}
value ps_keep_one_pool_per_group(value unit)
{
  (void)unit;
  return Val_long(delete_where(outside_survivor, GROUP_BYTES / BOXROOT__POOL_SIZE));
}

/* Every root of the groups whose number is `parity` modulo 2. */
static int in_parity(boxroot r, long parity) { return (long)(group_of(r) % 2) == parity; }
value ps_empty_groups(value parity) { return Val_long(delete_where(in_parity, Long_val(parity))); }

static int any(boxroot r, long arg) { (void)r; (void)arg; return 1; }
value ps_delete_all(value unit)
{
  (void)unit;
  long deleted = delete_where(any, 0);
  free(set.roots);
  set.roots = NULL;
  set.n = 0;
  return Val_long(deleted);
}

/* The live roots that do not hold what they were given. */
value ps_wrong(value unit)
{
  (void)unit;
  long wrong = 0;
  for (long i = 0; i < set.n; i++)
    if (set.roots[i] != NULL && boxroot_get(set.roots[i]) != Val_long(i)) wrong++;
  return Val_long(wrong);
}

value ps_violations(value unit)
{
  (void)unit;
  return Val_long(boxroot__testing_decommit_violations());
}

/* The page size the library was built to assume (chunk.c). */
value ps_page_size(value unit)
{
  (void)unit;
#ifdef BOXROOT_TESTING_PAGE_SIZE
  return Val_long(BOXROOT_TESTING_PAGE_SIZE);
#else
  return Val_long(sysconf(_SC_PAGESIZE));
#endif
}
