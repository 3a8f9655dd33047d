/* The leak report: each root's creation site, and the roots still alive
   grouped by site (leaks.c; sites are recorded by the debug build only). */
#ifndef BOXROOT_LEAKS_H
#define BOXROOT_LEAKS_H

#include <stddef.h>
#include <stdint.h>
#include "boxroot.h"

#if BOXROOT__IN_DEBUG_BUILD
/* A creation site is one word: 0 when unknown, a code address (the
   return address of a C caller), or what this returns for a file and
   line (Rust's and C++'s callers): the address of the site's entry in a
   registry. `file` need not end with a NUL; it must stay valid, as a
   string literal does. */
uintptr_t boxroot__leaks_file_site(char const *file, size_t file_len, unsigned line);
/* Records `site` as the creation site of the root `root` (a boxroot or
   a boxroot_weak, just created by this thread). */
void boxroot__leaks_record(void *root, uintptr_t site);
/* The creation site recorded for the root `root`. */
uintptr_t boxroot__leaks_site(void *root);
#endif

/* At teardown, before the pools go: the report on stderr if the
   environment asks for it (BOXROOT_DEBUG_LEAKS, boxroot.h). Nothing in
   the release build. */
void boxroot__leaks_report_at_teardown(void);

#endif
