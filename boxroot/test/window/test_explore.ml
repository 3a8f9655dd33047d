(* The window explorer (OCaml 5): the protocols' hazards (marking.c,
   remote.c, weak.c) across two or three domains, with seeded random
   delays and yields at every window point of the test build (window.h),
   and with the environment varied at random: a slow root-darkening hook
   on one domain (the window of marking.c, M5, on OCaml 5.5), directories
   that cannot grow for a while (M0, S: relisting), a cycle count that
   crosses 2^32 (M4), a stale marker of another domain, emulated (M1).

   A run is a number of rounds, one major cycle each. Roots live in
   cohorts, created together by one domain and dropped together some
   rounds later (so that some pools stay untouched for many cycles: S's
   aging hand). In each round, during marking, every domain takes a share
   of the cohorts due, copies each root's value into a block it allocated
   during marking (born marked, never scanned), then drops the root in a
   random way: deleted by its owner, by another domain, by a thread
   without any lock, or modified to an immediate or to a young value. It
   also reads a share of the weak roots into that block (W4), and some
   domains create cohorts during marking (M1: pools that join then) or
   terminate right after their share (orphans adopted during marking:
   M1, M3). At the end of the round, every value copied must still be
   alive, every live root must still hold its value (a weak array
   watches them all), and a weak root must read empty exactly when its
   value died. A run may end with teardown while another domain is held
   in a hook (compat_ocaml5.c).

   The run is a child process: the test build's checks abort it on a
   broken invariant (the header check of M1 at each cycle start among
   them). BOXROOT_EXPLORE_SEEDS (default "1 2 3") are the runs;
   BOXROOT_EXPLORE_ROUNDS (default 12) their length. With
   BOXROOT_HAZARD_EXPECT_LOSS=1 (a broken build), some run must lose a
   value or fail. *)
open Boxroot_test

external install_slow_hook : unit -> unit = "window_install_slow_hook"
external arm_domain : int -> int -> unit = "window_arm_domain"
external disarm : unit -> unit = "window_disarm"
external set_marking_on : bool -> unit = "window_set_marking_on"
external wait_for_window : unit -> bool = "window_wait_for_window"
external set_flag : int -> int -> unit = "window_set_flag"
external wait_flag : int -> int -> unit = "window_wait_flag"
external spin : int -> unit = "window_spin"
external delays : int -> int -> int -> unit = "window_delays"
external weak_create : 'a -> int = "window_weak_create"
external weak_get : int -> Obj.t option = "window_weak_get"
external weak_delete : int -> unit = "window_weak_delete"
external forget : Obj.t array -> unit = "hazard_forget"
external delete_foreign : root array -> int -> int -> unit = "hazard_delete_foreign"
external hold : int -> int -> int -> int -> unit = "window_hold"
external wait_to_take_hold : unit -> bool = "window_wait_to_take_hold"
external hold_go : unit -> unit = "window_hold_go"
external point : string -> int = "window_point_of_name"
external teardown_now : unit -> unit = "window_teardown"

let expect_loss = env_int "BOXROOT_HAZARD_EXPECT_LOSS" 0 = 1
let rounds = env_int "BOXROOT_EXPLORE_ROUNDS" 12
let window_opens = Sys.ocaml_release.Sys.minor >= 5

(* ---- The population ---- *)

(* A root's value is [ref id], watched by [watch.(id)]; [expect] is the
   id of the value it must hold, or -1 once it holds an immediate. *)
type entry = { mutable root : root; mutable expect : int }
type cohort = { entries : entry array; dies : int }

let watch = Weak.create 4_000_000
let next_id = ref 0
let new_value () =
  let id = !next_id in
  incr next_id;
  let v = ref id in
  Weak.set watch id (Some (Obj.repr v));
  id, v

let make_cohort ~size ~dies =
  { entries = Array.init size (fun _ ->
        let id, v = new_value () in
        { root = create v; expect = id });
    dies }

(* Weak roots whose values only they reach, from the round they were
   made for on. *)
type weak_entry = { w : int; wid : int }

(* ---- Worker domains ----
   Each waits for a task in C (window_wait_flag: no major slice of its
   own while it waits, so that it can run in the window), runs it, and
   answers. Flag 2k: task posted (1) / none (0); 2k+1: done. *)
let tasks : (unit -> bool) option array = Array.make 3 None
let worker k () =
  let go_on = ref true in
  while !go_on do
    wait_flag (2 * k) 1;
    set_flag (2 * k) 0;
    (match tasks.(k) with
     | Some f -> go_on := f ()
     | None -> go_on := false);
    set_flag (2 * k + 1) 1
  done

let spawn_worker k =
  set_flag (2 * k) 0;
  set_flag (2 * k + 1) 0;
  Domain.spawn (worker k)

let post k f = tasks.(k) <- Some f; set_flag (2 * k + 1) 0; set_flag (2 * k) 1
let await k = wait_flag (2 * k + 1) 1

(* ---- One domain's share of a round, during marking ---- *)

type share = {
  drops : entry array;            (* to copy, then drop *)
  reads : weak_entry array;       (* weak roots to read *)
  mutable hidden : Obj.t array;   (* the copies, allocated during marking *)
  mutable hidden_ids : int array; (* their values' ids, or -1 *)
  mutable made : cohort list;     (* cohorts made during marking *)
}

let act rng share ~make_during =
  let n = Array.length share.drops and m = Array.length share.reads in
  let hidden = Array.make (n + m + 1) (Obj.repr 0) in
  let ids = Array.make (n + m) (-1) in
  share.hidden <- hidden;
  share.hidden_ids <- ids;
  Array.iteri (fun i e ->
      if e.expect >= 0 then begin hidden.(i) <- get e.root; ids.(i) <- e.expect end)
    share.drops;
  let foreign = ref [] in
  Array.iter (fun e ->
      match Random.State.int rng 5 with
      | 0 | 1 -> delete e.root; e.expect <- -2
      | 2 -> foreign := e.root :: !foreign; e.expect <- -2
      | 3 -> e.root <- modify e.root 0; e.expect <- -1
      | _ ->
        let id, v = new_value () in
        e.root <- modify e.root v; e.expect <- id)
    share.drops;
  let f = Array.of_list !foreign in
  if Array.length f > 0 then delete_foreign f 0 (Array.length f);
  Array.iteri (fun i we ->
      match weak_get we.w with
      | Some v -> hidden.(n + i) <- v; ids.(n + i) <- we.wid
      | None -> ())
    share.reads;
  if make_during > 0 then
    share.made <- [make_cohort ~size:make_during ~dies:max_int]

(* ---- A run ---- *)

let lost = ref 0
let report fmt = Printf.ksprintf (fun s -> incr lost; Printf.printf "LOST: %s\n%!" s) fmt

let check_alive what id =
  if Weak.get watch id = None then report "%s: value %d collected" what id

(* A root holds its value: read only if the weak array says it is alive. *)
let check_root r e =
  if e.expect >= 0 then begin
    check_alive (Printf.sprintf "round %d, root" r) e.expect;
    if Weak.get watch e.expect <> None
    && !(Obj.obj (get e.root) : int ref) <> e.expect then
      report "round %d: a root holds another value" r
  end

let run seed =
  let rng = Random.State.make [| seed |] in
  let ballast = install_ballast ~control:expect_loss in
  let pick n = Random.State.int rng n in
  let domains = 2 + pick 2 in (* this one and 1 or 2 workers *)
  let workers = domains - 1 in
  let slow = pick 4 <> 0 and wrap = pick 2 = 0 and stale = pick 2 = 0 in
  let starve_from = if pick 2 = 0 then 1 + pick 3 else max_int in
  let permille = 20 + pick 200 and max_us = 50 + pick 2000 in
  Printf.printf "seed %d: %d domains, slow darkening %b, cycles across 2^32 %b, \
                 stale marker %b, directories starved from round %s, delays %d/1000 \
                 up to %d us\n%!"
    seed domains slow wrap stale
    (if starve_from = max_int then "never" else string_of_int starve_from) permille max_us;
  if wrap then
    cycle_offset ((1 lsl 32) - 3 - rounds / 2 - (Gc.quick_stat ()).Gc.major_collections);
  stale_marker stale;
  let ids = Array.make 3 0 in
  let dom = Array.make 3 None in
  let start k =
    let d = spawn_worker k in
    dom.(k) <- Some d;
    post k (fun () -> ids.(k) <- domain_id (); true);
    await k in
  for k = 1 to workers do start k done;
  ids.(0) <- domain_id ();
  let cohorts = ref [] and weaks = ref [] in
  delays seed permille max_us;
  for r = 1 to rounds do
    Printf.printf "seed %d, round %d: %d cohorts, %d weak roots, %d values so far, %d MiB of pools, %d MiB heap\n%!"
      seed r (List.length !cohorts) (List.length !weaks) !next_id (match Boxroot.stats () with Some s -> s.Boxroot.reserved_bytes lsr 20 | None -> 0) ((Gc.quick_stat ()).Gc.heap_words lsr 17);
    (* Outside marking: cohorts for later rounds, by each domain. *)
    let starving = r >= starve_from && r < starve_from + 7 in
    if r = starve_from then fail_directory_growth_after 0;
    let dies_of () =
      if starving then starve_from + 7 else r + 1 + pick 9 in
    let make k =
      let size = 200 + pick 3000 and dies = dies_of () in
      if k = 0 then cohorts := make_cohort ~size ~dies :: !cohorts
      else begin
        let made = ref None in
        post k (fun () -> made := Some (make_cohort ~size ~dies); true);
        await k;
        Option.iter (fun c -> cohorts := c :: !cohorts) !made
      end in
    for k = 0 to workers do make k done;
    (* While directories cannot grow: more pools than a directory's first
       block lists, so that some cannot be listed. *)
    if r = starve_from then
      for k = 0 to workers do
        let size = 140_000 in
        if k = 0 then cohorts := make_cohort ~size ~dies:(starve_from + 7) :: !cohorts
        else begin
          let made = ref None in
          post k (fun () -> made := Some (make_cohort ~size ~dies:(starve_from + 7)); true);
          await k;
          Option.iter (fun c -> cohorts := c :: !cohorts) !made
        end
      done;
    (* Weak roots of values that only they will reach this cycle. *)
    let keep = Array.init (100 + pick 2000) (fun _ -> new_value ()) in
    let fresh_weak = Array.map (fun (id, v) -> { w = weak_create v; wid = id }) keep in
    weaks := Array.to_list fresh_weak @ !weaks;
    if r = starve_from + 7 then fail_directory_growth_after (-1);
    (* The shares: the cohorts due, and the weak roots, dealt out. *)
    let due, later = List.partition (fun c -> c.dies <= r) !cohorts in
    cohorts := later;
    let shares = Array.init domains (fun _ ->
        { drops = [||]; reads = [||]; hidden = [||]; hidden_ids = [||]; made = [] }) in
    let deal = Array.make domains [] in
    List.iter (fun c -> Array.iter (fun e ->
        let k = pick domains in deal.(k) <- e :: deal.(k)) c.entries) due;
    let wdeal = Array.make domains [] in
    List.iter (fun we -> if pick 3 = 0 then
                  let k = pick domains in wdeal.(k) <- we :: wdeal.(k)) !weaks;
    let shares = Array.mapi (fun k s ->
        { s with drops = Array.of_list deal.(k); reads = Array.of_list wdeal.(k) }) shares in
    Array.iteri (fun i _ -> keep.(i) <- (-1, ref 0)) keep;
    (* The cycle whose marking the round runs in: the roots above are in
       its snapshot. *)
    set_marking_on false;
    let terminating = Array.init domains (fun k -> k > 0 && pick 5 = 0) in
    let seeds = Array.init domains (fun _ -> pick 1_000_000) in
    for k = 1 to workers do
      let s = shares.(k) and sd = seeds.(k) and make_during = if pick 2 = 0 then pick 2000 else 0 in
      post k (fun () ->
          ignore (wait_for_window ());
          let wr = Random.State.make [| sd |] in
          spin (Random.State.int wr 50);
          act wr s ~make_during;
          not terminating.(k))
    done;
    if slow then arm_domain ids.(pick domains) (5 + pick 60);
    Gc.major ();
    if not (drive_into_marking ()) then report "round %d: the runtime never started marking" r;
    act rng shares.(0) ~make_during:(if pick 2 = 0 then pick 2000 else 0);
    set_marking_on true;
    for k = 1 to workers do await k done;
    disarm ();
    for k = 1 to workers do
      if terminating.(k) then begin
        Option.iter Domain.join dom.(k);
        start k
      end
    done;
    Gc.minor ();
    Gc.major ();
    (* Every value copied during marking, every root's value. *)
    Array.iter (fun s ->
        List.iter (fun c -> cohorts := c :: !cohorts) s.made;
        Array.iter (fun id ->
            if id >= 0 then check_alive (Printf.sprintf "round %d, value copied" r) id)
          s.hidden_ids) shares;
    let moved = List.concat_map (fun s ->
        List.filter (fun e -> e.expect >= -1) (Array.to_list s.drops)) (Array.to_list shares) in
    List.iter (fun e -> check_root r e) moved;
    List.iter (fun c -> Array.iter (check_root r) c.entries) !cohorts;
    (* A weak root is empty exactly when its value died. *)
    List.iter (fun we ->
        let full = weak_get we.w <> None and alive = Weak.get watch we.wid <> None in
        if full <> alive then
          report "round %d: a weak root reads %s, its value %s" r
            (if full then "full" else "empty") (if alive then "alive" else "dead"))
      !weaks;
    Array.iter (fun s -> forget s.hidden) shares;
    weaks := List.filter (fun we ->
        if Weak.get watch we.wid = None then (weak_delete we.w; false) else true) !weaks;
    (* The roots dropped by modification still exist: they go on living
       in a cohort of their own, until a later round drops them. *)
    if moved <> [] then
      cohorts := { entries = Array.of_list moved; dies = r + 1 + pick 3 } :: !cohorts
  done;
  delays 0 0 0;
  stale_marker false;
  (* Every root deleted, weak ones too; then, maybe, teardown while
     another domain is held in a hook. *)
  List.iter (fun c -> Array.iter (fun e -> delete e.root) c.entries) !cohorts;
  List.iter (fun we -> weak_delete we.w) !weaks;
  if workers > 0 && pick 2 = 0 then begin
    (* Worker 1 makes roots of its own, so that its hooks have pools to
       work on, then collects until it is held at the point; this domain
       then has a thread without lock delete them, and tears down. *)
    let at = if pick 2 = 0 then "stamp switched" else "weak clearing" in
    let made = ref ([||], [||]) in
    post 1 (fun () ->
        made := (Array.init 2000 (fun i -> create i),
                 Array.init 2000 (fun i -> weak_create (ref i)));
        true);
    await 1;
    let mine, wmine = !made in
    set_marking_on false;
    hold (point at) ids.(1) 100 2000;
    post 1 (fun () ->
        for _ = 1 to 20 do Gc.minor (); ignore (Gc.major_slice 0) done;
        Gc.full_major ();
        set_marking_on true;
        true);
    let taken = wait_to_take_hold () in
    Printf.printf "seed %d: teardown while a domain is held at %s: %b\n%!" seed at taken;
    delete_foreign mine 0 (Array.length mine);
    Array.iter weak_delete wmine;
    if taken then hold_go ();
    teardown_now ();
    await 1
  end;
  for k = 1 to workers do
    tasks.(k) <- None;
    set_flag (2 * k) 1;
    Option.iter Domain.join dom.(k)
  done;
  Printf.printf "seed %d: %d rounds, %d values watched, %d lost\n%!" seed rounds !next_id !lost;
  ignore (Sys.opaque_identity ballast);
  !lost

let () =
  match Sys.getenv_opt "BOXROOT_EXPLORE_SEED" with
  | Some s ->
    install_slow_hook ();
    let lost = run (int_of_string s) in
    check (lost = 0) "seed %s: %d values lost" s lost;
    finish (Printf.sprintf "test_explore (seed %s)" s)
  | None ->
    let seeds = String.split_on_char ' '
        (Option.value (Sys.getenv_opt "BOXROOT_EXPLORE_SEEDS") ~default:"1 2 3") in
    let failed = List.filter (fun s ->
        let rc = Sys.command (Printf.sprintf "BOXROOT_EXPLORE_SEED=%s %s" s
                                (Filename.quote Sys.executable_name)) in
        Printf.printf "seed %s: exit code %d\n%!" s rc;
        rc <> 0) seeds in
    if expect_loss then
      check (failed <> []) "the broken build passed every seed (%s)" (String.concat " " seeds)
    else
      check (failed = []) "seeds %s failed" (String.concat " " failed);
    finish "test_explore"
