/* Directories: each domain's list of its pools, laid out as one OCaml
   block whose fields the domain's marker reads (marking.c, M0).

   Invariants (the marking protocol's, marking.c, enforced here):
   - Every field of a block, current or retired, is a listed pool's first
     slot or an odd word (M2): the marker reads it as a value.
   - Only the domain writes its directory, and only its own marker reads
     it (M0), so the two never run at once; but the marker may read a
     block until that domain's marking is done, so a block that growth
     replaces is retired, not freed, until marking.c finds the domain's
     marking done (M4).
   - A pool that leaves becomes a hole in every block that lists it (M1),
     so that no marker loads its header afterwards. */
#include <stdlib.h>
#include "alloc_failures.h"
#include "asserts.h"
#include "directory.h"

/* A directory's first capacity, in fields (it doubles as needed). The
   test builds start small, so that directories grow (and their growth
   fails, testing.h) in every test, in hooks that adopt orphans too. */
#ifdef BOXROOT_TESTING
#define DIRECTORY_MIN_FIELDS 4
#else
#define DIRECTORY_MIN_FIELDS 64
#endif

static struct boxroot__directory directories[BOXROOT__MAX_DOMAINS];

struct boxroot__directory *boxroot__directory(int id) { return &directories[id]; }

#if BOXROOT__TEST_HOOKS
long boxroot__testing_retired_directory_blocks(void)
{
  long n = 0;
  for (int id = 0; id < BOXROOT__MAX_DOMAINS; id++)
    n += boxroot__load(&directories[id].retired_count, RELAXED);
  return n;
}
#endif

/* Room for one more field; false if memory is short. The old block may
   still be read by the marker: it is retired, not freed. */
static int reserve(struct boxroot__directory *dir)
{
  if (dir->used < dir->capacity) return 1;
  if (dir->retired_count == BOXROOT__DIRECTORY_RETIRED_MAX) return 0;
  size_t capacity = dir->capacity == 0 ? DIRECTORY_MIN_FIELDS : 2 * dir->capacity;
  uintptr_t *block = boxroot__allocation_fails(BOXROOT__ALLOC_DIRECTORY) ? NULL
    : malloc((capacity + 1) * sizeof(uintptr_t));
  if (block == NULL) return 0;
  if (dir->block != NULL) {
    for (size_t i = 0; i <= dir->used; i++) block[i] = dir->block[i];
    dir->retired_used[dir->retired_count] = dir->used;
    dir->retired[dir->retired_count++] = dir->block;
  }
  dir->block = block;
  dir->capacity = capacity;
  return 1;
}

static int list(struct boxroot__directory *dir, pool *p)
{
  size_t i = dir->holes;
  if (i != 0) {
    dir->holes = dir->block[i] >> 1;
  } else {
    if (!reserve(dir)) return 0;
    i = ++dir->used;
  }
  dir->block[i] = (uintptr_t)p->slots;
  p->listed_at = (uint32_t)i;
  dir->listed++;
  return 1;
}

void boxroot__directory_add(struct boxroot__directory *dir, pool *p)
{
  BOXROOT__ASSERT(p->listed_at == 0);
  if (!list(dir, p)) dir->unlisted++;
}

int boxroot__directory_list_again(struct boxroot__directory *dir, pool *p)
{
  if (p->listed_at != 0) return 1;
  if (!list(dir, p)) return 0;
  dir->unlisted--;
  return 1;
}

/* Whether retired block k lists `p` at field i. */
static int retired_lists(struct boxroot__directory *dir, int k, pool *p, size_t i)
{
  return i <= dir->retired_used[k] && dir->retired[k][i] == (uintptr_t)p->slots;
}

static int listed_in_retired(struct boxroot__directory *dir, pool *p, size_t i)
{
  for (int k = 0; k < dir->retired_count; k++)
    if (retired_lists(dir, k, p, i)) return 1;
  return 0;
}

int boxroot__directory_remove(struct boxroot__directory *dir, pool *p)
{
  size_t i = p->listed_at;
  if (i == 0) {
    dir->unlisted--;
    return 0;
  }
  BOXROOT__ASSERT(dir->block[i] == (uintptr_t)p->slots);
  uintptr_t hole = (dir->holes << 1) | 1;
  dir->block[i] = hole;
#ifndef BOXROOT_TESTING_RETIRED_KEEP_POOLS /* a broken build for tests */
  for (int k = 0; k < dir->retired_count; k++)
    if (retired_lists(dir, k, p, i)) dir->retired[k][i] = hole;
#endif
  dir->holes = i;
  dir->listed--;
  p->listed_at = 0;
#if BOXROOT__TEST_HOOKS
  return listed_in_retired(dir, p, i);
#else
  (void)listed_in_retired;
  return 0;
#endif
}

void boxroot__directory_release(struct boxroot__directory *dir, int everything)
{
  for (int i = 0; i < dir->retired_count; i++) free(dir->retired[i]);
  dir->retired_count = 0;
  if (everything) {
    free(dir->block);
    *dir = (struct boxroot__directory){ 0 };
  }
}

int boxroot__directory_check_listed(pool *p, int id, int member)
{
  if (!boxroot__compat_marks_pools_as_blocks()) return 1;
  struct boxroot__directory *dir = &directories[id];
  if (!member) return p->listed_at == 0;
  if (p->listed_at == 0) return dir->unlisted > 0;
  return p->listed_at <= dir->used && dir->block[p->listed_at] == (uintptr_t)p->slots;
}
