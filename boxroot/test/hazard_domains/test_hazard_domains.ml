(* What test_hazard does not cover, with two domains (OCaml 5):

   1. Another domain modifies the roots while their pools wait for their
      owner's marker: to an immediate (the modifying domain darkens the
      old value: marking.c, M3), and to a young value, which moves the
      root to a young pool of the modifying domain and deletes the old
      one remotely; the owner collects that deletion under the barrier.
      As in test_hazard, the owner's darkening is held back meanwhile
      (hazard_stubs.c), and each old value is first copied into a block
      allocated during marking, which the marker will not scan; a weak
      array then tells whether a value was collected anyway. The build
      without deletion barrier (test/broken) loses every value here.
   2. The owner domain terminates while its directory and pools wait on
      its mark stack (it finishes its marking before it goes); the roots
      are then deleted by the domain that adopts its pools.
   3. Gc.compact while two domains hold roots of each other's values:
      every root still holds its value, moved, afterwards.
   4. The owner terminates during marking with its darkening held back:
      its marker never reached its pools, which another domain adopts
      after its own marker read its directory (this domain finishes its
      marking first), before the terminated domain's scan visits them
      (hazard_stubs.c), and keeps through more cycles; their values must
      be darkened as they join (marking.c, M1). The build without that
      darkening (test/broken/adopt) loses every value here.

   BOXROOT_HAZARD_EXPECT_LOSS=1: a broken build; fails unless the
   scenario it breaks loses every value: both ways of scenario 1 (without
   barrier), or scenario 4 with BOXROOT_HAZARD_SCENARIO=adopt. *)
open Boxroot_test

external forget : Obj.t array -> unit = "hazard_forget"
external set_flag : int -> int -> unit = "hazard_set_flag"
external wait_flag : int -> int -> unit = "hazard_wait_flag"
external hold_darkening : int -> bool -> unit = "hazard_hold_darkening"
external start_marking : unit -> bool = "hazard_start_marking"
external finish_marking : unit -> unit = "hazard_finish_marking"
external window_other : root array -> int -> int -> Obj.t array = "hazard_window_other"
external window_status : unit -> int = "hazard_window_status"
external phase : unit -> string = "hazard_phase"
external domain_id : unit -> int = "hazard_domain_id"
external adoption_first : int -> unit = "hazard_adoption_first"

let n = env_int "BOXROOT_HAZARD_N" 20_000
let expect_loss = env_int "BOXROOT_HAZARD_EXPECT_LOSS" 0 = 1

(* Tasks run by a second domain, handed over without allocating. *)
let task : (unit -> unit) option Atomic.t = Atomic.make None
let stop = Atomic.make false
let worker () =
  while not (Atomic.get stop) do
    match Atomic.get task with
    | Some f -> f (); Atomic.set task None
    | None -> Domain.cpu_relax ()
  done
let post f = Atomic.set task (Some f)
let await () = while Atomic.get task <> None do Domain.cpu_relax () done
let run_on_worker f = post f; await ()

let count_lost weak lo hi =
  let k = ref 0 in
  for i = lo to hi - 1 do if Weak.get weak i = None then incr k done;
  !k

(* A new cycle, once it marks, with the roots' values copied into a block
   allocated during marking (which the marker will not scan) and watched
   by a weak array: returns both. *)
let values_in_marking name roots =
  let k = Array.length roots in
  let weak = Weak.create k in
  Array.iteri (fun i r -> Weak.set weak i (Some (get r))) roots;
  Gc.full_major ();
  check (drive_into_marking ()) "%s: the runtime never started marking" name;
  let hidden = Array.make k (Obj.repr 0) in
  for i = 0 to k - 1 do hidden.(i) <- get roots.(i) done;
  (weak, hidden)

(* Scenario 1 once: the values lost (modified to an immediate, to a
   young value). *)
let modified_by_another_domain () =
  let total = 2 * n in
  let roots = Array.init total (fun i -> create (ref i)) in
  (* Also this domain's ephemeron (hazard_stubs.c). *)
  let weak = Weak.create total in
  Array.iteri (fun i r -> Weak.set weak i (Some (get r))) roots;
  Gc.full_major ();
  List.iter (fun f -> set_flag f 0) [3; 4; 5];
  post (fun () ->
      (* An empty minor heap: its allocations below need no collection,
         hence no section, while the other domain is in the window. *)
      Gc.minor ();
      set_flag 5 1;
      wait_flag 3 1;
      for i = 0 to n - 1 do roots.(i) <- modify roots.(i) 0 done;
      for i = n to total - 1 do roots.(i) <- modify roots.(i) (ref (- i)) done;
      set_flag 4 1);
  wait_flag 5 1;
  hold_darkening (domain_id ()) true;
  let hidden = window_other roots 3 4 in
  let status = window_status () in
  hold_darkening (domain_id ()) false;
  await ();
  check (status <> -2) "modify: the runtime never started marking";
  check (status = 1)
    "modify: the cycle's main marking phase ended before the window closed (phase: %s)" (phase ());
  Gc.major ();
  let lost_imm = count_lost weak 0 n and lost_young = count_lost weak n total in
  forget hidden;
  let wrong = ref 0 in
  for i = n to total - 1 do
    if !(Obj.obj (get roots.(i)) : int ref) <> - i then incr wrong
  done;
  check (!wrong = 0) "modify: %d moved roots do not hold their new value" !wrong;
  Array.iter delete roots;
  Printf.printf "modify to an immediate: %d of %d values lost; to a young value: %d of %d \
                 values lost\n%!" lost_imm n lost_young n;
  (lost_imm, lost_young)

(* The build without barrier loses every value, both ways: the marker
   reads the pools after every modification. *)
let modify_hazard () =
  let lost_imm, lost_young = modified_by_another_domain () in
  if expect_loss then begin
    check (lost_imm = n) "the build without barrier lost %d of %d values modified to an \
                          immediate" lost_imm n;
    check (lost_young = n) "the build without barrier lost %d of %d values modified to a \
                            young one" lost_young n
  end else begin
    check (lost_imm = 0) "modify to an immediate by another domain: %d of %d lost" lost_imm n;
    check (lost_young = 0) "modify to a young value by another domain: %d of %d lost"
      lost_young n
  end

(* A domain that creates n roots, then waits in C (hazard_wait_flag:
   it takes part in collections, and runs no slice of its own): returns
   them, its id, and a function that lets it terminate and joins it. *)
let owner_with_roots () =
  set_flag 6 0;
  let made = Atomic.make false in
  let roots = ref [||] and id = ref 0 in
  let d = Domain.spawn (fun () ->
      roots := Array.init n (fun i -> create (ref i));
      id := domain_id ();
      Atomic.set made true;
      wait_flag 6 1) in
  while not (Atomic.get made) do Domain.cpu_relax () done;
  !roots, !id, (fun () -> set_flag 6 1; Domain.join d)

let owner_terminates_while_marking () =
  let roots, _, terminate = owner_with_roots () in
  let weak, hidden = values_in_marking "terminate" roots in
  terminate ();
  (* Its pools are orphans until this domain adopts them at its next
     scan: the first half deleted before, the second after. *)
  for i = 0 to n / 2 - 1 do delete roots.(i) done;
  Gc.minor ();
  for i = n / 2 to n - 1 do delete roots.(i) done;
  Gc.major ();
  let lost = count_lost weak 0 n in
  forget hidden;
  check (lost = 0) "owner terminated during marking: %d of %d values lost" lost n;
  Gc.full_major (); Gc.full_major ();
  check (check_invariants ()) "terminate: invariants"

(* Scenario 4: returns how many values were lost. *)
let owner_terminates_roots_kept () =
  let roots, owner, terminate = owner_with_roots () in
  (* Also this domain's ephemeron (hazard_stubs.c). *)
  let weak = Weak.create n in
  Array.iteri (fun i r -> Weak.set weak i (Some (get r))) roots;
  Gc.full_major ();
  hold_darkening owner true;
  check (start_marking ()) "adopt: the runtime never started marking";
  (* This domain's marker has read its directory; the owner's, none. *)
  finish_marking ();
  adoption_first owner;
  terminate ();
  Gc.minor (); (* adopts the pools, if the owner's last collection did not *)
  adoption_first (-1);
  hold_darkening owner false;
  Gc.full_major (); Gc.full_major ();
  let lost = count_lost weak 0 n in
  let wrong = ref 0 in
  Array.iteri (fun i r ->
      if Weak.get weak i <> None && !(Obj.obj (get r) : int ref) <> i then incr wrong) roots;
  check (!wrong = 0) "adopt: %d values changed" !wrong;
  Array.iter delete roots;
  Printf.printf "adopt: %d of %d values lost\n%!" lost n;
  lost

let compaction_between_domains () =
  let mine = Array.init n (fun i -> create (string_of_int i)) in
  let theirs = ref [||] in
  run_on_worker (fun () ->
      (* Garbage between the values, so that compaction moves them. *)
      theirs := Array.init n (fun i ->
          ignore (Sys.opaque_identity (Array.make 10 i));
          create (ref i)));
  Gc.compact ();
  let bad = ref 0 in
  Array.iteri (fun i r -> if (Obj.obj (get r) : string) <> string_of_int i then incr bad) mine;
  Array.iteri (fun i r -> if !(Obj.obj (get r) : int ref) <> i then incr bad) !theirs;
  check (!bad = 0) "compaction: %d roots lost their value" !bad;
  (* Each domain deletes the other's roots. *)
  let theirs = !theirs in
  run_on_worker (fun () -> Array.iter delete mine);
  Array.iter delete theirs;
  Gc.compact ();
  check (check_invariants ()) "compaction: invariants"

let () =
  if Sys.getenv_opt "BOXROOT_HAZARD_SCENARIO" = Some "adopt" then begin
    (* Without the worker: this domain, whose marker has read its
       directory, is the only one left to adopt the owner's pools, at a
       minor scan. On OCaml 5.5 a worker may darken its roots after the
       others finished marking theirs: when it adopted the pools at that
       darkening scan, the scan darkened them (M1), and the broken build
       lost nothing (2 of 12 runs). *)
    let lost = owner_terminates_roots_kept () in
    check (lost = n) "adopt: the broken build lost %d of %d values" lost n
  end else begin
    let w = Domain.spawn worker in
    modify_hazard ();
    if not expect_loss then begin
      owner_terminates_while_marking ();
      let lost = owner_terminates_roots_kept () in
      check (lost = 0) "owner terminated during marking, roots kept: %d of %d values lost"
        lost n;
      compaction_between_domains ()
    end;
    Atomic.set stop true;
    Domain.join w
  end;
  finish "test_hazard_domains"
