(* Notifying weak roots (weak_notify.c, N1-N6), with OCaml's own Weak as
   the oracle: every root that the GC emptied is reported exactly once,
   none that did not, none deleted.

   Each report (root, word) must name a live root of the table, that very
   root, empty (a raw look at its slot), whose value the test does not
   keep and the oracle says dead, and not reported yet since its last
   refill (a repeated notice fails here). After each drain (no allocation
   between the last, empty answer and the check, so no collection), every
   live root that is empty must have been reported (a lost notice fails
   here).

   Scenarios first, each on every version:
   - die, report, refill with boxroot_weak_modify, die again: reported
     twice, once per emptying (N3);
   - die, then deleted (locally, from a thread without lock) or refilled
     before the drain: not reported (N3);
   - the window (OCaml 5's Phase_sweep_ephe, 4.14's Phase_clean) with
     only the stop-the-world fallback clearing (weak.c's test knob): the
     roots read empty in the window, and their notices come from the
     fallback (N2 in the minor scan), once each;
   then random steps as test_weak_model's (create, drop, refill, delete,
   drain, collections, compaction), checking after each drain; last,
   boxroot_teardown with notices of deleted roots pending (N6).
   With BOXROOT_WEAK_EXPECT_LOSS=1 (the broken builds broken_notify_drop
   and broken_notify_repeat) some check must fail instead.
   BOXROOT_WEAK_NOTIFY_STEPS (default 20_000), _SLOTS (200), _SEED (7). *)
open Boxroot_test

let expect_loss = env_int "BOXROOT_WEAK_EXPECT_LOSS" 0 = 1
(* Against a broken build: count the failed checks, print the first few. *)
let problems = ref 0
let check cond fmt =
  if not expect_loss then check cond fmt
  else Printf.ksprintf (fun msg ->
      if not cond then begin
        incr problems;
        if !problems <= 5 then Printf.printf "expected failure: %s\n%!" msg
      end) fmt

type kind = Small | Str | Closure | Final_last | Imm

let kinds = [| Small; Str; Closure; Final_last; Imm |]

let make kind id : Obj.t =
  match kind with
  | Small -> Obj.repr (ref id)
  | Str -> Obj.repr (string_of_int id ^ "#")
  | Closure ->
    let rec f x = if x = 0 then id else g (x - 1)
    and g x = if x = 0 then id else f (x - 1) in
    Obj.repr g
  | Final_last -> let r = ref id in Gc.finalise_last (fun () -> ()) r; Obj.repr r
  | Imm -> Obj.repr id

type slot = {
  mutable w : Weak_test.t;
  word : int;
  oracle : Obj.t Weak.t;
  mutable kept : Obj.t option;
  mutable reported : bool; (* since the last refill *)
}

let steps = env_int "BOXROOT_WEAK_NOTIFY_STEPS" 20_000
let nslots = env_int "BOXROOT_WEAK_NOTIFY_SLOTS" 200
let () = Random.init (env_int "BOXROOT_WEAK_NOTIFY_SEED" 7)

(* The table: live roots by word. *)
let by_word : (int, slot) Hashtbl.t = Hashtbl.create 1024
let next_word = ref 0
let reports = ref 0

let fill s kind =
  incr next_word;
  let v = make kind !next_word in
  Weak.set s.oracle 0 (Some v);
  s.reported <- false;
  v

let create ?(keep = Random.int 3 <> 0) () =
  incr next_word;
  let word = !next_word in
  let s = { w = Obj.magic 1; word; oracle = Weak.create 1; kept = None; reported = false } in
  let v = fill s kinds.(Random.int (Array.length kinds)) in
  s.kept <- (if keep then Some v else None);
  s.w <- Weak_test.create_notifying v word;
  Hashtbl.replace by_word word s;
  s

let refill s ~keep =
  let v = fill s kinds.(Random.int (Array.length kinds)) in
  s.kept <- (if keep then Some v else None);
  s.w <- Weak_test.modify s.w v

let delete s =
  if Random.bool () then Weak_test.delete s.w else Weak_test.delete_foreign s.w;
  Hashtbl.remove by_word s.word

let on_report (w, word) =
  incr reports;
  match Hashtbl.find_opt by_word word with
  | None -> check false "word %d reported: no live root has it (deleted?)" word
  | Some s ->
    check (s.w == w) "word %d: another root reported than the table's" word;
    check (Weak_test.notifying_word w = word) "word %d: notifying_word says %d" word
      (Weak_test.notifying_word w);
    check (Weak_test.peek_empty w) "word %d reported while full" word;
    check (s.kept = None) "word %d reported while the test keeps its value" word;
    check (not (Weak.check s.oracle 0)) "word %d reported while the oracle is full" word;
    check (not s.reported) "word %d reported twice for one emptying" word;
    s.reported <- true

(* Lost notices, counted without allocating (no collection may run
   between the drain's last answer and this). *)
let lost = ref 0
let lost_word = ref 0
let count_lost _ s =
  if not s.reported && Weak_test.peek_empty s.w then begin incr lost; lost_word := s.word end

let drain () =
  let rec go () = match Weak_test.next_emptied () with
    | Some n -> on_report n; go ()
    | None -> () in
  go ();
  lost := 0;
  Hashtbl.iter count_lost by_word;
  check (!lost = 0) "%d roots emptied and never reported (word %d, among others)" !lost !lost_word

let cycles2 () = Gc.full_major (); Gc.full_major ()

(* ---- scenarios ---- *)

let n = 3_000

let count_reported ss = Array.fold_left (fun k s -> if s.reported then k + 1 else k) 0 ss

let scenario_twice () =
  let ss = Array.init n (fun _ -> create ~keep:false ()) in
  cycles2 ();
  drain ();
  let dead = Array.fold_left (fun k s -> if Weak.check s.oracle 0 then k else k + 1) 0 ss in
  check (count_reported ss = dead) "twice: %d reported, %d dead" (count_reported ss) dead;
  check (dead > n / 2) "twice: only %d of %d values died" dead n;
  (* Refilled after their report: they report their next emptying. *)
  Array.iter (fun s -> refill s ~keep:false) ss;
  cycles2 ();
  drain ();
  let dead = Array.fold_left (fun k s -> if Weak.check s.oracle 0 then k else k + 1) 0 ss in
  check (count_reported ss = dead) "twice, refilled: %d reported again, %d dead"
    (count_reported ss) dead;
  Array.iter delete ss

let scenario_deleted_refilled () =
  let ss = Array.init n (fun _ -> create ~keep:false ()) in
  cycles2 ();
  (* Emptied and queued; a third deleted, a third refilled (kept). *)
  Array.iteri (fun i s ->
      if i mod 3 = 0 then delete s
      else if i mod 3 = 1 then refill s ~keep:true) ss;
  drain ();
  Array.iteri (fun i s ->
      if i mod 3 = 1 then check (not s.reported) "refilled root %d reported" s.word) ss;
  Array.iteri (fun i s -> if i mod 3 <> 0 then delete s) ss

(* The window, as test_weak_window.ml: only the fallback clears. *)
let scenario_window () =
  let hold = Array.init n (fun i -> ref i) in
  let ss = Array.map (fun v ->
      incr next_word;
      let s = { w = Weak_test.create_notifying v !next_word; word = !next_word;
                oracle = Weak.create 1; kept = None; reported = false } in
      Weak.set s.oracle 0 (Some (Obj.repr v));
      Hashtbl.replace by_word s.word s; s) hold in
  Gc.full_major ();
  Weak_test.defer_clearing true;
  let _ = drive_into_marking () in
  Array.fill hold 0 n (ref (-1));
  Gc.major ();
  let cycle = Weak_test.cycles () in
  let seen = ref false and t0 = Unix.gettimeofday () in
  while not !seen && Weak_test.cycles () = cycle && Unix.gettimeofday () -. t0 < 20. do
    if Weak_test.phase () = Weak_test.cleaning then begin
      seen := true;
      (* Not cleared yet (deferred): they read empty, and are not
         reported before the clearing. *)
      let ws = Array.map (fun s -> s.w) ss in
      check (Weak_test.count_full ws 0 n = 0) "window: dead values read full";
      let early = List.length (Weak_test.drain ()) in
      check (early = 0) "window: %d notices before the clearing" early
    end else begin
      if Weak_test.phase () = Weak_test.idle then ignore (drive_into_marking ());
      ignore (Gc.major_slice 200)
    end
  done;
  Printf.printf "window %s\n%!" (if !seen then "seen" else "not seen");
  Gc.full_major ();
  Weak_test.defer_clearing false;
  Gc.full_major ();
  drain ();
  let dead = Array.fold_left (fun k s -> if Weak.check s.oracle 0 then k else k + 1) 0 ss in
  check (count_reported ss = dead) "window: %d reported, %d dead" (count_reported ss) dead;
  check (dead = n) "window: %d of %d dead" dead n;
  Array.iter delete ss

(* ---- random steps ---- *)

let table : slot option array = Array.make nslots None

let step () =
  let i = Random.int nslots in
  match Random.int 100, table.(i) with
  | _, None -> table.(i) <- Some (create ())
  | r, Some s when r < 25 -> s.kept <- None
  | r, Some s when r < 35 -> refill s ~keep:(Random.int 3 <> 0)
  | r, Some s when r < 43 -> delete s; table.(i) <- None
  | r, _ when r < 53 -> drain ()
  | r, _ when r < 75 -> ignore (Sys.opaque_identity (Array.make (Random.int 200) 0))
  | r, _ when r < 87 -> Gc.minor ()
  | r, _ when r < 95 -> ignore (Gc.major_slice 0)
  | r, _ when r < 99 -> Gc.full_major ()
  | _, _ -> Gc.compact ()

let () =
  scenario_twice ();
  scenario_deleted_refilled ();
  scenario_window ();
  let before = !reports in
  for _ = 1 to steps do step () done;
  cycles2 ();
  drain ();
  (* Everything not kept is dead and reported by now. *)
  Array.iter (function
      | Some s when s.kept = None && Weak_test.peek_empty s.w ->
        check s.reported "word %d empty at the end, not reported" s.word
      | _ -> ()) table;
  check (steps = 0 || !reports - before > 0) "random steps: nothing reported";
  Array.iteri (fun i -> function Some s -> delete s; table.(i) <- None | None -> ()) table;
  cycles2 ();
  drain ();
  check (Hashtbl.length by_word = 0) "%d roots left in the table" (Hashtbl.length by_word);
  Gc.minor ();
  check ((stats ()).Boxroot.weak_roots_alive = 0) "statistics: weak roots left";
  (* Teardown with notices pending (N6): roots emptied, deleted before
     their notices are collected. *)
  let last = Array.init 1000 (fun _ -> create ~keep:false ()) in
  cycles2 ();
  Array.iter delete last;
  teardown ();
  check (Weak_test.next_emptied () = None) "a notice after teardown";
  Gc.full_major ();
  Printf.printf "test_weak_notify: %d reports (%d in the random steps)\n" !reports
    (!reports - before);
  if expect_loss then
    Boxroot_test.check (!problems > 0) "the broken build passed every check (%d problems)" !problems;
  finish "test_weak_notify"
