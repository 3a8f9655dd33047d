(* The snapshot hazard of incremental marking (marking.c, M3). On OCaml 5
   a major cycle hands each pool to the marker at its start, and the
   marker reads the slots later. A root deleted or modified in between,
   after its value was copied into a block the marker will not scan
   (allocated during the cycle, hence born marked), must not let that
   value be collected: the deletion barrier darkens it.

   Right after Gc.full_major a new cycle has started and no marking work
   has run; on OCaml 5.5 the test then drives the runtime into marking
   (Boxroot_test.drive_into_marking), since that cycle starts by sweeping
   only. Then, without allocating on the minor heap: copy each root's
   value into a fresh major-heap array, and drop the root, in four ways
   (local delete, modify to an immediate, delete from another domain or
   thread, delete from a C thread holding no lock), then a minor
   collection collects the remote deletions. After the cycle completes
   (Gc.full_major), a weak array tells which values were collected while
   the array still pointed to them: there must be none.

   The build with -DBOXROOT_TESTING_NO_DELETION_BARRIER (test/broken)
   must lose values: run with BOXROOT_HAZARD_EXPECT_LOSS=1 it fails unless
   each way loses some (on OCaml 5), within three rounds.
   BOXROOT_HAZARD_ROUNDS (default 3), BOXROOT_HAZARD_N (values per way
   and round, default 25_000). *)
open Boxroot_test

external delete_foreign : root array -> int -> int -> unit = "hazard_delete_foreign"
external forget : Obj.t array -> unit = "hazard_forget"
external multicore : unit -> bool = "hazard_multicore"

let rounds = env_int "BOXROOT_HAZARD_ROUNDS" 3
let n = env_int "BOXROOT_HAZARD_N" 25_000
let expect_loss = env_int "BOXROOT_HAZARD_EXPECT_LOSS" 0 = 1
let ways = [| "local delete"; "modify"; "delete from another " ^ Par.kind;
              "delete from a C thread without lock" |]
let total = Array.length ways * n

(* A helper running in parallel, waiting for batches of roots to delete
   (remote-domain deletions on OCaml 5). It spins on an atomic, so that
   handing it a batch allocates nothing. *)
let request = Atomic.make (-1) and done_ = Atomic.make 0
let shared : root array ref = ref [||]
let stop = Atomic.make false
let helper () =
  while not (Atomic.get stop) do
    let lo = Atomic.get request in
    if lo >= 0 then begin
      for i = lo to lo + n - 1 do delete !shared.(i) done;
      Atomic.set request (-1);
      Atomic.incr done_
    end else Par.relax ()
  done

let ballast_owner = install_ballast ~control:expect_loss

let round r =
  let roots = Array.init total (fun i -> create (ref i)) in
  let weak = Weak.create total in
  Array.iteri (fun i root -> Weak.set weak i (Some (get root))) roots;
  shared := roots;
  (* Values old, a cycle just started: once it marks, the pools wait on a
     mark stack. *)
  Gc.full_major ();
  check (drive_into_marking ()) "round %d: the runtime never started marking" r;
  let hidden = Array.make total (Obj.repr 0) in (* > Max_young_wosize *)
  for i = 0 to total - 1 do hidden.(i) <- get roots.(i) done;
  let d0 = Atomic.get done_ in
  Atomic.set request (2 * n);
  while Atomic.get done_ = d0 do Par.relax () done;
  delete_foreign roots (3 * n) (4 * n);
  for i = 0 to n - 1 do delete roots.(i) done;
  for i = n to 2 * n - 1 do ignore (modify roots.(i) 0) done;
  Gc.minor (); (* collects the remote deletions *)
  (* Completes the cycle (which starts the next one): the weak array's
     entries for values found unmarked are cleared. *)
  Gc.major ();
  let lost = Array.make (Array.length ways) 0 in
  for i = 0 to total - 1 do
    if Weak.get weak i = None then lost.(i / n) <- lost.(i / n) + 1
  done;
  forget hidden;
  for i = n to 2 * n - 1 do delete roots.(i) done;
  if expect_loss then
    Array.iteri (fun w k ->
        Printf.printf "round %d, %s: %d of %d values lost\n%!" r ways.(w) k n) lost
  else
    Array.iteri (fun w k ->
        check (k = 0) "round %d, %s: %d of %d values lost" r ways.(w) k n) lost;
  lost

(* The build without barrier must lose values in every way. Marking may
   reach some pools before their roots are dropped on a busy machine (a
   domain waiting for the others to join a collection marks meanwhile,
   which the ballast only delays), so up to three rounds, until each way
   has lost values once. A round after a loss is safe: no live block
   points to a lost value any more (weak entries cleared, copies
   forgotten, the roots deleted or holding immediates). *)
let expect_loss_rounds () =
  let ever = Array.make (Array.length ways) false and r = ref 0 in
  while Array.exists not ever && !r < 3 do
    incr r;
    Array.iteri (fun w k -> if k > 0 then ever.(w) <- true) (round !r)
  done;
  Array.iteri (fun w lost ->
      check (not (multicore ()) || lost)
        "%s: the build without deletion barrier lost no value in %d rounds" ways.(w) !r)
    ever

let () =
  let h = Par.spawn helper in
  if expect_loss then expect_loss_rounds ()
  else for r = 1 to rounds do ignore (round r) done;
  Atomic.set stop true;
  Par.join h;
  (* Domain.join returns before the domain's thread has released its
     runtime resources (OCaml 5.3, domain.c: free_domain_ml_values), which
     races with the runtime's own cleanup at exit under OCAMLRUNPARAM=c=1
     (make test-asan). *)
  Thread.delay 0.2;
  ignore (Sys.opaque_identity ballast_owner);
  finish "test_hazard"
