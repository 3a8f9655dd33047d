(* Rules of marking.c that test_hazard does not reach on its own,
   each failed by a deliberately broken build (test/broken/: join_colour,
   aging, unlisted_stamps, wrap, young_orphans, join_darkening,
   adopt_stamp_current):

   - M1, colour: a pool that joins its domain's directory after the
     marker read it must be MARKED, so that it is UNMARKED, hence marked,
     at the next cycle. Here pools are taken while marking is in
     progress, once this domain's marker has read its directory (it
     finishes its marking first: hazard_stubs.c), and their roots alone
     keep their values through three more cycles. The broken build gives them the UNMARKED colour: they
     turn GARBAGE at the next cycle start, the marker skips them, and
     their values are collected.
   - S, the stamps' age: stamps take few values in the test builds (7),
     so the stamp of a pool left untouched for 7 cycles comes back. Here
     groups of roots are created in pools of their own at cycles that
     cover every stamp, then left untouched; then, during marking, their
     values are copied into a block the marker will not scan and the
     roots deleted, with this domain's darkening held back meanwhile, as
     in test_hazard (hazard_stubs.c). The aging hand must have reset the
     old stamps; the broken build has no hand, so one group's deletions
     take the fast path without barrier, and its values are lost.

   - S, relisting: the same groups, in pools that cannot be listed (the
     directory cannot grow: an injected failure), darkened slot by slot
     at each cycle start (M0), which the aging hand does not visit. When
     the directory can grow again, they are listed at the next cycle
     start, and their roots deleted during that cycle's marking: an
     unlisted pool keeps the stamp 0, also once listed again
     (test/broken/unlisted_stamps gives it stamps, and one group, whose
     stamp came back, loses its values).
   - M4, S, 2^32 cycles: the cycle count starts 4 cycles before 2^32
     (testing.h), and roots are deleted during the marking of consecutive
     cycles, held back as above, up to 2 past cycle 2^32 - 1. A count or epoch of 32 bits wraps there
     (test/broken/wrap): the epoch of cycle 2^32 - 1 is 0, which reads as
     "no pool on a mark stack", and the barrier darkens nothing.
   - M4, retired directories: a directory that grows during marking
     retires its old block, which the marker may still read; once the
     cycle is over, the next scan frees it.

   - M1, orphans: young ones, and adoption at a compaction (below).

   BOXROOT_RULES ("relist join age retired orphans adopt_compaction
   adopt_darkening" by
   default; "wrap" runs alone: it moves the cycle count) selects the
   scenarios;
   BOXROOT_HAZARD_EXPECT_LOSS=1 expects losses instead (broken builds,
   OCaml 5; in one round, as in test_hazard). relist needs a fresh
   process: its directory must not have grown before. *)
open Boxroot_test

let expect_loss = env_int "BOXROOT_HAZARD_EXPECT_LOSS" 0 = 1
let scenarios =
  String.split_on_char ' '
    (Option.value (Sys.getenv_opt "BOXROOT_RULES")
       ~default:"relist join age retired orphans adopt_compaction adopt_darkening")
let multicore = Sys.ocaml_release.Sys.major >= 5
(* A cycle that compacts: OCaml 5.2 and later (finish_cycle_compacting). *)
let compacting_cycles = multicore && Sys.ocaml_release.Sys.minor >= 2

external forget : Obj.t array -> unit = "hazard_forget"
external hold_darkening : int -> bool -> unit = "hazard_hold_darkening"
external delete_in_window : root array -> Obj.t array = "hazard_delete_in_window"
external window_status : unit -> int = "hazard_window_status"
external create_after_marker : Obj.t array -> root array -> bool = "hazard_create_after_marker"
external start_marking : unit -> bool = "hazard_start_marking"
external phase : unit -> string = "hazard_phase"
external domain_id : unit -> int = "hazard_domain_id"

(* How many of [roots] lost their value (the weak array was filled from
   them): their values are read only if alive. *)
let count_lost roots weak =
  let lost = ref 0 in
  Array.iteri (fun i _ -> if Weak.get weak i = None then incr lost) roots;
  !lost

(* More roots than the free pools a domain keeps (8 of about 2,000
   slots): most of these pools come from the chunk allocator, and join. *)
let join_roots = 100_000

let join_colour r =
  Gc.full_major ();
  (* Old values, reachable from the roots only once created. *)
  let values = Array.init join_roots (fun i -> Obj.repr (ref i)) in
  let weak = Weak.create join_roots in
  Array.iteri (fun i v -> Weak.set weak i (Some v)) values;
  let roots : root array = Obj.magic (Array.make join_roots 0) in
  (* Created once this domain's marker has read its directory: every
     pool they take joins after that (hazard_stubs.c). *)
  check (create_after_marker values roots)
    "join, round %d: the main marking phase was not on throughout (phase: %s)" r (phase ());
  forget values;
  Gc.minor ();
  for _ = 1 to 3 do Gc.full_major () done;
  let lost = count_lost roots weak in
  let wrong = ref 0 in
  Array.iteri (fun i root ->
      if Weak.get weak i <> None && !(Obj.obj (get root) : int ref) <> i then incr wrong)
    roots;
  check (!wrong = 0) "join, round %d: %d values changed" r !wrong;
  Array.iter delete roots;
  lost

(* One group of roots per stamp: created right after a cycle count that
   no earlier group had modulo 7, in pools of their own (each group
   fills a few pools: at least one holds only its roots). *)
let group_size = 5_000
let stamps = 7

let groups_per_stamp name r =
  (* Set up, and one cycle start seen, so that every stamp is a cycle's
     (before the first cycle start, the stamp is 0). *)
  ignore (setup ());
  Gc.major ();
  let groups = ref [] and seen = Array.make stamps false and tries = ref 0 in
  while Array.exists not seen && !tries < 100 do
    incr tries;
    Gc.major ();
    let c = (Gc.quick_stat ()).Gc.major_collections mod stamps in
    if not seen.(c) then begin
      seen.(c) <- true;
      groups := Array.init group_size (fun i -> create (ref i)) :: !groups;
      Gc.minor ()
    end
  done;
  check (Array.for_all Fun.id seen) "%s, round %d: cycles missed some stamps" name r;
  Array.concat !groups

let watch roots =
  let weak = Weak.create (Array.length roots) in
  Array.iteri (fun i root -> Weak.set weak i (Some (get root))) roots;
  weak

(* In a window that this domain holds open (hazard_stubs.c): marking
   starts (where cycles start by marking, before OCaml 5.5, with the next
   cycle), the roots' values are copied into a block that the marker will
   not scan, the roots deleted, and only then does the marker read this
   domain's pools. Returns the copies. *)
let delete_in_held_window name r roots =
  hold_darkening (domain_id ()) true;
  let hidden = delete_in_window roots in
  let status = window_status () in
  hold_darkening (domain_id ()) false;
  check (status <> -2) "%s, round %d: the runtime never started marking" name r;
  check (status <> 0) "%s, round %d: the cycle's main marking phase ended before the window \
                       closed (phase: %s)" name r (phase ());
  hidden

(* The cycle finished; returns how many values were lost. *)
let delete_during_marking name r roots weak =
  let hidden = delete_in_held_window name r roots in
  Gc.minor ();
  Gc.major ();
  let lost = count_lost roots weak in
  forget hidden;
  lost

let stamp_age r =
  let roots = groups_per_stamp "age" r in
  let weak = watch roots in
  Gc.full_major ();
  delete_during_marking "age" r roots weak

let relist r =
  fail_directory_growth_after 0;
  let roots = groups_per_stamp "relist" r in
  let weak = watch roots in
  fail_directory_growth_after (-1);
  (* The next cycle start lists them again: the window's. *)
  delete_during_marking "relist" r roots weak

(* The cycle count crosses 2^32. Each round deletes, in a window of the
   marking of one cycle (delete_in_held_window, which completes the cycle
   of the round before), roots created before that cycle started, and
   creates the roots of the next round: the rounds cover consecutive
   cycles, as long as no cycle ends between them, until one of them is
   cycle 2^32 - 1, and two more. A round's losses are counted once its
   cycle is over: in the next round, or at the end. *)
let wrap_start = (1 lsl 32) - 4
let cycle () = (Gc.quick_stat ()).Gc.major_collections
let wrap r =
  let offset = wrap_start - cycle () in
  cycle_offset offset;
  let make () =
    let roots = Array.init 2_000 (fun i -> create (ref i)) in
    roots, watch roots in
  let next = ref (make ()) and lost = ref 0 and seen = ref [] in
  let before = ref None in
  let count_before () =
    Option.iter (fun (roots, weak) -> lost := !lost + count_lost roots weak) !before in
  let target = (1 lsl 32) - 1 in
  Gc.minor ();
  Gc.major ();
  let rounds = ref 0 in
  while !rounds < 12 && not (List.exists (fun c -> c >= target + 2) !seen) do
    incr rounds;
    let roots, weak = !next in
    let hidden = delete_in_held_window "wrap" r roots in
    seen := (cycle () + offset) :: !seen;
    (* The copies keep nothing alive in their cycle (born marked, never
       scanned), and must not be read in the next. *)
    forget hidden;
    count_before ();
    before := Some (roots, weak);
    next := make ()
  done;
  Gc.major ();
  count_before ();
  Array.iter delete (fst !next);
  check (List.mem target !seen)
    "wrap, round %d: no roots deleted during the marking of cycle 2^32 - 1 (cycles %s)" r
    (String.concat " " (List.rev_map string_of_int !seen));
  !lost

(* M4, retired directory blocks: this domain, counted at a cycle start,
   grows its directory during that cycle's marking (its old block is
   retired, since the marker may still read it). Once that cycle is
   over, a later scan must free the block, however the count of the
   cycle ended (here the cycles are finished by Gc.full_major, and no
   scan sees this domain's marking done during the main marking phase:
   the count is reset at a later phase instead). Returns the retired
   blocks left, as "values lost". *)
let retired r =
  Gc.full_major ();
  let some = Array.init 1_000 (fun i -> create i) in
  check (drive_into_marking ()) "retired, round %d: the runtime never started marking" r;
  let before = retired_directory_blocks () in
  (* More pools than the directory holds: it grows. *)
  let more = Array.init 200_000 (fun i -> create i) in
  check (retired_directory_blocks () > before) "retired, round %d: no block retired" r;
  for _ = 1 to 3 do Gc.full_major () done;
  let left = retired_directory_blocks () in
  Array.iter delete some;
  Array.iter delete more;
  left

(* Orphans: a worker's roots, whose pools the main domain adopts when
   the worker terminates (domain.h).
   - young orphans: the values are young when the worker terminates,
     with no minor collection in between. The main domain adopts the
     pools at the start of its scan in the worker's last minor
     collection, and promotes them there as the worker's minor heap is
     emptied. Nothing can fail to allocate on the way (every domain id
     has its state); the allocation failure sweep (test/alloc_failures)
     runs this with every allocation failing in turn.
     test/broken/young_orphans adopts at major scans only, as when no
     domain could adopt in that minor collection: nobody promotes the
     values, and the next domain with the worker's id overwrites them
     (OCaml 5.3: 20,000 lost and 20,000 read wrong; 5.5: the adopter's
     next minor scan crashes on them).
   - adopt_compaction: the main domain adopts them only at the scan of
     the next compaction (a test hook), which OCaml 5.2-5.4 runs after
     the colours rotated, with the phase saying marking: they must not
     be darkened there (marking.c, M1), which compaction would read as
     moved (test/broken/join_darkening darkens them: each root then holds
     its value's old first field). The worker makes its values old and
     marks them first, so that nothing needs to keep them meanwhile. *)
let orphan_roots = 20_000

(* How many roots do not hold [ref i] any more, read without trusting
   them to be blocks. *)
let read_wrong roots =
  let wrong = ref 0 in
  Array.iteri (fun i r ->
      let v = get r in
      if not (Obj.is_block v) || Obj.size v <> 1 || Obj.field v 0 <> Obj.repr i then incr wrong)
    roots;
  !wrong

let orphans ~compaction r =
  if compaction then adopt_at_compaction_only true;
  let roots, weak = Par.join (Par.spawn (fun () ->
      let roots = Array.init orphan_roots (fun i -> create (ref i)) in
      let weak = watch roots in
      if compaction then begin
        Gc.full_major ();
        ignore (drive_into_marking ());
        (* This domain's marking, its pools' values included. *)
        ignore (Gc.major_slice 100_000_000)
      end;
      roots, weak)) in
  (* OCaml 5 gives each domain id its own part of one reservation for
     minor heaps: the next domain with the worker's id overwrites what
     the worker left there, so that a value left unpromoted cannot be
     read back as it was. *)
  if not compaction then
    Par.join (Par.spawn (fun () ->
        for i = 1 to 100_000 do ignore (Sys.opaque_identity (ref (- i))) done));
  let wrong_now =
    if not compaction then 0
    else begin
      check (finish_cycle_compacting ()) "adopt_compaction: no compaction";
      adopt_at_compaction_only false;
      read_wrong roots
    end in
  if wrong_now = 0 then for _ = 1 to 3 do Gc.full_major () done;
  let lost = if wrong_now = 0 then count_lost roots weak else 0 in
  let wrong = if wrong_now = 0 then read_wrong roots else wrong_now in
  if wrong_now = 0 then begin
    (* The broken builds do not check invariants. *)
    check (expect_loss || check_invariants ()) "orphans, round %d: invariants" r;
    Array.iter delete roots
  end;
  lost + wrong

(* adopt_darkening: a worker's orphans adopted at the main domain's root
   darkening scan, after that scan switched the stamp (marking.c, M1: the
   pool is listed with the stamp 0). OCaml 5.5 reaches this order alone,
   as a worker may leave root marking after its own darkening and
   terminate before the main domain darkens (major_gc.c,
   caml_mark_roots_stw); a test hook (adopt_at_darkening_only) gives it
   on every OCaml 5. With the main domain's darkening held, marking
   starts, each root's value is copied into a block allocated during
   marking and the root overwritten by boxroot_modify: its deletion
   barrier must darken the old value. test/broken/adopt_stamp_current
   lists the pool with the current stamp: the barrier is skipped and the
   values are lost. *)
external modify_in_window : root array -> Obj.t array = "hazard_modify_in_window"

let adopt_darkening r =
  adopt_at_darkening_only 2; (* modify_in_window allows the darkening's *)
  let roots, weak = Par.join (Par.spawn (fun () ->
      let roots = Array.init orphan_roots (fun i -> create (ref i)) in
      let weak = watch roots in
      Gc.full_major ();
      (* The worker marks its values in the cycle under way as it leaves:
         they wait, orphaned, through the rest of it. *)
      check (drive_into_marking ()) "adopt_darkening, round %d: no marking" r;
      ignore (Gc.major_slice 100_000_000);
      roots, weak)) in
  hold_darkening (domain_id ()) true;
  let hidden = modify_in_window roots in
  let status = window_status () in
  hold_darkening (domain_id ()) false;
  adopt_at_darkening_only 0;
  check (status <> -2) "adopt_darkening, round %d: the runtime never started marking" r;
  check (status <> 0) "adopt_darkening, round %d: marking ended before the window closed" r;
  Gc.minor ();
  Gc.major ();
  Gc.major ();
  let lost = count_lost roots weak in
  let wrong = ref 0 in
  if lost = 0 then
    Array.iteri (fun i v -> if Obj.size v <> 1 || Obj.field v 0 <> Obj.repr i then incr wrong) hidden;
  forget hidden;
  Array.iter delete roots;
  lost + !wrong

(* A broken build loses values in its first round: each scenario drives
   its race into the losing order. *)
let run ?(rounds = 3) name f =
  if List.mem name scenarios then begin
    if expect_loss then begin
      let lost = f 1 in
      Printf.printf "%s, round 1: %d values lost\n%!" name lost;
      check (Sys.ocaml_release.Sys.major < 5 || lost > 0)
        "%s: the broken build lost no value" name
    end else
      for round = 1 to rounds do
        let k = f round in
        check (k = 0) "%s, round %d: %d values lost" name round k
      done
  end

let () =
  if multicore then begin
    (* Once each: relist needs a directory that never grew, wrap moves
       the cycle count for good. *)
    run ~rounds:1 "relist" relist;
    run ~rounds:1 "wrap" wrap;
    run ~rounds:1 "retired" retired;
    if compacting_cycles then run "adopt_compaction" (orphans ~compaction:true);
    run "adopt_darkening" adopt_darkening
  end;
  run "orphans" (orphans ~compaction:false);
  run "join" join_colour;
  run "age" stamp_age;
  finish "test_marking_rules"
