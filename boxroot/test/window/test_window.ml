(* A domain that leaves the root-marking section early (OCaml 5).

   OCaml 5.5 darkens the roots in a minor collection's stop-the-world
   section and lets each domain leave it once its own roots and the
   global ones are darkened (major_gc.c, caml_mark_roots_stw): another
   domain M may still be darkening its roots, boxroot's directory among
   them, while a domain W that left runs OCaml and C code. On 5.1-5.4
   the section ends with a global barrier, and W waits for M.

   Here M's darkening is made slow by a scan-roots hook chained before
   boxroot's (window_stubs.c), as another FFI library may install, and W
   acts while M waits in it: W copies the values of M's roots into a
   block it allocates during marking (born marked, never scanned) and
   overwrites the roots with (). The copies keep the values alive only
   if the overwrites darkened them (marking.c, M5): a weak array tells
   whether any was collected.

   Scenarios (BOXROOT_WINDOW_SCENARIOS selects some):
   - modify: W owns no pool;
   - snapshot: W owns a few roots in one pool, finishes its own marking,
     deletes them (the last deletion snapshots its pool), then modifies;
   - delete: W deletes M's roots (remote), and a thread without any lock
     deletes others, after copying them: these never needed a barrier of
     their own (remote.c), and must stay so;
   - weak: W reads M's weak roots into its block (weak.c, W4);
   - adopt: W owns roots, leaves early, and terminates while M waits; M's
     darkening hook adopts W's pools, whose values must survive the cycles
     that follow, and the roots are checked afterwards;
   - stateless: W owns no pool, so its hook has nothing to darken, and
     M's pools had their stamps made current outside marking in the
     previous cycle: W's hook must still switch
     the stamp (marking.h, boxroot__marking_switch_stamp), or W's modify
     takes the fast path (test/broken/late_switch);
   - unlisted: M's pools could never be listed (injected: its directory
     cannot grow; they are darkened slot by slot in M's hook, M0), made
     at cycles that cover every stamp; W modifies their roots before M's
     hook: an unlisted pool must not keep a stamp, which no aging hand
     resets (test/broken/unlisted_stamps keeps it, and the group whose
     stamp came back loses its values). Needs a fresh process: runs
     first.
   On OCaml 5.5 the test fails unless W acted inside the window (a test
   that could not fail otherwise); on 5.1-5.4 M's hook must have timed
   out instead (the window cannot open). *)
open Boxroot_test

external install_slow_hook : unit -> unit = "window_install_slow_hook"
external arm_this_domain : int -> unit = "window_arm_this_domain"
external disarm : unit -> unit = "window_disarm"
external waiting : unit -> bool = "window_waiting"
external set_marking_on : bool -> unit = "window_set_marking_on"
external wait_for_window : unit -> bool = "window_wait_for_window"
external release : unit -> unit = "window_release"
external timed_out : unit -> bool = "window_timed_out"
external waited_ms : unit -> int = "window_waited_ms"
external hide_and_clear : root array -> Obj.t array -> unit = "window_hide_and_clear"
external finish_marking : unit -> unit = "window_finish_marking"
external forget : Obj.t array -> unit = "hazard_forget"
external delete_foreign : root array -> int -> int -> unit = "hazard_delete_foreign"
external weak_create : 'a -> int = "window_weak_create"
external weak_hide : int array -> Obj.t array -> unit = "window_weak_hide"
external weak_delete : int -> unit = "window_weak_delete"

let () = install_slow_hook ()

let n = env_int "BOXROOT_WINDOW_N" 20_000
let expect_loss = env_int "BOXROOT_HAZARD_EXPECT_LOSS" 0 = 1
let window_opens = Sys.ocaml_release.Sys.major = 5 && Sys.ocaml_release.Sys.minor >= 5
let scenarios =
  String.split_on_char ' '
    (Option.value (Sys.getenv_opt "BOXROOT_WINDOW_SCENARIOS")
       ~default:"unlisted modify snapshot delete weak adopt stateless")

let count_lost weak =
  let k = ref 0 in
  for i = 0 to Weak.length weak - 1 do if Weak.get weak i = None then incr k done;
  !k

(* Runs [act] on a new domain once this domain's darkening waits in the
   slow hook (or, where the window cannot open, once marking started):
   [prepare] runs first on that domain, before the cycle. Returns what
   [act] returned, whether it ran inside the window, and whether the
   hook timed out. [act] must not start a stop-the-world section: the
   waiting domain holds one open. [keep_domain]: [act] returns without
   releasing the hook, and the domain terminates while the hook waits
   (until its timeout). [before_marking] runs on this domain after the
   previous cycle completed, before marking starts. *)
let in_window ?(keep_domain = false) ?timeout ?(before_marking = ignore)
    prepare act =
  (* Where the window opens, the hook waits for the other domain to act,
     which takes it seconds on a busy machine (on OCaml's debug runtime,
     its share of the collection that holds the hook first): the timeout
     is only a bound on a failure. Where it cannot open, the hook waits
     until its timeout, which is what the test checks: half a second, in
     which the other domain, free to run on another core, is not let out
     of the section (the runtime's barrier holds it: OCaml 5.1 to 5.4). *)
  let timeout = match timeout with
    | Some t -> t
    | None -> if window_opens then 120_000 else 500 in
  let ready = Atomic.make false in
  set_marking_on false;
  let d = Domain.spawn (fun () ->
      let state = prepare () in
      Atomic.set ready true;
      let inside = wait_for_window () in
      let r = act state in
      if not keep_domain then release ();
      (r, inside)) in
  while not (Atomic.get ready) do Domain.cpu_relax () done;
  Gc.full_major ();
  (* Where cycles start by marking (before 5.5), the next cycle start:
     the hook is armed for it. *)
  let start_cycle = marking_started () in
  before_marking ();
  arm_this_domain timeout;
  if start_cycle then Gc.major ();
  check (drive_into_marking ()) "the runtime never started marking";
  set_marking_on true;
  let r, inside = Domain.join d in
  let late = timed_out () in
  disarm ();
  Printf.printf "window: the hook waited %d ms%s\n%!" (waited_ms ())
    (if late then " (its timeout)" else "");
  if window_opens then check (inside || keep_domain) "the other domain never acted in the window"
  else check late "the window opened before OCaml 5.5";
  r

(* M's roots, their values watched by a weak array. *)
let roots_watched k =
  let roots = Array.init k (fun i -> create (ref i)) in
  let weak = Weak.create k in
  Array.iteri (fun i r -> Weak.set weak i (Some (get r))) roots;
  roots, weak

let report name lost total =
  Printf.printf "%s: %d of %d values lost\n%!" name lost total;
  lost

(* W modifies M's roots inside the window; [own] roots of its own first
   (snapshot scenario). *)
let modify_scenario name ~own =
  let roots, weak = roots_watched n in
  let hidden = in_window
      (fun () -> Array.init own (fun i -> create (ref i)))
      (fun mine ->
         if own > 0 then begin
           finish_marking ();
           Array.iter delete mine
         end;
         let hidden = Array.make n (Obj.repr 0) in
         hide_and_clear roots hidden;
         hidden) in
  Gc.full_major ();
  let lost = count_lost weak in
  forget hidden;
  Array.iter delete roots;
  report name lost n

let delete_scenario () =
  let roots, weak = roots_watched n in
  let hidden = in_window (fun () -> ())
      (fun () ->
         let hidden = Array.make n (Obj.repr 0) in
         Array.iteri (fun i r -> hidden.(i) <- get r) roots;
         for i = 0 to n / 2 - 1 do delete roots.(i) done;
         delete_foreign roots (n / 2) n;
         hidden) in
  Gc.full_major ();
  let lost = count_lost weak in
  forget hidden;
  report "delete" lost n

let weak_scenario () =
  let values = Array.init n (fun i -> ref i) in
  let wroots = Array.map weak_create values in
  let weak = Weak.create n in
  Array.iteri (fun i v -> Weak.set weak i (Some v)) values;
  (* The values are reachable through weak roots only from the cycle
     whose marking starts in the window. *)
  let hidden = in_window (fun () -> ())
      ~before_marking:(fun () -> Array.fill values 0 n (ref 0))
      (fun () ->
         let hidden = Array.make n (Obj.repr 0) in
         weak_hide wroots hidden;
         hidden) in
  Gc.full_major ();
  let lost = count_lost weak in
  forget hidden;
  Array.iter weak_delete wroots;
  report "weak" lost n

(* W's roots, made before the cycle, kept by M after W terminates. *)
let adopt_scenario () =
  let made = Atomic.make [||] in
  let weak = Weak.create n in
  ignore (in_window ~keep_domain:true ~timeout:300
            (fun () ->
               let roots = Array.init n (fun i -> create (ref i)) in
               Array.iteri (fun i r -> Weak.set weak i (Some (get r))) roots;
               Atomic.set made roots)
            (fun () -> ()));
  let roots = Atomic.get made in
  for _ = 1 to 3 do Gc.full_major () done;
  let lost = count_lost weak in
  let wrong = ref 0 in
  Array.iteri (fun i r ->
      if Weak.get weak i <> None && !(Obj.obj (get r) : int ref) <> i then incr wrong) roots;
  check (!wrong = 0) "adopt: %d roots changed value" !wrong;
  Array.iter delete roots;
  Gc.full_major ();
  check (check_invariants ()) "adopt: invariants";
  report "adopt" lost n

let stateless () =
  let roots, weak = roots_watched n in
  (* W, spawned below, creates no root. *)
  let hidden = in_window
      ~before_marking:(fun () ->
          (* Outside marking (OCaml 5.5's sweep-only phase), one deletion
             per pool makes the pool's stamp current (marking.c, M3). *)
          for i = 0 to n - 1 do
            if i mod 1_000 = 0 then begin
              let v = get roots.(i) in
              delete roots.(i);
              roots.(i) <- create v
            end
          done)
      (fun () -> ())
      (fun () ->
         let hidden = Array.make n (Obj.repr 0) in
         hide_and_clear roots hidden;
         hidden) in
  Gc.full_major ();
  let lost = count_lost weak in
  forget hidden;
  Array.iter delete roots;
  report "stateless" lost n

(* Groups of roots created right after cycles of every count modulo the
   test builds' 7 stamps (marking.c), in pools of their own. *)
let groups_per_stamp k =
  ignore (setup ());
  Gc.major ();
  let groups = ref [] and seen = Array.make 7 false and tries = ref 0 in
  while Array.exists not seen && !tries < 100 do
    incr tries;
    Gc.major ();
    let c = (Gc.quick_stat ()).Gc.major_collections mod 7 in
    if not seen.(c) then begin
      seen.(c) <- true;
      groups := Array.init k (fun i -> create (ref i)) :: !groups;
      Gc.minor ()
    end
  done;
  check (Array.for_all Fun.id seen) "unlisted: cycles missed some stamps";
  Array.concat !groups

let unlisted () =
  fail_directory_growth_after 0;
  let roots = groups_per_stamp 3_000 in
  let total = Array.length roots in
  let weak = Weak.create total in
  Array.iteri (fun i r -> Weak.set weak i (Some (get r))) roots;
  let hidden = in_window (fun () -> ())
      (fun () ->
         let hidden = Array.make total (Obj.repr 0) in
         hide_and_clear roots hidden;
         hidden) in
  fail_directory_growth_after (-1);
  Gc.full_major ();
  let lost = count_lost weak in
  forget hidden;
  Array.iter delete roots;
  report "unlisted" lost total

let run name f =
  if List.mem name scenarios then begin
    let lost = f () in
    if expect_loss then check (lost > 0) "%s: the broken build lost no value" name
    else check (lost = 0) "%s: %d of %d values lost" name lost n
  end

let () =
  run "unlisted" unlisted;
  run "modify" (fun () -> modify_scenario "modify" ~own:0);
  run "snapshot" (fun () -> modify_scenario "snapshot" ~own:16);
  run "delete" delete_scenario;
  run "weak" weak_scenario;
  run "adopt" adopt_scenario;
  run "stateless" stateless;
  finish "test_window"
