(* M1 against a stale marker (OCaml 5). A marker that finds a header
   UNMARKED writes back, MARKED, the header it loaded, so that a size
   written in between by another thread is undone; and a domain's marker
   may read the fields of its directory's retired blocks until it is
   done, long after a pool left the directory and went to another domain
   (marking.c). The test build emulates that marker (testing.h,
   boxroot__testing_stale_marker): a pool that a retired block still
   lists as it leaves is loaded, and written back after each of its
   growths in that cycle. It also checks at every cycle start that each
   listed pool's header has the size of its slots handed out, and aborts
   otherwise. A pool that leaves must leave no trace in the retired
   blocks (test/broken/retired_keep_pools keeps it there).

   Another domain lists pools, then, in a window where its darkening is
   held back (hazard_stubs.c: it starts marking itself, and its marker
   reaches none of its pools: their headers stay UNMARKED, and it stays
   counted), grows its directory (which retires its first block) and:
   - free: empties its first pools, which go back to the chunk allocator,
     where this domain takes them and grows them while the window lasts;
   - orphan: terminates; this domain adopts its first pool (more than
     half full, so that its owner did not fill it further; fresh slots
     left) in the owner's last collection, then deletes some of its
     roots, so that it is reused, and grows it, in the same cycle.

   Each scenario runs in a child process; with BOXROOT_HAZARD_EXPECT_LOSS=1
   the child must fail (BOXROOT_STALE_SCENARIOS selects the scenarios). *)
open Boxroot_test

let expect_failure = env_int "BOXROOT_HAZARD_EXPECT_LOSS" 0 = 1
let scenarios =
  String.split_on_char ' '
    (Option.value (Sys.getenv_opt "BOXROOT_STALE_SCENARIOS") ~default:"free orphan")

external set_flag : int -> int -> unit = "hazard_set_flag"
external wait_flag : int -> int -> unit = "hazard_wait_flag"
external hold_darkening : int -> bool -> unit = "hazard_hold_darkening"
external owner_window : root array -> root array -> bool -> int -> int -> int
  = "hazard_owner_window"
external after_adoption : int -> root array -> int -> root array -> unit
  = "hazard_after_adoption"
external create_immediates : root array -> unit = "hazard_create_immediates"
external domain_id : unit -> int = "hazard_domain_id"

let no_roots k : root array = Obj.magic (Array.make k 0)

(* A domain with [k] roots of its own, which, told to (flag 0), runs its
   window (hazard_owner_window, with flags 1 and 2). Returns its roots,
   and a function that joins it and returns the roots of its window. *)
let owner k ~free_first =
  List.iter (fun f -> set_flag f 0) [0; 1; 2];
  let made = Atomic.make None in
  let d = Domain.spawn (fun () ->
      let first = Array.init k (fun i -> create (ref i)) in
      (* More pools than the directory's first block lists. *)
      let more = no_roots 140_000 in
      (* An ephemeron of its own, and no major slice of its own in the
         window: the cycle marks until its end (hazard_stubs.c). *)
      let anchor = Weak.create 1 in
      Weak.set anchor 0 (Some first);
      Atomic.set made (Some (first, domain_id ()));
      wait_flag 0 1;
      let status = owner_window first more free_first 1 2 in
      check (status <> -2) "the runtime never started marking";
      check (status <> 0) "the cycle's main marking phase ended before the window closed";
      ignore (Sys.opaque_identity anchor);
      more) in
  let rec wait () = match Atomic.get made with
    | Some m -> m
    | None -> Domain.cpu_relax (); wait () in
  let first, id = wait () in
  Gc.full_major ();
  hold_darkening id true;
  stale_marker true;
  first, (fun () -> let more = Domain.join d in hold_darkening id false; more)

let free () =
  let _, join = owner 30_000 ~free_first:true in
  set_flag 0 1;
  (* Pools it gave back to the chunk allocator, taken and grown here
     while its window lasts. *)
  let mine = no_roots 3_000 in
  wait_flag 1 1;
  create_immediates mine;
  set_flag 2 1;
  let more = join () in
  Gc.full_major ();
  stale_marker false;
  Array.iter delete mine;
  Array.iter delete more

let orphan () =
  let first, join = owner 1_100 ~free_first:false in
  (* It runs its window and terminates; its first pool, adopted here in
     its last collection, is reused and grown. *)
  let mine = no_roots 3_000 in
  after_adoption 0 first 200 mine;
  let more = join () in
  Gc.full_major ();
  stale_marker false;
  Array.iter delete mine;
  Array.iteri (fun i r -> if i >= 200 then delete r) first;
  Array.iter delete more

let () =
  match Sys.getenv_opt "BOXROOT_STALE_SCENARIO" with
  | Some "free" -> free (); check (check_invariants ()) "free: invariants"; finish "free"
  | Some "orphan" -> orphan (); check (check_invariants ()) "orphan: invariants"; finish "orphan"
  | Some s -> failwith ("unknown scenario " ^ s)
  | None ->
    let child s =
      let rc = Sys.command (Printf.sprintf "BOXROOT_STALE_SCENARIO=%s %s"
                              s (Filename.quote Sys.executable_name)) in
      Printf.printf "stale marker, %s: exit code %d\n%!" s rc;
      rc in
    List.iter (fun s ->
        if expect_failure then
          check (child s <> 0) "%s: the broken build did not fail" s
        else begin
          let rc = child s in
          check (rc = 0) "%s: the child failed (exit code %d)" s rc
        end)
      scenarios;
    finish "test_stale_marker"
