(* The second hazard of the read barrier (weak.c, W4): between the end
   of marking and the clearing of a weak root, its slot may still hold a
   value that the cycle found dead; a read must report it empty, or the
   program would get a pointer to a block that sweeping frees.

   The window is short (a domain clears its weak roots in its first major
   slice after marking), so the test widens it: weak.c's test knob makes
   only the fallback clear (the minor collection that ends the cycle:
   W3). Values are held strongly while a cycle marks, then only weakly,
   and never read, through the next cycle's marking. The test runs small
   major slices until the phase is the window (OCaml 5's Phase_sweep_ephe,
   4.14's Phase_clean, prolonged by many ephemerons), then reads every
   weak root in one C call (no collection can run meanwhile): none may
   read full. On OCaml 5 a helper domain sleeps between its own slices,
   so that the cycle cannot end before the main domain has read (the end
   of Phase_sweep_ephe waits for every domain's slice).

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

(* One attempt: Some (how many dead values read full) if the window of
   the intended cycle was seen, None if that cycle ended unseen (a slice
   of the helper may end it right after one of the main domain's). *)
let round r =
  let hold, ws, oracle = Weak_test.held_with_oracle n in
  let marking = drive_into_marking () in
  Array.fill hold 0 n (ref (-1));
  Gc.major ();
  (* The values are unmarked, only weakly reachable, in this cycle. *)
  let cycle = Weak_test.cycles () in
  let full = ref (-1) and t0 = Unix.gettimeofday () in
  while !full < 0 && Weak_test.cycles () = cycle && Unix.gettimeofday () -. t0 < 20. do
    (* A cycle's marking starts in a minor collection on OCaml 5.5; none
       once marking runs: the one that ends the cycle clears. *)
    if Weak_test.phase () = Weak_test.cleaning && Weak_test.cycles () = cycle then
      full := Weak_test.count_full ws 0 n
    else begin
      if Weak_test.phase () = Weak_test.idle then ignore (drive_into_marking ());
      ignore (Gc.major_slice 200)
    end
  done;
  let dead = ref 0 in
  for i = 0 to n - 1 do if not (Weak.check oracle i) then incr dead done;
  Printf.printf "attempt %d: window %s; %d of %d dead values read full (oracle: %d dead)\n%!"
    r (if !full >= 0 then "seen" else "not seen") (max !full 0) n !dead;
  Gc.major ();
  if marking then begin
    let left = ref 0 in
    Array.iter (fun w -> if not (Weak_test.peek_empty w) then incr left) ws;
    check (!left = 0) "attempt %d: %d weak roots still full after the cycle" r !left
  end;
  Array.iter Weak_test.delete ws;
  if !full >= 0 && marking then Some !full else None

let () =
  Weak_test.defer_clearing true;
  let h = Par.spawn helper in
  let total = ref 0 and seen = ref 0 and attempts = ref 0 in
  while !seen < rounds && !attempts < 10 * rounds do
    incr attempts;
    match round !attempts with
    | Some full ->
      incr seen;
      total := !total + full;
      if not expect_loss then check (full = 0) "attempt %d: %d dead values read full" !attempts full
    | None -> ()
  done;
  check (!seen > 0) "the window was never seen in %d attempts" !attempts;
  if expect_loss then check (!total > 0) "the build without the check read no dead value";
  Atomic.set stop true;
  Par.join h;
  Weak_test.defer_clearing false;
  ignore (Sys.opaque_identity ephemerons);
  finish "test_weak_window"
