(* The first hazard of the read barrier (weak.c, W4): a read during
   marking must darken its value. The marker never reads weak slots, so
   a value reachable only through weak roots when marking starts is not
   marked by it; if a read during marking hands it out and the program
   stores it into a block allocated during marking (born marked, never
   scanned), only the read's darkening keeps it alive.

   Each round: values held strongly when a cycle starts marking (so that
   they are old and marked in it), then only weakly (the strong array is
   dropped) through the end of that cycle, so that they are still in
   their weak roots, unmarked, when the next cycle marks; the runtime is
   driven into marking (Boxroot_test.drive_into_marking); then, in one
   go, each weak root is read and its value stored into an array
   allocated in the major heap during marking (in round 2, by another
   domain than the owner). After that cycle and
   three more, every value must still be there, intact: OCaml's Weak (an
   oracle holding the same values) must not have lost any, and their
   contents must match.

   Run against the build without darkening (broken_darkening, with
   BOXROOT_WEAK_EXPECT_LOSS=1), values must be lost: the test fails
   unless some are in round 1 (read by the owner) and in round 2 (read
   by another domain), on every version. BOXROOT_WEAK_N (default 20_000). *)
open Boxroot_test

let n = env_int "BOXROOT_WEAK_N" 20_000
let expect_loss = env_int "BOXROOT_WEAK_EXPECT_LOSS" 0 = 1
let ballast_owner = install_ballast ~control:expect_loss

external forget : Obj.t array -> unit = "hazard_forget"

let round r =
  let hold, ws, oracle = Weak_test.held_with_oracle n in
  (* Marked in this cycle, whose marking started with them held... *)
  check (drive_into_marking ()) "round %d: the runtime never started marking" r;
  (* ...then only weakly reachable: still in their weak roots, unmarked,
     when the next cycle marks. *)
  Array.fill hold 0 n (ref (-1));
  Gc.major ();
  check (drive_into_marking ()) "round %d: the runtime never started marking" r;
  check (Weak_test.phase () = Weak_test.marking) "round %d: not marking" r;
  let keep = Array.make n (Obj.repr 0) in (* > Max_young_wosize: born marked *)
  let read_all () =
    let read = ref 0 in
    for i = 0 to n - 1 do
      match Weak_test.get ws.(i) with
      | Some v -> keep.(i) <- v; incr read
      | None -> ()
    done;
    !read in
  (* Round 2 reads from another domain (a systhread on OCaml 4.14) than
     the one that owns the weak roots: it darkens on its own mark stack. *)
  let read = ref (if r = 2 then Par.join (Par.spawn read_all) else read_all ()) in
  check (!read > 0) "round %d: no value could be read during marking" r;
  Gc.major ();
  let lost = ref 0 in
  for i = 0 to n - 1 do
    if keep.(i) != Obj.repr 0 && not (Weak.check oracle i) then incr lost
  done;
  if !lost = 0 then begin
    (* Three more cycles: still there, intact, and in their weak roots. *)
    Gc.full_major (); Gc.full_major (); Gc.major ();
    for i = 0 to n - 1 do
      if keep.(i) != Obj.repr 0 then begin
        let v : int ref = Obj.obj keep.(i) in
        check (!v = i) "round %d: value %d damaged" r i;
        check (Weak.check oracle i) "round %d: value %d lost later" r i;
        match Weak_test.get ws.(i) with
        | Some w -> check (w == keep.(i)) "round %d: weak root %d holds another value" r i
        | None -> check false "round %d: weak root %d empty while its value is kept" r i
      end
    done
  end;
  (* Lost values are freed: no live block may point to them any more. *)
  forget keep;
  Array.iter Weak_test.delete ws;
  Printf.printf "round %d: %d of %d values read during marking, %d lost\n%!" r !read n !lost;
  !lost

let () =
  if expect_loss then begin
    (* Rounds 1 and 2: reads by the owner, by another domain. *)
    let owner = round 1 in
    check (owner > 0) "the build without darkening lost no value read by the owner";
    let other = round 2 in
    check (other > 0) "the build without darkening lost no value read by another domain"
  end else
    for r = 1 to 3 do
      let lost = round r in
      check (lost = 0) "round %d: %d values lost" r lost
    done;
  ignore (Sys.opaque_identity ballast_owner);
  finish "test_weak_marking"
