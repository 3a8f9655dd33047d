/* Upstream ocaml-boxroot 0.4, compiled from the C files of the crate
   ocaml-boxroot-sys 0.4.0 (fetched at bench time, never committed). */
#define IMPL_NAME "upstream"
#include "impl_boxroot_api.h"

/* Upstream counts pools only when built with BOXROOT_STATS, which also
   times every scan: we measure it as shipped, without. */
static inline long impl_pools_used(void) { return -1; }
static inline void impl_stats_fields(char *buf, size_t size) { if (size) buf[0] = 0; }
