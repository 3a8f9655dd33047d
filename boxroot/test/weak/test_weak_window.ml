(* The second hazard of the read barrier (weak.c, W4): between the end
   of marking and the clearing of a weak root, its slot may still hold a
   value that the cycle found dead; a read must report it empty, or the
   program would get a pointer to a block that sweeping frees.

   The window is short (a domain clears its weak roots in its first major
   slice after marking), so the test widens it: weak.c's test knob makes
   only the fallback clear (the minor collection that ends the cycle:
   W3). Values are held strongly while a cycle marks, then only weakly,
   and never read, through the next cycle's marking. The test runs small
   major slices; the end of the first of this domain's slices in the
   window (OCaml 5's Phase_sweep_ephe, 4.14's Phase_clean, prolonged by
   many ephemerons) reads every weak root, from a slice hook
   (weak_stubs.c): none may read full. The cycle cannot end before that
   hook has run (weak_stubs.c says why), whatever a helper domain, which
   runs slices of its own, does meanwhile: the window is seen in every
   round, or the test fails.

   Run against the build without that check (broken_window, with
   BOXROOT_WEAK_EXPECT_LOSS=1), the test fails unless dead values read
   full. BOXROOT_WEAK_N (default 20_000), BOXROOT_WEAK_ROUNDS (3). *)
open Boxroot_test

let n = env_int "BOXROOT_WEAK_N" 20_000
let rounds = env_int "BOXROOT_WEAK_ROUNDS" 3
let expect_loss = env_int "BOXROOT_WEAK_EXPECT_LOSS" 0 = 1

let stop = Atomic.make false
let helper () =
  while not (Atomic.get stop) do
    Unix.sleepf 0.002;
    ignore (Gc.major_slice 10_000)
  done

(* Ephemerons to clean: OCaml 4.14's Phase_clean then lasts several
   slices. Not on OCaml 5, where their marking would wait for the
   helper's rare slices. *)
let ocaml4 = String.sub Sys.ocaml_version 0 2 = "4."
let ephemerons =
  Array.init (if ocaml4 then 100_000 else 0)
    (fun i -> let w = Weak.create 1 in Weak.set w 0 (Some (ref i)); w)

(* One round: how many dead values read full in the window, or None if
   the window was not reached (a failure, with the phase). *)
let round r =
  let hold, ws, oracle = Weak_test.held_with_oracle n in
  let marking = drive_into_marking () in
  check marking "round %d: marking could not be started" r;
  Array.fill hold 0 n (ref (-1));
  Gc.major ();
  (* The values are unmarked, only weakly reachable, in this cycle. *)
  let cycle = Weak_test.cycles () in
  Weak_test.arm_window_read ws cycle;
  let t0 = Unix.gettimeofday () in
  while Weak_test.window_read () < 0 && Weak_test.cycles () = cycle
        && Unix.gettimeofday () -. t0 < 60. do
    (* A cycle's marking starts in a minor collection on OCaml 5.5; none
       once marking runs: the one that ends the cycle clears. *)
    if Weak_test.phase () = Weak_test.idle then ignore (drive_into_marking ());
    ignore (Gc.major_slice 200)
  done;
  let full = Weak_test.window_read () in
  Weak_test.disarm_window_read ();
  let dead = ref 0 in
  for i = 0 to n - 1 do if not (Weak.check oracle i) then incr dead done;
  Printf.printf "round %d: window %s; %d of %d dead values read full (oracle: %d dead)\n%!"
    r (if full >= 0 then "seen" else "not seen") (max full 0) n !dead;
  check (full >= 0) "round %d: the window was not reached (cycles %d, then %d; weak phase %d)"
    r cycle (Weak_test.cycles ()) (Weak_test.phase ());
  Gc.major ();
  let left = ref 0 in
  Array.iter (fun w -> if not (Weak_test.peek_empty w) then incr left) ws;
  check (!left = 0) "round %d: %d weak roots still full after the cycle" r !left;
  Array.iter Weak_test.delete ws;
  if full >= 0 then Some full else None

let () =
  Weak_test.defer_clearing true;
  let h = Par.spawn helper in
  for r = 1 to rounds do
    match round r with
    | Some full ->
      if expect_loss then check (full > 0) "round %d: the build without the check read no dead value" r
      else check (full = 0) "round %d: %d dead values read full" r full
    | None -> ()
  done;
  Atomic.set stop true;
  Par.join h;
  Weak_test.defer_clearing false;
  ignore (Sys.opaque_identity ephemerons);
  finish "test_weak_window"
