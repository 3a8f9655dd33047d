/* The leak report, boxroot_debug_report_leaks (boxroot.h): the roots
   still alive, grouped by the site that created them, largest group
   first, weak roots apart.

   The debug build records each root's creation site in a side table
   indexed like its pool's slots (chunk.h), so that the pools keep the
   release build's layout. A site is a code address, symbolized only when
   a report is printed, or a file:line of the registry below (leaks.h).

   The report reads the pools without taking their owners' locks: exact
   when no other thread creates or deletes roots meanwhile, a snapshot
   that may miss or repeat a root otherwise. The release build records
   nothing, and its report says so. */
#define _GNU_SOURCE
/* First: it stops the build where dladdr is missing (Windows). */
#include "boxroot.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "leaks.h"

#if BOXROOT__IN_DEBUG_BUILD
#include "alloc_failures.h"
#include "chunk.h"
#include "pool.h"

#define BITS_PER_WORD (8 * sizeof(uintptr_t))

/* ---- file:line sites ---- */

/* Distinct file:line sites recorded, at most; sites beyond share the
   last entry. Generous: one per call site of the bindings' constructors
   in a program. A hash set by open addressing, kept at most 3/4 full. */
#define FILE_SITES 8192
struct file_site { char const *file; size_t len; unsigned line; };
static struct file_site file_sites[FILE_SITES + 1] = {
  [FILE_SITES] = { "(more creation sites than the report can tell apart)", 52, 0 },
};
static int file_sites_used;
static pthread_mutex_t file_sites_lock = PTHREAD_MUTEX_INITIALIZER;

/* This thread's last site: a loop creating roots at one site takes no
   lock. */
static __thread struct file_site last_file_site;
static __thread uintptr_t last_site;

static int same_file_site(struct file_site const *s, char const *file, size_t len,
                          unsigned line)
{
  return s->file == file && s->len == len && s->line == line;
}

uintptr_t boxroot__leaks_file_site(char const *file, size_t len, unsigned line)
{
  if (last_site != 0 && same_file_site(&last_file_site, file, len, line)) return last_site;
  uint64_t h = ((uint64_t)(uintptr_t)file ^ ((uint64_t)line << 32) ^ len)
               * 0x9e3779b97f4a7c15u;
  struct file_site *found = &file_sites[FILE_SITES];
  pthread_mutex_lock(&file_sites_lock);
  for (size_t i = (size_t)(h >> 51) % FILE_SITES;; i = (i + 1) % FILE_SITES) {
    struct file_site *s = &file_sites[i];
    if (same_file_site(s, file, len, line)) { found = s; break; }
    if (s->file != NULL) continue;
    if (file_sites_used < FILE_SITES / 4 * 3) {
      s->file = file; s->len = len; s->line = line;
      file_sites_used++;
      found = s;
    }
    break;
  }
  pthread_mutex_unlock(&file_sites_lock);
  last_file_site = *found;
  last_site = (uintptr_t)found;
  return last_site;
}

static struct file_site const *as_file_site(uintptr_t site)
{
  if (site < (uintptr_t)file_sites || site > (uintptr_t)&file_sites[FILE_SITES])
    return NULL;
  return (struct file_site const *)site;
}

/* ---- recording ---- */

static int report_asked(void)
{
  char const *s = getenv("BOXROOT_DEBUG_LEAKS");
  return s != NULL && *s != '\0' && strcmp(s, "0") != 0;
}

static void print_report(FILE *out);

static void report_at_exit(void)
{
  /* After a teardown the pools are gone; its own report was printed. */
  if (boxroot_status() == BOXROOT_RUNNING) print_report(stderr);
}

static pthread_once_t at_exit_once = PTHREAD_ONCE_INIT;
/* At the first creation, so that the report comes after the program's
   own exit handlers registered before it. */
static void register_at_exit(void)
{
  if (report_asked()) atexit(report_at_exit);
}

static uintptr_t *side_entry(void *root)
{
  void **slot = boxroot__slot_of((boxroot)root);
  pool *p = pool_of_slot(slot);
  return &boxroot__chunk_side_table(p)[slot - p->slots];
}

void boxroot__leaks_record(void *root, uintptr_t site)
{
  pthread_once(&at_exit_once, register_at_exit);
  /* Atomic, relaxed: a report on another thread may read it, and wants
     the site, not what was written before it. */
  boxroot__store(side_entry(root), site, RELAXED);
}

uintptr_t boxroot__leaks_site(void *root)
{
  return boxroot__load(side_entry(root), RELAXED);
}

/* ---- the report ---- */

struct root_site { uintptr_t site; int weak; long count; };
struct roots { struct root_site *at; size_t len, cap; int failed; };

static int delayed_free_pending(pool *p, size_t i)
{
  uintptr_t word = boxroot__load(&p->delayed_bits[i / BITS_PER_WORD], RELAXED);
  return (word >> (i % BITS_PER_WORD)) & 1;
}

/* Every root alive in `p`: its allocated slots (pool.h), less those
   deleted by other threads and not yet collected (remote.c). */
static void collect_pool(pool *p, void *arg)
{
  struct roots *roots = arg;
  int cls = pool_class(p);
  int weak = cls == BOXROOT__CLASS_WEAK_YOUNG || cls == BOXROOT__CLASS_WEAK_OLD;
  uintptr_t const *sites = boxroot__chunk_side_table(p);
  void **fresh = boxroot__load(&p->fresh, RELAXED);
  for (void **s = p->slots; s < fresh && s < pool_end(p); s++) {
    size_t i = (size_t)(s - p->slots);
    if (pool_slot_is_free(p, boxroot__load(s, RELAXED)) || delayed_free_pending(p, i))
      continue;
    if (roots->len == roots->cap) {
      size_t cap = roots->cap == 0 ? 1024 : 2 * roots->cap;
      struct root_site *at = boxroot__allocation_fails(BOXROOT__ALLOC_LEAK_REPORT) ? NULL
        : realloc(roots->at, cap * sizeof *at);
      if (at == NULL) { roots->failed = 1; return; }
      roots->at = at;
      roots->cap = cap;
    }
    struct root_site r = { boxroot__load(&sites[i], RELAXED), weak, 1 };
    roots->at[roots->len++] = r;
  }
}

static int by_kind_and_site(void const *a, void const *b)
{
  struct root_site const *x = a, *y = b;
  if (x->weak != y->weak) return x->weak - y->weak;
  return (x->site > y->site) - (x->site < y->site);
}

static int by_kind_and_count(void const *a, void const *b)
{
  struct root_site const *x = a, *y = b;
  if (x->weak != y->weak) return x->weak - y->weak;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return (x->site > y->site) - (x->site < y->site);
}

static void print_site(FILE *out, uintptr_t site)
{
  struct file_site const *f = as_file_site(site);
  Dl_info info;
  if (site == 0) {
    fputs("(unknown: created inside boxroot)", out);
  } else if (f != NULL) {
    fprintf(out, f->line != 0 ? "%.*s:%u" : "%.*s", (int)f->len, f->file, f->line);
  } else if (dladdr((void *)site, &info) != 0 && info.dli_fname != NULL) {
    char const *module = strrchr(info.dli_fname, '/');
    module = module != NULL ? module + 1 : info.dli_fname;
    if (info.dli_sname != NULL)
      fprintf(out, "%s+0x%lx (%s)", info.dli_sname,
              (unsigned long)(site - (uintptr_t)info.dli_saddr), module);
    else
      fprintf(out, "%s+0x%lx", module, (unsigned long)(site - (uintptr_t)info.dli_fbase));
  } else {
    fprintf(out, "%p", (void *)site);
  }
}

/* The groups of one kind: `groups[0, n)`, largest first. */
static void print_groups(FILE *out, char const *kind, struct root_site const *groups,
                         size_t n)
{
  long total = 0;
  for (size_t i = 0; i < n; i++) total += groups[i].count;
  if (n == 0) {
    fprintf(out, "boxroot: no %s alive\n", kind);
    return;
  }
  fprintf(out, "boxroot: %ld %s alive, created at %zu site%s (largest group first):\n",
          total, kind, n, n == 1 ? "" : "s");
  for (size_t i = 0; i < n; i++) {
    fprintf(out, "  %8ld  ", groups[i].count);
    print_site(out, groups[i].site);
    fputc('\n', out);
  }
}

static void print_report(FILE *out)
{
  struct roots roots = { NULL, 0, 0, 0 };
  boxroot__chunk_visit_pools(collect_pool, &roots);
  if (roots.failed) {
    fprintf(out, "boxroot: no memory for the report of roots alive\n");
    free(roots.at);
    return;
  }
  /* Sort by site, then merge each run into its first entry. */
  if (roots.len > 0) qsort(roots.at, roots.len, sizeof *roots.at, by_kind_and_site);
  size_t groups = 0;
  for (size_t i = 0; i < roots.len; i++) {
    if (groups > 0 && by_kind_and_site(&roots.at[groups - 1], &roots.at[i]) == 0)
      roots.at[groups - 1].count++;
    else
      roots.at[groups++] = roots.at[i];
  }
  if (groups > 0) qsort(roots.at, groups, sizeof *roots.at, by_kind_and_count);
  size_t strong = 0;
  while (strong < groups && !roots.at[strong].weak) strong++;
  print_groups(out, "roots", roots.at, strong);
  print_groups(out, "weak roots", roots.at + strong, groups - strong);
  fflush(out);
  free(roots.at);
}

void boxroot_debug_report_leaks(FILE *out)
{
  if (out == NULL) out = stderr;
  if (boxroot_status() != BOXROOT_RUNNING) {
    fprintf(out, "boxroot: not running, no root alive\n");
    return;
  }
  print_report(out);
}

void boxroot__leaks_report_at_teardown(void)
{
  if (report_asked()) print_report(stderr);
}

#else /* the release build */

void boxroot_debug_report_leaks(FILE *out)
{
  if (out == NULL) out = stderr;
  fprintf(out, "boxroot: creation sites are recorded by the debug build only "
          "(library boxroot.debug, code compiled with -DBOXROOT_DEBUG); "
          "boxroot_print_stats counts the roots alive\n");
}

void boxroot__leaks_report_at_teardown(void) {}

#endif
