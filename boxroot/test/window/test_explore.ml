(* The window explorer (OCaml 5): the protocols' hazards (marking.c,
   remote.c, weak.c) across two or three domains, with seeded random
   delays and yields at every window point of the test build (window.h),
   and with the environment varied at random.

   A run is a number of rounds, one major cycle each, at least. Roots
   live in cohorts, created together by one domain and dropped together
   some rounds later, so that some pools stay untouched for many cycles
   (S: the aging hand). In each round, during marking, every domain takes
   a share of the roots due, copies each root's value into a block it
   allocated during marking (born marked, never scanned), then drops the
   root in a random way: deleted by its owner, by another domain, by a
   thread without any lock, or modified to an immediate or to a young
   value (M3). It also reads a share of the weak roots into that block
   (W4). At the end of the round, every value copied must still be
   alive, every live root must hold its value (a weak array watches
   them all), and a weak root must read empty exactly when its value
   died (W3, W5).

   Events (each round has one focus, in turn: see [focus]; the rest is
   drawn for the round or the run):
   - a slow root-darkening hook on one domain, while the others act (the
     window of M5 on OCaml 5.5); the acting domain may first finish its
     own marking and snapshot a pool of its own (M4's flag dropped), or
     be a new domain whose state could not be allocated (its hook
     returns early: the stamp switch must not);
   - roots deleted outside marking (stamps made current, S);
   - a domain that terminates after its share (orphans adopted during
     marking: M1, M3), or that creates cohorts during marking (pools that
     join then: M1), or that grows its directory during marking and then
     drops older cohorts of its own, whose pools another domain takes
     and grows in that cycle (retired blocks: M1, M2);
   - directories that cannot grow for some rounds (M0, S: unlisted and
     relisted pools), cohorts dying during and right after;
   - a cycle count that crosses 2^32 (M4, S, W3);
   - a stale marker of another domain, emulated (M1; testing.h);
   - teardown, at the end, while another domain is held in a hook
     (compat_ocaml5.c).
   Every domain has ballast ahead of its directory, so that markers lag.

   A run is a child process: the test build's checks abort it on a
   broken invariant (the header check of M1 at each cycle start among
   them). BOXROOT_EXPLORE_SEEDS (default "1 2 3") are the runs,
   BOXROOT_EXPLORE_ROUNDS (default 14) their length. With
   BOXROOT_HAZARD_EXPECT_LOSS=1 (a broken build), some run must lose a
   value or fail. *)
open Boxroot_test

external install_slow_hook : unit -> unit = "window_install_slow_hook"
external arm_domains : int list -> int -> unit = "window_arm_domains"
external disarm : unit -> unit = "window_disarm"
external set_marking_on : bool -> unit = "window_set_marking_on"
external wait_for_window : unit -> bool = "window_wait_for_window"
external set_flag : int -> int -> unit = "window_set_flag"
external get_flag : int -> int = "window_get_flag"
external wait_flag : int -> int -> unit = "window_wait_flag"
external spin : int -> unit = "window_spin"
external delays : int -> int -> int -> unit = "window_delays"
external weak_create : 'a -> int = "window_weak_create"
external weak_get : int -> Obj.t option = "window_weak_get"
external weak_delete : int -> unit = "window_weak_delete"
external forget : Obj.t array -> unit = "hazard_forget"
external delete_foreign : root array -> int -> int -> unit = "hazard_delete_foreign"
external finish_marking : unit -> unit = "window_finish_marking"
external root_state : root -> int = "window_root_state"
external hold : int -> int -> int -> int -> unit = "window_hold"
external wait_to_take_hold : unit -> bool = "window_wait_to_take_hold"
external hold_go : unit -> unit = "window_hold_go"
external point : string -> int = "window_point_of_name"
external teardown_now : unit -> unit = "window_teardown"
external point_visits : int -> int = "window_point_visits"
external point_name : int -> string = "window_point_name"
external waits_mark : bool -> unit = "window_waits_mark"
external phase : unit -> string = "hazard_phase"

let expect_loss = env_int "BOXROOT_HAZARD_EXPECT_LOSS" 0 = 1
let rounds = env_int "BOXROOT_EXPLORE_ROUNDS" 14
let window_opens = Sys.ocaml_release.Sys.minor >= 5
(* A run's exit code when the teardown's hold was never taken: a
   failure of the driver, for a broken build too. *)
let unreached_exit = 3
let unreached = ref false

(* ---- The population ---- *)

(* A root's value is [ref id], watched by [watch.(id)]; [expect] is the
   id of the value it must hold, -1 once it holds an immediate, -2 once
   deleted. *)
type entry = { mutable root : root; mutable expect : int }
type cohort = { entries : entry array; dies : int; maker : int }

let watch = Weak.create 8_000_000
let next_id = Atomic.make 0
let new_value () =
  let id = Atomic.fetch_and_add next_id 1 in
  let v = ref id in
  Weak.set watch id (Some (Obj.repr v));
  id, v

let make_cohort ~maker ~size ~dies =
  { entries = Array.init size (fun _ ->
        let id, v = new_value () in
        { root = create v; expect = id });
    dies; maker }

type weak_entry = { w : int; wid : int }

(* ---- Worker domains: slot k = 1, 2 ----
   Each waits for a task in C (window_wait_flag: no major slice that
   would need a section of its own, so that it can run in M5's window),
   runs it, and answers. Flag 2k: a task posted; 2k+1: done. A task
   returns false to end its domain. *)
let tasks : (unit -> bool) option array = Array.make 3 None
let worker k () =
  let ballast = install_ballast ~control:false in
  let go_on = ref true in
  while !go_on do
    wait_flag (2 * k) 1;
    set_flag (2 * k) 0;
    (match tasks.(k) with
     | Some f -> go_on := f ()
     | None -> go_on := false);
    set_flag (2 * k + 1) 1
  done;
  ignore (Sys.opaque_identity ballast)

let post k f = tasks.(k) <- Some f; set_flag (2 * k + 1) 0; set_flag (2 * k) 1
let await k = wait_flag (2 * k + 1) 1
let on k f = (* runs [f] on slot k (0: here), returns its result *)
  if k = 0 then f () else begin
    let r = ref None in
    post k (fun () -> r := Some (f ()); true);
    await k;
    Option.get !r
  end

(* ---- One domain's share of a round, during marking ---- *)

type share = {
  drops : entry array;
  reads : weak_entry array;
  mutable hidden : Obj.t array;   (* the copies, allocated during marking *)
  mutable hidden_ids : int array; (* their values' ids, or -1 *)
  mutable how : string array;     (* how each was dropped, for reports *)
}

let act ?(can_create = true) rng share =
  let n = Array.length share.drops and m = Array.length share.reads in
  let hidden = Array.make (n + m + 1) (Obj.repr 0) in
  let ids = Array.make (n + m) (-1) in
  share.hidden <- hidden;
  share.hidden_ids <- ids;
  let how = Array.make (n + m) "" in
  share.how <- how;
  Array.iteri (fun i e ->
      if e.expect >= 0 then begin hidden.(i) <- get e.root; ids.(i) <- e.expect end)
    share.drops;
  let foreign = ref [] in
  Array.iteri (fun i e ->
      if e.expect >= -1 then
      let st = root_state e.root in
      let op = Random.State.int rng 5 in
      how.(i) <- Printf.sprintf "%s by domain %d of a root of domain %d (pool %slisted, stamp %scurrent)"
          (match op with 0 | 1 -> "deleted" | 2 -> "deleted without lock" | 3 -> "modified to 0"
                       | _ -> if can_create then "modified to a young value" else "modified to 0")
          (domain_id ()) (st / 8) (if st land 4 <> 0 then "" else "not ")
          (if st land 2 <> 0 then "" else "not ");
      match op with
      | 0 | 1 -> delete e.root; e.expect <- -2
      | 2 -> foreign := e.root :: !foreign; e.expect <- -2
      | 3 -> e.root <- modify e.root 0; e.expect <- -1
      | _ when not can_create -> e.root <- modify e.root 0; e.expect <- -1
      | _ ->
        let id, v = new_value () in
        e.root <- modify e.root v; e.expect <- id)
    share.drops;
  let f = Array.of_list !foreign in
  if Array.length f > 0 then delete_foreign f 0 (Array.length f);
  Array.iteri (fun i we ->
      match weak_get we.w with
      | Some v -> hidden.(n + i) <- v; ids.(n + i) <- we.wid; how.(n + i) <- "read from a weak root"
      | None -> ())
    share.reads

(* ---- Checks ---- *)

let lost = ref 0
(* A broken build's run stops at its first loss. *)
let report fmt = Printf.ksprintf (fun s ->
    incr lost;
    Printf.printf "LOST: %s\n%!" s;
    if expect_loss then exit 1) fmt
let check_alive what id =
  if Weak.get watch id = None then report "%s: value %d collected" what id
let check_root r e =
  if e.expect >= 0 then begin
    check_alive (Printf.sprintf "round %d, root" r) e.expect;
    if Weak.get watch e.expect <> None
    && !(Obj.obj (get e.root) : int ref) <> e.expect then
      report "round %d: a root holds another value" r
  end

(* ---- A run ---- *)

(* Each round has a focus, in turn, among the events that need a few
   things to happen together; the rest is drawn at random. *)
type focus =
  | Early_leaver  (* M5: this domain slow; worker 1 finishes its marking
                     and snapshots a pool of its own first (flag down) *)
  | Termination   (* worker 1 terminates after its share (its
                     pools adopted during marking) *)
  | Stateless     (* M5: this domain slow, its stamps made current
                     outside marking, and a domain that owns no pool
                     (its hook has nothing to darken) takes a part of
                     this domain's share *)
  | Growth        (* worker 1 grows its directory during marking, then
                     frees older pools, which a new domain takes *)

let focus_of n = match n mod 4 with
  | 0 -> Early_leaver | 1 -> Termination | 2 -> Stateless | _ -> Growth

let retired_directory_blocks_now () = retired_directory_blocks ()

let run seed =
  let rng = Random.State.make [| seed |] in
  let pick n = Random.State.int rng n in
  let chance p = Random.State.float rng 1.0 < p in
  (* A broken build's run: more ballast here (the marker lags longer),
     and the run stops at the first loss anyway. *)
  let ballast = install_ballast ~control:expect_loss in
  (* Seeds 1, 2, 3, 4...: two domains and a cycle count crossing 2^32;
     three domains and directories starved; two domains; three. *)
  let workers = if seed mod 2 = 1 then 1 else 2 in
  let domains = workers + 1 in
  let wrap = seed mod 4 = 1 in
  let starve_from, starve_until = if seed mod 4 = 2 then 2, 10 else max_int, max_int in
  let permille = env_int "BOXROOT_EXPLORE_PERMILLE" (20 + pick 150) and max_us = 50 + pick 1500 in
  Printf.printf "seed %d: %d domains, cycles across 2^32 %b, directories starved in \
                 rounds %s, delays %d/1000 up to %d us\n%!"
    seed domains wrap
    (if starve_from = max_int then "none"
     else Printf.sprintf "%d-%d" starve_from (starve_until - 1)) permille max_us;
  if wrap then
    (* Cycle 2^32 - 1 about half-way (a round takes a cycle or two). *)
    cycle_offset ((1 lsl 32) - 1 - rounds / 2 - (Gc.quick_stat ()).Gc.major_collections);
  stale_marker true;
  let ids = Array.make 3 0 and dom = Array.make 3 None in
  let start k =
    set_flag (2 * k) 0;
    set_flag (2 * k + 1) 0;
    dom.(k) <- Some (Domain.spawn (worker k));
    ids.(k) <- on k domain_id in
  let stop k =
    tasks.(k) <- None;
    set_flag (2 * k) 1;
    Option.iter Domain.join dom.(k) in
  for k = 1 to workers do start k done;
  ids.(0) <- domain_id ();
  let cohorts = ref [] and weaks = ref [] and lingering = ref None in
  delays seed permille max_us;
  for r = 1 to rounds do
    let focus = focus_of (r + seed) in
    Printf.printf "seed %d, round %d: %d cohorts, %d weak roots, %d values so far\n%!"
      seed r (List.length !cohorts) (List.length !weaks) (Atomic.get next_id);
    let starving = r >= starve_from && r < starve_until in
    if r = starve_from then fail_directory_growth_after 0;
    if r = starve_until then fail_directory_growth_after (-1);
    (* Outside marking: cohorts for later rounds, by each domain. While
       starved, more pools than a directory's first block lists, and
       lifetimes that end during the starvation or right after it. *)
    for k = 0 to workers do
      (* While starved, this domain's cohort takes a pool of its own
         (2,000 slots), joined with this cycle's stamp, and dies when the
         directories can grow again: pools of every stamp, listed again
         in one cycle. *)
      let size =
        if r = starve_from then 140_000
        else if starving && k = 0 then 2_000 + pick 1000 else 200 + pick 3000 in
      let dies =
        if starving && (k = 0 || chance 0.5) then starve_until
        else if starving then r + 1 + pick 14 else r + 1 + pick 12 in
      let c = on k (fun () -> make_cohort ~maker:k ~size ~dies) in
      cohorts := c :: !cohorts
    done;
    (* Roots that worker 1 drops itself during marking: a pool to
       snapshot, or pools to give back after its directory grew. *)
    let own_drops = match focus with
      | Early_leaver ->
        (on 1 (fun () -> make_cohort ~maker:1 ~size:16 ~dies:max_int)).entries
      | Growth ->
        (on 1 (fun () -> make_cohort ~maker:1 ~size:20_000 ~dies:max_int)).entries
      | _ -> [||] in
    (* For a broken build, ballast of worker 1 for this cycle, so that
       its marker is still at work when it gives its pools back (a
       stale marker, emulated, needs one). *)
    let growth_ballast =
      if focus = Growth && expect_loss then Some (on 1 (fun () -> install_ballast ~control:true))
      else None in
    (* Arrays for the roots that worker 1 grows its directory with,
       allocated now: none during marking. *)
    let growth_arrays =
      if focus = Growth then on 1 (fun () -> Array.init 10 (fun _ -> Array.make 20_000 (create 0)))
      else [||] in
    (* Weak roots of values that only they will reach this cycle. *)
    let keep = Array.init (100 + pick 2000) (fun _ -> new_value ()) in
    let fresh_weak = Array.map (fun (id, v) -> { w = weak_create v; wid = id }) keep in
    weaks := Array.to_list fresh_weak @ !weaks;
    (* The previous round finished its cycle: on OCaml 5.5 the next one
       sweeps only, until this round drives it into marking (if the work
       above started marking already, that cycle is finished too), and a
       minor collection's hooks lower the flag (M4). Deletions then,
       outside marking, make pools' stamps current (S). Rounds thus cover
       consecutive cycles, mostly (before 5.5, the next cycle is marking
       already, and the deletions below run the barrier). *)
    let rec settle k =
      if window_opens && marking_started () && k > 0 then begin
        Gc.major ();
        settle (k - 1)
      end else begin
        Gc.minor ();
        if window_opens && marking_started () && k > 0 then settle (k - 1)
      end in
    settle 3;
    List.iter (fun c ->
        if (focus = Stateless && c.maker = 0) || chance 0.2 then
          on c.maker (fun () ->
              Array.iteri (fun i e ->
                  if i mod 500 = 0 && e.expect >= 0 then begin
                    let v = get e.root in
                    delete e.root;
                    e.root <- create v
                  end) c.entries))
      !cohorts;
    Array.iteri (fun i _ -> keep.(i) <- (-1, ref 0)) keep;
    (* The shares. *)
    let due, later = List.partition (fun c -> c.dies <= r) !cohorts in
    cohorts := later;
    let deal = Array.make domains [] and wdeal = Array.make domains [] in
    List.iter (fun c -> Array.iter (fun e ->
        let k = pick domains in deal.(k) <- e :: deal.(k)) c.entries) due;
    List.iter (fun we -> if chance 0.3 then
                  let k = pick domains in wdeal.(k) <- we :: wdeal.(k)) !weaks;
    let shares = Array.init domains (fun k ->
        { drops = Array.of_list deal.(k); reads = Array.of_list wdeal.(k);
          hidden = [||]; hidden_ids = [||]; how = [||] }) in
    (* This round's events. *)
    let slow = match focus with
      | Early_leaver | Stateless -> 0
      | _ -> if chance 0.5 then pick domains else -1 in
    let terminating = Array.init domains (fun k ->
        k > 0 && (if k = 1 then focus = Termination else chance 0.2)) in
    let made = Array.make domains [] and grown = Array.make domains [] in
    let inside = Array.make domains false in
    set_marking_on false;
    (* The stateless domain takes half of this domain's share, and
       modifies those roots to immediates (it creates none). *)
    let helper_share =
      let d = shares.(0).drops in
      let h = Array.length d / 2 in
      { drops = Array.sub d 0 h; reads = [||]; hidden = [||]; hidden_ids = [||]; how = [||] } in
    let shares =
      if focus <> Stateless then shares
      else Array.mapi (fun k s ->
          if k > 0 then s
          else { s with drops = Array.sub s.drops (Array.length helper_share.drops)
                            (Array.length s.drops - Array.length helper_share.drops) })
          shares in
    let helper =
      if focus <> Stateless then None
      else begin
        let sd = pick 1_000_000 in
        Some (Domain.spawn (fun () ->
            let wr = Random.State.make [| sd |] in
            let inside = wait_for_window () in
            spin (Random.State.int wr 30);
            act ~can_create:false wr helper_share;
            inside))
      end in
    for k = 1 to workers do
      let can_create = true in
      let s = shares.(k) and sd = pick 1_000_000 and make_during = can_create && pick 3 = 0
      and early = k = 1 && focus = Early_leaver && can_create
      and grows = k = 1 && focus = Growth && can_create
      and term = terminating.(k) in
      post k (fun () ->
          let wr = Random.State.make [| sd |] in
          inside.(k) <- wait_for_window ();
          spin (Random.State.int wr 30);
          if early then begin
            finish_marking ();
            Array.iter (fun e -> delete e.root) own_drops
          end;
          if grows then begin
            (* Roots of immediates: no allocation, hence no marking work
               of its own before it gives its older pools back. *)
            let before = retired_directory_blocks_now () and n = ref 0 in
            while retired_directory_blocks_now () = before && !n < Array.length growth_arrays do
              let batch = growth_arrays.(!n) in
              incr n;
              for i = 1 to 19_999 do batch.(i) <- create 0 done;
              grown.(k) <- batch :: grown.(k)
            done;
            (* The first root of each array was made with it. *)
            Array.iteri (fun i a -> if i >= !n then delete a.(0)) growth_arrays;
            Array.iter (fun e -> delete e.root) own_drops
          end;
          act ~can_create wr s;
          if make_during then
            made.(k) <- make_cohort ~maker:k ~size:(Random.State.int wr 2000) ~dies:max_int
                        :: made.(k);
          not term)
    done;
    (* With a stateless domain, every other domain is slow: no hook with
       something to darken runs before it acts. *)
    if focus = Stateless then arm_domains (List.init domains (fun k -> ids.(k))) (5 + pick 60)
    else if slow >= 0 then arm_domains [ids.(slow)] (5 + pick 60);
    if not (drive_into_marking ()) then report "round %d: the runtime never started marking" r;
    (* The domain left from the previous round has seen this cycle start. *)
    (match !lingering with
     | Some d -> set_flag 12 1; Domain.join d; lingering := None
     | None -> ());
    act rng shares.(0);
    if chance 0.5 then made.(0) <- [make_cohort ~maker:0 ~size:(pick 3000) ~dies:max_int];
    set_marking_on true;
    for k = 1 to workers do await k done;
    let helper_inside = match helper with
      | Some d -> Domain.join d
      | None -> false in
    disarm ();
    print_string @@ Printf.sprintf "seed %d, round %d: %s, slow %d, in the window:%s%s" seed r
      (match focus with Early_leaver -> "early leaver" | Termination -> "termination"
                      | Stateless -> "stateless" | Growth -> "growth") slow
      (String.concat "" (List.init workers (fun k -> if inside.(k + 1) then Printf.sprintf " %d" (k + 1) else "")))
      (match helper with
       | Some _ -> Printf.sprintf ", stateless domain%s" (if helper_inside then " in the window" else "")
       | None -> "")
    ^ String.concat "" (List.init workers (fun k ->
        if terminating.(k + 1) then Printf.sprintf ", worker %d terminates" (k + 1) else ""))
    ^ "\n";
    flush stdout;
    (* Pools that the workers gave back, taken and grown while the cycle
       may still mark: here, and, after a growth, by a new domain, which
       takes its first pools from the chunk allocator (the last given
       back first). *)
    made.(0) <- make_cohort ~maker:0 ~size:(500 + pick 4000) ~dies:(r + 1 + pick 4) :: made.(0);
    if focus = Growth then begin
      (* It takes one pool, and lives on until the next cycle start's
         check of the headers it lists (marking.c, M1). *)
      let made_here = Atomic.make None in
      set_flag 12 0;
      lingering := Some (Domain.spawn (fun () ->
          Atomic.set made_here (Some (make_cohort ~maker:0 ~size:100 ~dies:(r + 2))) ;
          wait_flag 12 1));
      while Atomic.get made_here = None do Domain.cpu_relax () done;
      made.(0) <- Option.get (Atomic.get made_here) :: made.(0)
    end;
    for k = 1 to workers do
      if terminating.(k) then begin
        Option.iter Domain.join dom.(k);
        start k
      end
    done;
    Gc.minor ();
    Gc.major ();
    Array.iter (List.iter (Array.iter delete)) grown;
    ignore (Sys.opaque_identity growth_ballast);
    (* Every value copied during marking, every root's value. *)
    Array.iteri (fun k s ->
        cohorts := made.(k) @ !cohorts;
        Array.iteri (fun i id ->
            if id >= 0 then
              check_alive (Printf.sprintf "round %d, value copied, then %s" r s.how.(i)) id)
          s.hidden_ids) shares;
    let shares = if focus = Stateless then Array.append shares [| helper_share |] else shares in
    if focus = Stateless then
      Array.iteri (fun i id ->
          if id >= 0 then
            check_alive (Printf.sprintf "round %d, value copied, then %s" r helper_share.how.(i)) id)
        helper_share.hidden_ids;
    let moved = List.concat_map (fun s ->
        List.filter (fun e -> e.expect >= -1) (Array.to_list s.drops)) (Array.to_list shares) in
    List.iter (check_root r) moved;
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
    (* Roots dropped by modification go on living, in a cohort of their
       own (made by this domain: any domain may modify them). *)
    if moved <> [] then
      cohorts := { entries = Array.of_list moved; dies = r + 1 + pick 3; maker = 0 }
                 :: !cohorts
  done;
  (match !lingering with Some d -> set_flag 12 1; Domain.join d | None -> ());
  delays 0 0 0;
  stale_marker false;
  List.iter (fun c -> Array.iter (fun e -> if e.expect >= -1 then delete e.root) c.entries)
    !cohorts;
  List.iter (fun we -> weak_delete we.w) !weaks;
  (* Teardown while worker 1 is held in a hook: its own roots give its
     hooks pools to work on; a thread without any lock deletes them
     while it is held. *)
  let at =
    if seed mod 2 = 0 || Sys.ocaml_release.Sys.minor < 5 then "weak clearing"
    else "stamp switched" in
  let mine, wmine = on 1 (fun () ->
      (Array.init 2000 (fun i -> create i), Array.init 2000 (fun i -> weak_create (ref i)))) in
  set_marking_on false;
  set_flag 10 0;
  (* The domains that wait run slices meanwhile (window_waits_mark):
     the cycle reaches its clearing without waiting for the slices that
     worker 1's allocation paces (minutes on a busy machine, with the
     ballasts). *)
  waits_mark true;
  hold (point at) ids.(1) 100 2000;
  post 1 (fun () ->
      (* Collections of its own, driven as drive_into_marking does, so
         that the cycle starts marking in a minor collection (this
         domain may leave it early on OCaml 5.5) and clears in its own
         slices, where this domain can take it (a visit inside a section
         that keeps every domain is given up after a while). A minor
         collection at every step kept the main marking phase from
         ending beside busy loops (a run stuck until its 15-minute
         timeout): the waiting domains mark their ephemerons only in the
         slices they run at the end of a section, which the next section
         interrupted. One at every 8th step, and whenever marking is to
         start. Slices with a budget of their own: an automatic one's
         is what allocation is ahead of the work counter, which the
         waiting domains' marking pushes ahead (window_waits_mark). *)
      let i = ref 0 in
      while get_flag 10 = 0 && !i < 100_000 do
        incr i;
        ignore (Sys.opaque_identity (Array.make 1000 0));
        ignore (Gc.major_slice 10_000);
        if !i mod 8 = 0 || Sys.ocaml_release.Sys.minor >= 5 && not (marking_started ()) then begin
          request_marking ();
          Gc.minor ()
        end
      done;
      set_marking_on true;
      true);
  let taken = wait_to_take_hold () in
  set_flag 10 1;
  Printf.printf "seed %d: teardown, worker 1 held at %s: %b\n%!" seed at taken;
  if not taken then begin
    (* Not a loss: a broken build's seed must not pass for this. *)
    Printf.printf "seed %d: FAIL: worker 1 never reached the point %S (GC phase: %s)\n%!"
      seed at (phase ());
    unreached := true
  end;
  delete_foreign mine 0 (Array.length mine);
  Array.iter weak_delete wmine;
  if taken then hold_go ();
  teardown_now ();
  await 1;
  waits_mark false;
  for k = 1 to workers do stop k done;
  Printf.printf "seed %d: window points visited:%s\n%!" seed
    (String.concat "" (List.init 17 (fun i ->
         Printf.sprintf " %s %d," (point_name i) (point_visits i))));
  Printf.printf "seed %d: %d rounds, %d values watched, %d lost\n%!"
    seed rounds (Atomic.get next_id) !lost;
  ignore (Sys.opaque_identity ballast);
  !lost

let () =
  match Sys.getenv_opt "BOXROOT_EXPLORE_SEED" with
  | Some s ->
    install_slow_hook ();
    let lost = run (int_of_string s) in
    if !unreached then exit unreached_exit;
    check (lost = 0) "seed %s: %d values lost" s lost;
    finish (Printf.sprintf "test_explore (seed %s)" s)
  | None ->
    let seeds = String.split_on_char ' '
        (Option.value (Sys.getenv_opt "BOXROOT_EXPLORE_SEEDS") ~default:"1 2 3") in
    (* A broken build's seeds stop at the first that catches it. *)
    let failed = List.fold_left (fun failed s ->
        if expect_loss && failed <> [] then failed
        else begin
          let rc = Sys.command (Printf.sprintf "BOXROOT_EXPLORE_SEED=%s %s" s
                                  (Filename.quote Sys.executable_name)) in
          Printf.printf "seed %s: exit code %d\n%!" s rc;
          check (rc <> unreached_exit) "seed %s: the teardown's point was never reached" s;
          if rc <> 0 && rc <> unreached_exit then s :: failed else failed
        end) [] seeds in
    if expect_loss then
      check (failed <> []) "the broken build passed every seed (%s)" (String.concat " " seeds)
    else
      check (failed = []) "seeds %s failed" (String.concat " " failed);
    finish "test_explore"
