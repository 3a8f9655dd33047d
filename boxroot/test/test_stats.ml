(* Statistics are exact: a scenario whose every count is known
   in advance, checked field by field through the OCaml module Boxroot
   after each step. Single domain; test_stats_domains.ml covers domains.

   The expected numbers follow from the allocator's policy (pool.h,
   domain.h): pools of S slots handed out in batches of B, scanned up to
   their last batch; a young pool becomes old after a minor collection; an
   old pool below the low mark (about S/2 roots) is reused (demoted)
   before a new pool is taken. The scenario holds n roots in three pools
   A, B, C: A and B full, C between the low mark and full, so that only A
   can be demoted at step 6. *)
open Boxroot_test

external pool_slots : unit -> int = "stats_pool_slots"
external fresh_batch : unit -> int = "stats_fresh_batch"
external pool_low_mark : unit -> int = "stats_pool_low_mark"
external old_value_moves : unit -> int = "stats_old_value_moves"
external free_pools_kept : unit -> int = "stats_free_pools_kept"
external multicore : unit -> bool = "stats_multicore"

let chunk_bytes = 4 lsl 20 (* CHUNK_SIZE, chunk.c *)

let s = pool_slots () and b = fresh_batch ()
let n = 2 * s + (pool_low_mark () + s) / 2
let round_up x = (x + b - 1) / b * b

let get_stats () =
  match Boxroot.stats () with
  | Some st -> st
  | None -> check false "no statistics while boxroot runs"; exit 1

(* Expected values of the fields this test predicts exactly. *)
type expected = {
  alive : int; created : int; local : int; purely_remote : int;
  moves : int; in_use : int; collected : int;
  young : int; old : int; free : int; demoted : int;
  minor_slots : int; handed_out : int;
}

let gc_minors () = (Gc.quick_stat ()).minor_collections
let gc_majors () = (Gc.quick_stat ()).major_collections
let minor0 = ref 0 and major0 = ref 0

let expect step e =
  let st = get_stats () in
  let eq what got want =
    check (got = want) "%s: %s = %d, expected %d" step what got want in
  eq "roots_alive" st.roots_alive e.alive;
  eq "created" st.created e.created;
  eq "deleted_local" st.deleted_local e.local;
  eq "deleted_remote_domain" st.deleted_remote_domain 0;
  eq "deleted_purely_remote" st.deleted_purely_remote e.purely_remote;
  eq "modify_moves" st.modify_moves e.moves;
  eq "slots_in_use" st.slots_in_use e.in_use;
  eq "delayed_frees_collected" st.delayed_frees_collected e.collected;
  eq "pools_young" st.pools_young e.young;
  eq "pools_old" st.pools_old e.old;
  eq "pools_free" st.pools_free e.free;
  eq "pools_orphaned" st.pools_orphaned 0;
  eq "pools_demoted" st.pools_demoted e.demoted;
  eq "pools_adopted" st.pools_adopted 0;
  eq "minor_slots_scanned" st.minor_slots_scanned e.minor_slots;
  eq "pools_handed_out" st.pools_handed_out e.handed_out;
  eq "chunks" st.chunks 1;
  eq "reserved_bytes" st.reserved_bytes chunk_bytes;
  eq "huge_page_chunks" st.huge_page_chunks 0;
  eq "chunk_free_pools_decommitted" st.chunk_free_pools_decommitted 0;
  (* One domain: one scan per collection. *)
  eq "minor_scans" st.minor_scans (gc_minors () - !minor0);
  if multicore () then
    (* OCaml 5 scans the roots when a major cycle ends and the next
       begins: once per major collection. *)
    eq "major_scans" st.major_scans (gc_majors () - !major0);
  st

let () =
  check (Boxroot.stats () = None) "statistics before the first root";
  let values = Array.init n (fun i -> ref i) in
  let roots = Array.make n (Obj.magic 0 : root) in
  Gc.full_major ();
  minor0 := gc_minors ();
  major0 := gc_majors ();
  (* 1. n roots, and no collection meanwhile (the loop does not allocate). *)
  for i = 0 to n - 1 do roots.(i) <- create values.(i) done;
  check (gc_minors () = !minor0) "a collection ran while creating the roots";
  let e = { alive = n; created = n; local = 0; purely_remote = 0; moves = 0;
            in_use = n; collected = 0; young = 3; old = 0; free = 0;
            demoted = 0; minor_slots = 0; handed_out = 3 } in
  let st = expect "1 (created)" e in
  check (st.minor_scans = 0 && st.major_scans = 0) "scans before any collection";
  (* 2. A minor collection scans the three young pools up to their last
     batch, and makes them old. *)
  Gc.minor ();
  let e = { e with young = 0; old = 3; minor_slots = 2 * s + round_up (n - 2 * s) } in
  let st = expect "2 (minor)" e in
  check (st.minor_scans >= 1) "minor scans: %d" st.minor_scans;
  check (st.minor_scan_ns > 0) "minor scan time: %d ns" st.minor_scan_ns;
  let major_before = st.major_scans and major_slots_before = st.major_slots_scanned in
  (* 3. 3/4 of A deleted locally. *)
  let m = 3 * s / 4 in
  for i = 0 to m - 1 do delete roots.(i) done;
  let e = { e with alive = n - m; local = m; in_use = n - m } in
  ignore (expect "3 (local deletes)" e);
  (* 4. k roots of B deleted from a blocking section: counted at once,
     collected at the next scan. *)
  let k = 7 * s / 20 in
  for i = s to s + k - 1 do delete_unlocked roots.(i) done;
  let e = { e with alive = n - m - k; purely_remote = k } in
  ignore (expect "4 (unlocked deletes)" e);
  Gc.minor ();
  let e = { e with in_use = n - m - k; collected = k } in
  ignore (expect "5 (minor: remote deletes collected)" e);
  (* 6. A young value into C's first root (old pool): the root moves. A
     has fewer than S/2 roots, so it becomes the current pool again. *)
  let moved = modify roots.(2 * s) (ref (-1)) in
  check (!(Obj.obj (get moved) : int ref) = -1) "moved root's value";
  let e = { e with created = n + 1; local = m + 1; moves = 1; young = 1; old = 2;
                   demoted = 1 } in
  ignore (expect "6 (modify moves a root)" e);
  (* 6b. An old value into C's second root: the root moves too, into A
     (the first of BOXROOT_OLD_VALUE_MOVES such moves in a minor cycle). *)
  let old_value = values.(0) in
  let moved_old = modify roots.(2 * s + 1) old_value in
  check (moved_old != roots.(2 * s + 1)) "an old value into an old root: the root stayed";
  check (Obj.obj (get moved_old) == old_value) "moved root's value (old value)";
  roots.(2 * s + 1) <- moved_old;
  let e = { e with created = n + 2; local = m + 2; moves = 2 } in
  ignore (expect "6b (modify moves a root, old value)" e);
  check (s - m < pool_low_mark ()) "scenario: A must be below the low mark";
  check (s - k >= pool_low_mark () && n - 2 * s >= pool_low_mark ())
    "scenario: B and C must not be below the low mark";
  (* 7. The minor scan covers A, whose every slot was handed out. *)
  Gc.minor ();
  let e = { e with young = 0; old = 3; minor_slots = e.minor_slots + s } in
  ignore (expect "7 (minor)" e);
  check (!(Obj.obj (get moved) : int ref) = -1) "moved root's value after a minor GC";
  (* 8. Major scans: on OCaml 4.14 each scans every pool up to its last
     live root: A and B to their end, C (roots at slots 1 .. n-2S-1) up to
     slot n-2S. On OCaml 5 each darkens the domain's directory and scans
     no slot: the marker reads the pools later (marking.c). *)
  Gc.full_major ();
  let st = expect "8 (full major)" e in
  let scans = st.major_scans - major_before in
  let per_scan = if multicore () then 0 else 2 * s + n - 2 * s in
  check (scans >= 1) "full_major made no major scan";
  check (st.major_slots_scanned - major_slots_before = scans * per_scan)
    "major slots scanned: %d in %d scans, expected %d per scan"
    (st.major_slots_scanned - major_slots_before) scans per_scan;
  check (st.major_scan_ns > 0) "major scan time: %d ns" st.major_scan_ns;
  (* 9. Everything deleted: the three pools go back to the free ring. *)
  delete moved;
  Array.iteri (fun i r -> if i >= m && not (i >= s && i < s + k) && i <> 2 * s then delete r) roots;
  let e = { e with alive = 0; local = e.local + (n - m - k); in_use = 0;
                   old = 0; free = 3 } in
  ignore (expect "9 (all deleted)" e);
  Gc.minor ();
  Gc.full_major ();
  let st = expect "10 (collections with no root)" e in
  check (st.major_slots_scanned - major_slots_before = scans * per_scan)
    "major scans of empty rings scanned slots";
  (* 11. Old values into old roots: the first BOXROOT_OLD_VALUE_MOVES
     modifications of a minor cycle move their roots, the others leave
     them in place; a minor collection starts the count again. *)
  let budget = old_value_moves () in
  let olds = Array.init (budget + 10) (fun i -> create values.(i mod n)) in
  Gc.minor ();
  let moves0 = (get_stats ()).modify_moves in
  let moved = ref 0 in
  Array.iteri (fun i r ->
      let r' = modify r values.(i mod n) in
      if r' <> r then incr moved;
      olds.(i) <- r') olds;
  check (!moved = budget) "11: %d of %d old roots moved for an old value, expected %d"
    !moved (Array.length olds) budget;
  check ((get_stats ()).modify_moves - moves0 = budget) "11: modify_moves counts %d, expected %d"
    ((get_stats ()).modify_moves - moves0) budget;
  Gc.minor ();
  let last = Array.length olds - 1 in
  let r' = modify olds.(last) values.(0) in
  check (r' <> olds.(last)) "11: no move after a minor collection";
  olds.(last) <- r';
  Array.iter delete olds;
  (* 12. Young pools emptied before any collection stay young (listed,
     no free ring) and are the next ones filled: creating as many roots
     again takes no other pool. At most BOXROOT_FREE_POOLS_KEPT of them
     besides the current pool; the others go as before. The loops below
     do not allocate: no collection empties the young ring meanwhile. *)
  Gc.minor ();
  let young_batch pools =
    let minors = gc_minors () in
    let rs = Array.init (pools * s) (fun i -> create values.(i mod n)) in
    check (gc_minors () = minors) "12: a collection ran while creating roots";
    rs in
  let rs = young_batch 3 in
  let st0 = get_stats () in
  check (st0.pools_young = 3) "12: %d young pools for 3 pools of roots" st0.pools_young;
  Array.iter delete rs;
  ignore (check_invariants ());
  let st1 = get_stats () in
  check (st1.pools_young = 3 && st1.pools_free = st0.pools_free)
    "12: emptied young pools: %d young, %d free (before: %d free)"
    st1.pools_young st1.pools_free st0.pools_free;
  let rs = young_batch 3 in
  let st2 = get_stats () in
  check (st2.pools_young = 3 && st2.pools_free = st0.pools_free
         && st2.pools_handed_out = st0.pools_handed_out)
    "12: refilled: %d young, %d free, %d pools handed out (before: %d free, %d)"
    st2.pools_young st2.pools_free st2.pools_handed_out st0.pools_free st0.pools_handed_out;
  Array.iter delete rs;
  let kept = free_pools_kept () in
  let rs = young_batch (kept + 3) in
  Array.iter delete rs;
  ignore (check_invariants ());
  let st3 = get_stats () in
  check (st3.pools_young = kept + 1)
    "12: %d young pools after emptying %d, expected %d (the current one and %d kept)"
    st3.pools_young (kept + 3) (kept + 1) kept;
  Gc.minor ();
  let st4 = get_stats () in
  check (st4.pools_young = 0 && st4.slots_in_use = 0)
    "12: after a minor collection: %d young pools, %d slots in use" st4.pools_young st4.slots_in_use;
  (* An empty pool holds no value: the minor scan reads none of its slots. *)
  check (st4.minor_slots_scanned = st3.minor_slots_scanned)
    "12: the minor scan read %d slots of empty pools"
    (st4.minor_slots_scanned - st3.minor_slots_scanned);
  (* 13. Another thread's first creation in the domain: it finds the
     current pool (empty, with room) through the slow path, and takes a
     slot there, not another pool. *)
  let rs = young_batch 1 in
  Array.iter delete rs;
  let st5 = get_stats () in
  check (st5.pools_young = 1) "13: %d young pools, expected 1 (the current one)" st5.pools_young;
  let in_thread = ref (-1) in
  let t = Thread.create (fun () ->
      let r = create values.(0) in
      in_thread := (get_stats ()).pools_young;
      ignore (check_invariants ());
      delete r) () in
  Thread.join t;
  (* A minor collection meanwhile would leave one young pool too. *)
  check (!in_thread = 1) "13: another thread's first root took another pool (%d young pools)"
    !in_thread;
  Boxroot.print_stats ();
  finish "test_stats"
