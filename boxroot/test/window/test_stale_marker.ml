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

   A domain that does no marking work (ballast ahead of its directory)
   lists pools, then, during marking, grows its directory (which retires
   its first block) and:
   - free: empties its first pools, which go back to the chunk allocator,
     where this domain takes them and grows them in the same cycle;
   - orphan: terminates; this domain adopts its first pool (more than
     half full, so that its owner did not fill it further; fresh slots
     left), deletes some of its roots, so that it is reused, and grows it
     in the same cycle.

   Each scenario runs in a child process; with BOXROOT_HAZARD_EXPECT_LOSS=1
   the child must fail, in one of three attempts (BOXROOT_STALE_SCENARIOS
   selects the scenarios). *)
open Boxroot_test

let expect_failure = env_int "BOXROOT_HAZARD_EXPECT_LOSS" 0 = 1
let scenarios =
  String.split_on_char ' '
    (Option.value (Sys.getenv_opt "BOXROOT_STALE_SCENARIOS") ~default:"free orphan")

(* A domain with [k] roots of its own and ballast; once the cycle
   marks, it grows its directory, then runs [act] on its first roots. *)
let idle_owner k act =
  let go = Atomic.make false and made = Atomic.make false in
  let d = Domain.spawn (fun () ->
      let ballast = install_ballast ~control:true in
      let first = Array.init k (fun i -> create (ref i)) in
      Atomic.set made true;
      while not (Atomic.get go) do Domain.cpu_relax () done;
      (* More pools than the directory's first block lists. *)
      let more = Array.init 140_000 (fun i -> create i) in
      act first;
      ignore (Sys.opaque_identity ballast);
      (first, more)) in
  while not (Atomic.get made) do Domain.cpu_relax () done;
  Gc.full_major ();
  check (drive_into_marking ()) "the runtime never started marking";
  stale_marker true;
  (fun () -> Atomic.set go true; Domain.join d)

let free () =
  let join = idle_owner 30_000 (Array.iter delete) in
  let _, more = join () in
  (* Pools it gave back to the chunk allocator, taken and grown here. *)
  let mine = Array.init 3_000 (fun i -> create (ref i)) in
  Gc.full_major ();
  stale_marker false;
  Array.iter delete mine;
  Array.iter delete more

let orphan () =
  let join = idle_owner 1_100 ignore in
  let first, more = join () in
  Gc.minor (); (* adopts its pools *)
  for i = 0 to 199 do delete first.(i) done;
  let mine = Array.init 3_000 (fun i -> create (ref i)) in
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
        if expect_failure then begin
          (* The marker may have reached the pools first on a busy
             machine: up to three attempts. *)
          let rec attempt k = child s <> 0 || (k < 3 && attempt (k + 1)) in
          check (attempt 1) "%s: the broken build did not fail in 3 attempts" s
        end else begin
          let rc = child s in
          check (rc = 0) "%s: the child failed (exit code %d)" s rc
        end)
      scenarios;
    finish "test_stale_marker"
