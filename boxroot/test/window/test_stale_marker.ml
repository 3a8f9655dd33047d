(* M1 against markers of other domains (OCaml 5). A marker that finds a
   header UNMARKED writes back, MARKED, the header it loaded: a size
   written in between by another domain is undone. The test build
   emulates such a stale marker (testing.h, boxroot__testing_stale_marker)
   for pools that leave a directory while marking is in progress, and
   checks at every cycle start that each listed pool's header has the
   size of its slots handed out (marking.c), aborting otherwise.

   - free: this domain's pools, not reached yet by its marker (ballast
     ahead of them), are emptied during marking and go back to the chunk
     allocator; another domain takes them and grows them once in the
     same cycle. They must leave MARKED (test/broken/leave_unmarked does
     not mark them, and the check aborts);
   - orphan: a domain whose pools its marker has not reached terminates
     during marking; this domain adopts them and creates roots. An
     adopted pool must not grow in the cycle it was adopted in
     (test/broken/no_freeze lets it, and the check aborts: its size is
     undone to less than the slots handed out).

   Each scenario runs in a child process; with BOXROOT_HAZARD_EXPECT_LOSS=1
   the child must fail, in one of three attempts (BOXROOT_STALE_SCENARIOS
   selects the scenarios). *)
open Boxroot_test

let expect_failure = env_int "BOXROOT_HAZARD_EXPECT_LOSS" 0 = 1
let scenarios =
  String.split_on_char ' '
    (Option.value (Sys.getenv_opt "BOXROOT_STALE_SCENARIOS") ~default:"free orphan")

(* Roots of a domain that does no marking work (it does not allocate,
   and has ballast ahead of its directory), whose marker thus reaches
   none of its pools; [act] runs on it once the cycle marks. *)
let idle_owner k act =
  let go = Atomic.make false and made = Atomic.make false in
  let d = Domain.spawn (fun () ->
      let ballast = install_ballast ~control:true in
      let roots = Array.init k (fun i -> create (ref i)) in
      Atomic.set made true;
      while not (Atomic.get go) do Domain.cpu_relax () done;
      act roots;
      ignore (Sys.opaque_identity ballast);
      roots) in
  while not (Atomic.get made) do Domain.cpu_relax () done;
  Gc.full_major ();
  check (drive_into_marking ()) "the runtime never started marking";
  stale_marker true;
  (fun () -> Atomic.set go true; Domain.join d)

let free () =
  let join = idle_owner 30_000 (Array.iter delete) in
  ignore (join ());
  (* Pools it gave back to the chunk allocator, taken and grown here. *)
  let mine = Array.init 3_000 (fun i -> create (ref i)) in
  Gc.full_major ();
  stale_marker false;
  Array.iter delete mine

let orphan () =
  let join = idle_owner 1_000 ignore in
  let roots = join () in
  Gc.minor (); (* adopts its pools *)
  let mine = Array.init 500 (fun i -> create (ref i)) in
  Gc.full_major ();
  stale_marker false;
  Array.iter delete mine;
  Array.iter delete roots

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
