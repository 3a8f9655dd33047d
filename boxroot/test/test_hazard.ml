(* The snapshot hazard of incremental marking (marking.c, M3). On OCaml 5
   a major cycle hands each pool to the marker at its start, and the
   marker reads the slots later. A root deleted or modified in between,
   after its value was copied into a block the marker will not scan
   (allocated during the cycle, hence born marked), must not let that
   value be collected: the deletion barrier darkens it.

   Each round opens that window on purpose (hazard_stubs.c): this
   domain's darkening is held back, so that its marker cannot reach its
   pools; marking starts; each root's value is copied into a block
   allocated during marking; the root is dropped, in four ways (local
   delete, modify to an immediate, delete from another domain or
   thread, delete from a C thread holding no lock), and two minor
   collections collect the remote deletions; only then is the directory
   darkened, and the marker reads the pools. After the cycle completes
   (Gc.major), a weak array tells which values were collected while the
   copies still pointed to them: there must be none. OCaml 4.14 marks
   slot by slot: the same drops, with no window to hold.

   The builds without barrier (test/broken: no deletion barrier, no stamp
   switch) must lose values: run with BOXROOT_HAZARD_EXPECT_LOSS=1, the
   test fails unless each way loses all of its values, in one round (on
   OCaml 5). BOXROOT_HAZARD_ROUNDS (default 3), BOXROOT_HAZARD_N (values
   per way and round, default 25_000). *)
open Boxroot_test

external forget : Obj.t array -> unit = "hazard_forget"
external multicore : unit -> bool = "hazard_multicore"
external helper : unit -> unit = "hazard_helper"
external set_flag : int -> int -> unit = "hazard_set_flag"
external hold_darkening : int -> bool -> unit = "hazard_hold_darkening"
external domain_id : unit -> int = "hazard_domain_id"
external round_in_window : root array -> int -> Obj.t array = "hazard_round"
external window_status : unit -> int = "hazard_window_status"
external phase : unit -> string = "hazard_phase"

let rounds = env_int "BOXROOT_HAZARD_ROUNDS" 3
let n = env_int "BOXROOT_HAZARD_N" 25_000
let expect_loss = env_int "BOXROOT_HAZARD_EXPECT_LOSS" 0 = 1
let ways = [| "local delete"; "modify"; "delete from another " ^ Par.kind;
              "delete from a C thread without lock" |]
let total = Array.length ways * n

(* Returns the values lost per way. *)
let round r =
  let roots = Array.init total (fun i -> create (ref i)) in
  (* Also this domain's ephemeron, which keeps the cycle marking until
     the window is over (hazard_stubs.c). *)
  let weak = Weak.create total in
  Array.iteri (fun i root -> Weak.set weak i (Some (get root))) roots;
  Gc.full_major ();
  hold_darkening (domain_id ()) true;
  let hidden = round_in_window roots n in
  let status = window_status () in
  hold_darkening (domain_id ()) false;
  check (status <> -2) "round %d: the runtime never started marking" r;
  check (status <> 0)
    "round %d: the cycle's main marking phase ended before the window closed (phase: %s)" r
    (phase ());
  check (status = 1 || not (multicore ())) "round %d: no directory was held back" r;
  (* Completes the cycle (which starts the next one): the weak array's
     entries for values found unmarked are cleared. *)
  Gc.major ();
  let lost = Array.make (Array.length ways) 0 in
  for i = 0 to total - 1 do
    if Weak.get weak i = None then lost.(i / n) <- lost.(i / n) + 1
  done;
  forget hidden;
  let misnamed = ref 0 in
  for i = n to 2 * n - 1 do
    if get roots.(i) != Obj.repr i then incr misnamed;
    delete roots.(i)
  done;
  check (!misnamed = 0) "round %d: %d of %d modified roots do not hold their new value" r !misnamed n;
  Array.iteri (fun w k -> Printf.printf "round %d, %s: %d of %d values lost\n%!" r ways.(w) k n)
    lost;
  lost

let () =
  set_flag 0 (-1);
  let h = Par.spawn helper in
  if expect_loss then begin
    (* The marker reads the pools after every drop: the build without
       barrier loses every value, in every way. *)
    let lost = round 1 in
    Array.iteri (fun w k ->
        check (not (multicore ()) || k = n)
          "%s: the build without deletion barrier lost %d of %d values" ways.(w) k n)
      lost
  end else
    for r = 1 to rounds do
      Array.iteri (fun w k ->
          check (k = 0) "round %d, %s: %d of %d values lost" r ways.(w) k n)
        (round r)
    done;
  set_flag 2 1;
  Par.join h;
  (* Domain.join returns before the domain's thread has released its
     runtime resources (OCaml 5.3, domain.c: free_domain_ml_values), which
     races with the runtime's own cleanup at exit under OCAMLRUNPARAM=c=1
     (make test-asan). *)
  Thread.delay 0.2;
  finish "test_hazard"
