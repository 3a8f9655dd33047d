(* Two rules of marking.c that test_hazard does not reach on its own,
   each failed by a deliberately broken build (test/broken/join_colour,
   test/broken/aging):

   - M1, colour: a pool that joins its domain's directory after the
     marker read it must be MARKED, so that it is UNMARKED, hence marked,
     at the next cycle. Here pools are taken while marking is in
     progress, and their roots alone keep their values through three
     more cycles. The broken build gives them the UNMARKED colour: they
     turn GARBAGE at the next cycle start, the marker skips them, and
     their values are collected.
   - S, the stamps' age: stamps take few values in the test builds (7),
     so the stamp of a pool left untouched for 7 cycles comes back. Here
     groups of roots are created in pools of their own at cycles that
     cover every stamp, then left untouched; then, during marking, their
     values are copied into a block the marker will not scan and the
     roots deleted, as in test_hazard. The aging hand must have reset the
     old stamps; the broken build has no hand, so one group's deletions
     take the fast path without barrier, and its values are lost.

   BOXROOT_RULES ("join age" by default) selects the scenarios;
   BOXROOT_HAZARD_EXPECT_LOSS=1 expects losses instead (broken builds,
   OCaml 5; up to three rounds, as in test_hazard). *)
open Boxroot_test

let expect_loss = env_int "BOXROOT_HAZARD_EXPECT_LOSS" 0 = 1
let scenarios =
  String.split_on_char ' ' (Option.value (Sys.getenv_opt "BOXROOT_RULES") ~default:"join age")

external forget : Obj.t array -> unit = "hazard_forget"

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
  check (drive_into_marking ()) "join, round %d: the runtime never started marking" r;
  let roots = Array.init join_roots (fun i -> create (ref i)) in
  let weak = Weak.create join_roots in
  Array.iteri (fun i root -> Weak.set weak i (Some (get root))) roots;
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

let stamp_age r =
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
  check (Array.for_all Fun.id seen) "age, round %d: cycles missed some stamps" r;
  let roots = Array.concat !groups in
  let total = Array.length roots in
  let weak = Weak.create total in
  Array.iteri (fun i root -> Weak.set weak i (Some (get root))) roots;
  Gc.full_major ();
  check (drive_into_marking ()) "age, round %d: the runtime never started marking" r;
  let hidden = Array.make total (Obj.repr 0) in (* > Max_young_wosize *)
  for i = 0 to total - 1 do hidden.(i) <- get roots.(i) done;
  Array.iter delete roots;
  Gc.minor ();
  Gc.major ();
  let lost = count_lost roots weak in
  forget hidden;
  lost

let run name f =
  if List.mem name scenarios then begin
    let r = ref 0 and lost = ref 0 in
    if expect_loss then begin
      while !lost = 0 && !r < 3 do
        incr r;
        lost := f !r;
        Printf.printf "%s, round %d: %d values lost\n%!" name !r !lost
      done;
      check (Sys.ocaml_release.Sys.major < 5 || !lost > 0)
        "%s: the broken build lost no value in %d rounds" name !r
    end else
      for round = 1 to 3 do
        let k = f round in
        check (k = 0) "%s, round %d: %d values lost" name round k
      done
  end

let () =
  let ballast_owner = install_ballast ~control:expect_loss in
  run "join" join_colour;
  run "age" stamp_age;
  ignore (Sys.opaque_identity ballast_owner);
  finish "test_marking_rules"
