(* OCaml runtime bug, without boxroot: the heap statistics go wrong
   after a compaction (OCaml 5.3; fixed in 5.4.0).

   This program uses no boxroot and no C stubs, and has one domain and
   no threads. With OCaml 5.3.0's debug runtime (-runtime-variant d) and
   heap verification (OCAMLRUNPARAM=V=1), it aborts with the assertion
   failure that boxroot's stress test (test_stress.exe in this
   directory) hits:

     file runtime/shared_heap.c; line 1392 ### Assertion failed:
     local->stats.pool_live_words == pool_stats.live

   It fails on every run with 5.3.0 (20 out of 20, in 0.02 s each). It
   passes with 5.4.1 and 5.5.2 (0 failures out of 20 on each).

     dune build @boxroot/test/debug_runtime/runtime-repro

   builds and runs it. On 5.3 that rule succeeds only if the program
   aborts with this assertion. On 5.4 and later, it succeeds only if the
   program runs cleanly. Or run it directly:

     OCAMLRUNPARAM=V=1,v=0 <build dir>/default/boxroot/test/debug_runtime/runtime_heap_stats_repro.exe

   What the assertion checks: each domain keeps counters of its pools
   (small blocks) as it allocates and sweeps. pool_live_words counts
   the words of blocks not yet swept. With V=1, when a domain finishes
   sweeping, verify_swept walks all of its pools and checks that the
   counts it finds match those counters.

   Why it fails: Gc.compact runs three major cycles. At the end of the
   third one (GARBAGE = not marked in that cycle), before sweeping,
   caml_compact_heap (5.3) evacuates the live blocks of the non-full
   pools into the fewest of those pools and unmaps the others. Blocks
   that are GARBAGE in an unmapped pool are discarded with it, but
   unlike sweeping, this does not subtract them from pool_live_words,
   pool_live_blocks and pool_frag_words. The counters then stay too
   high for good. On the release runtime, Gc.stat's live_words is then
   too high by the same amount. Here it reads 59,367 words on 5.3.0,
   against about 50,300 on 5.4.1 and 5.5.2.
   ocaml/ocaml#13090 reports this, and #13774 (OCaml 5.4.0) fixes it.

   For that to happen, blocks must be dropped during Gc.compact itself.
   The third cycle's marking is snapshot-at-the-beginning: it marks
   everything reachable when it starts, which is when the second cycle
   ends. So a block is GARBAGE at the compaction only if it is
   unreachable when the third cycle starts, and was still marked in the
   second cycle (still reachable when the second cycle started). So it
   must be dropped during the second cycle. In the stress test, other
   domains are allocating and dropping data while one of them compacts.
   Here, a finaliser does the same within one domain, at a chosen time.
   The dropped blocks must also sit in pools that are not full, because
   only those pools are evacuated. *)

let n = 30_000
let dummy = ref (-1)
let blocks = Array.init n (fun i -> ref i)
let trigger = ref (Some (ref 0))
let drop_third k =
  Array.iteri (fun i _ -> if i mod 3 = k then blocks.(i) <- dummy) blocks

let () =
  (* Promote the blocks: consecutive blocks in the same pools. *)
  Gc.minor ();
  (* Once swept, a third of each pool is free: the pools are not full. *)
  drop_third 1;
  Gc.full_major ();
  (* The trigger is dropped during the cycle in progress, which still
     marks it. The next cycle, Gc.compact's first, finds it dead. Then
     its finaliser runs during Gc.compact's second cycle and drops
     another third of the blocks. Those blocks are GARBAGE when the third
     cycle ends and the heap is compacted. *)
  Gc.finalise (fun _ -> drop_third 2) (Option.get !trigger);
  trigger := None;
  Gc.major ();
  Gc.compact ();
  (* Sweeping ends in this cycle, and then V=1 checks the statistics. *)
  Gc.full_major ();
  print_endline "runtime_heap_stats_repro: heap statistics consistent after compaction"
