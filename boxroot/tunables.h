/* Every compile-time tunable of boxroot, in one place.

   Each is overridable with -D when the library is built (bench/tune.py
   sweeps them that way: one `#define BOXROOT_<NAME> <value>` per tunable,
   the format it reads its defaults from). The measurements behind each
   default are in bench/results/tune/README.md, under the tunable's name.

   BOXROOT_POOL_LOG_SIZE is also part of the layout that the inline fast
   paths of the public header are compiled against: a program compiled
   with another value than the library fails to link (boxroot_internal.h,
   BOXROOT__LAYOUT), instead of masking addresses wrongly. */
#ifndef BOXROOT_TUNABLES_H
#define BOXROOT_TUNABLES_H

/* log2 of a pool's size in bytes. 16 KiB, the Boxroot paper's pool size
   (§3.2): 8 KiB costs 10-20% on globroots and on create+delete with 10^6
   roots; 64 KiB scans a little faster but costs create+delete 5-7% and 4x
   the memory of a domain holding few roots. Swept: 13..16. */
#ifndef BOXROOT_POOL_LOG_SIZE
#define BOXROOT_POOL_LOG_SIZE 14
#endif

/* Slots threaded onto a fresh pool's free list at a time (a multiple of
   the slots of a cache line): creations take the slow path once per
   batch, minor scans read at most a batch of never-used slots. 32..256
   differ by less than the noise; 256 reads 11% more slots. */
#ifndef BOXROOT_FRESH_BATCH
#define BOXROOT_FRESH_BATCH 128
#endif

/* Empty pools a domain keeps before giving them back to the chunk
   allocator, to absorb a burst of creations after a collection without
   taking the chunk lock. 0 costs create+delete 21-23% at 10^5..10^6 roots;
   2, 8 and 32 do not differ. Also the young pools emptied since the last
   scan that a domain keeps listed on its young ring (domain.h), so that
   batches of roots created and then deleted reuse them directly. */
#ifndef BOXROOT_FREE_POOLS_KEPT
#define BOXROOT_FREE_POOLS_KEPT 8
#endif

/* log2 of the address space reserved with one mmap (at least 21, the
   page table's region). 2 MiB makes major scans 7-8% slower per slot;
   16 MiB changes nothing measurable. */
#ifndef BOXROOT_CHUNK_LOG_SIZE
#define BOXROOT_CHUNK_LOG_SIZE 22
#endif

/* Free pools the chunk allocator keeps committed; beyond, their memory
   goes back to the OS. 256 re-creates 10^6 roots 10% faster but holds
   4 MiB; 16 is 3-11% slower. */
#ifndef BOXROOT_FREE_POOLS_COMMITTED_MAX
#define BOXROOT_FREE_POOLS_COMMITTED_MAX 64
#endif

/* How far ahead of the scanning loops memory is requested, in slots. A
   major scan of many pools is bound by memory: at 10^7 roots, no prefetch
   takes 26-31 ms per major cycle, 256 slots 15-17 ms (16..512 swept). */
#ifndef BOXROOT_SCAN_PREFETCH_SLOTS
#define BOXROOT_SCAN_PREFETCH_SLOTS 256
#endif

/* Roots a domain's boxroot_modify moves out of old pools per minor cycle
   for an old value (api.c); beyond, an old value is stored in place. A
   loop on a few long-lived roots moves each once, then takes the young
   pool's path (bench/plain modify_old, OCaml 5.3: 14 instructions per
   modification, against 18 in place and upstream's 15). Modifying 10^6
   old roots twice each (bench ops modify_old, k=10^6, OCaml 5.3): moving
   every one took 1.4-2.4x upstream's time, in place 0.6-0.7x, with 1024
   0.7-0.9x. Not swept: about half a pool's slots. */
#ifndef BOXROOT_OLD_VALUE_MOVES
#define BOXROOT_OLD_VALUE_MOVES 1024
#endif

/* Young pools whose remote deletions a domain collects when its current
   pool is full, before it takes another pool (domain.c). Roots handed to
   another domain come back in the pools filled last: in the prodcons
   mode of bench/src/parallel.ml (2 domains, 2*10^7 roots), 0 lets the
   producer take fresh pools until the next minor collection (87-120
   pools held, 2*10^7 slots read by minor scans), 4 holds 6 pools at any
   run length (boxroot/test/stats_domains checks the bound: 5 pools
   carved for 2*10^6 roots handed over, 35-36 with 0). Bounds the loads a
   domain with many young pools and no remote deletion pays per refill. */
#ifndef BOXROOT_RECLAIM_YOUNG_POOLS
#define BOXROOT_RECLAIM_YOUNG_POOLS 4
#endif

/* Chunks are advised MADV_HUGEPAGE once this many exist; 0 = never
   (BOXROOT_HUGE_PAGES=N in the environment overrides it). Off: no
   reliable gain on bench/micro, and huge pages make returning memory
   coarser (bench/micro/README.md). */
#ifndef BOXROOT_HUGE_PAGES_DEFAULT_THRESHOLD
#define BOXROOT_HUGE_PAGES_DEFAULT_THRESHOLD 0
#endif

/* The debug build's quarantine (pool.h): a deleted slot is handed out
   again only after this many later deletions in its pool, so that a use
   after delete still finds the slot free (debug.c) instead of someone
   else's root. About half a pool (2000 slots): long enough for the usual
   pattern (delete, then create and delete a few hundred roots, then use
   the stale root), while a pool keeps half its slots for new roots, so a
   program's pools at most double in the debug build. Fits the 16-bit
   counter of pool.h. */
#ifndef BOXROOT_DEBUG_QUARANTINE
#define BOXROOT_DEBUG_QUARANTINE 1024
#endif

#endif /* BOXROOT_TUNABLES_H */
