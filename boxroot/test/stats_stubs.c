/* The allocator's constants, for tests that predict exact statistics. */
#define CAML_NAME_SPACE
#include <caml/mlvalues.h>
#include "domain.h"
#include "pool.h"

value stats_pool_slots(value unit) { (void)unit; return Val_long(POOL_SLOTS); }
value stats_fresh_batch(value unit) { (void)unit; return Val_long(BOXROOT_FRESH_BATCH); }
value stats_pool_low_mark(value unit) { (void)unit; return Val_long(POOL_LOW_MARK); }
value stats_old_value_moves(value unit) { (void)unit; return Val_long(BOXROOT_OLD_VALUE_MOVES); }
value stats_free_pools_kept(value unit) { (void)unit; return Val_long(BOXROOT_FREE_POOLS_KEPT); }
value stats_multicore(value unit) { (void)unit; return Val_bool(BOXROOT_MULTICORE); }
