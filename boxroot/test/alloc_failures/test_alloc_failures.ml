(* Every allocation of the library fails in turn (testing.h: the k-th
   attempt, at any of its sites), under a workload that uses what can
   allocate: strong and weak roots created, modified (young values into
   old pools: the root moves) and deleted, locally, from another domain
   and from a thread without any lock, on several domains at once, two
   rounds of worker domains that terminate with young and old values in
   their pools (the second round reuses the first one's domain ids),
   minor and major collections and a compaction, and the debug build's
   leak report. For each k, a child process runs the workload with the
   k-th attempt failing (once, or, "persistent", every attempt from the
   k-th on), and checks:
   (every other weak root a notifying one, whose pool has side records:
   weak_notify.c);
   - each boxroot_create, boxroot_weak_create(_notifying) and boxroot_modify that
     failed said ENOMEM, and a failed modify left its root as it was;
   - no value of a root still alive was lost (OCaml's Weak as an oracle:
     only the root keeps it), and the root reads it; every weak root
     whose value is kept reads it, every other weak root reads empty
     after two full major cycles;
   - the statistics count exactly the roots alive, no pool is left
     orphaned, the invariants of the calling domain's rings hold
     (boxroot__testing_check_invariants; each worker checks its own);
   - no crash (the child's exit code).
   The parent first runs the workload without failure to count the
   attempts N, then every k = 0 .. N (a little more: the count varies
   with the collections' timing), both ways; BOXROOT_ALLOC_REPEATS
   times (1), for the timing of collections and domains varies. *)
open Boxroot_test

type weak_root
(* A root, or minus the errno of the failure (read in C, at once). *)
external create : 'a -> int = "af_create"
external modify : root -> 'a -> int = "af_modify"
external weak_create : 'a -> int = "af_weak_create"
external weak_create_notifying : 'a -> int = "af_weak_create_notifying"
external weak_modify : weak_root -> 'a -> int = "af_weak_modify"
external weak_get : weak_root -> Obj.t option = "af_weak_get"
external weak_delete : weak_root -> unit = "af_weak_delete"
external report_leaks : unit -> unit = "af_report_leaks"

(* enum boxroot__alloc_site, bit by bit (testing.h). *)
let site_names = [| "pool"; "chunk"; "chunk map"; "page table"; "side tables"; "directory";
                    "thread key"; "thread specific"; "leak report"; "notify side" |]
let all_sites = alloc_sites_all ()
let () = assert (all_sites = (1 lsl Array.length site_names) - 1)

(* ---- The workload, in a child process ---- *)

(* A root and its value, which only the root keeps: [ref tag], seen
   through a weak pointer. *)
type strong_root = { r : root; tag : int; oracle : Obj.t Weak.t }

(* What a domain made: its strong roots, its weak roots and the value
   kept for each (None: dropped, it must read empty after two full major
   cycles), the operations that failed, and the problems seen
   (Boxroot_test.check is the main domain's). *)
type made = {
  mutable strong : strong_root list;
  mutable weak : (weak_root * Obj.t option) list;
  mutable failed : int;
  mutable problems : string list;
}

let new_made () = { strong = []; weak = []; failed = 0; problems = [] }
let problem m fmt = Printf.ksprintf (fun s -> m.problems <- s :: m.problems) fmt

let failed_with_enomem m what e =
  m.failed <- m.failed + 1;
  if e <> enomem () then
    problem m "%s failed with errno %d, not ENOMEM (%s)" what e (error_string ())

(* [Some root], or None once the failure was counted. *)
let made m what x = if x >= 0 then Some (Obj.magic x) else (failed_with_enomem m what (- x); None)

let watched tag =
  let v = Obj.repr (ref tag) and oracle = Weak.create 1 in
  Weak.set oracle 0 (Some v);
  v, oracle

let strong m tag =
  let v, oracle = watched tag in
  match made m "boxroot_create" (create v) with
  | Some r -> m.strong <- { r; tag; oracle } :: m.strong
  | None -> ()

let notifying = Atomic.make 0
let weak m v ~keep =
  let created =
    if Atomic.fetch_and_add notifying 1 mod 2 = 0 then weak_create v
    else weak_create_notifying v in
  match made m "boxroot_weak_create" created with
  | Some w -> m.weak <- (w, if keep then Some (Obj.repr v) else None) :: m.weak
  | None -> ()

(* Every 7th root to a young value, every 11th to the old value it
   holds: in an old pool, the modification moves the root either way
   (the latter up to BOXROOT_OLD_VALUE_MOVES per minor cycle: api.c),
   and may fail only with ENOMEM, leaving the root as it was. *)
let modify_some m tag =
  let unchanged s =
    if Weak.get s.oracle 0 <> Some (get s.r) then
      problem m "a failed boxroot_modify changed its root";
    s in
  m.strong <- List.mapi (fun i s ->
      if i mod 7 = 0 then begin
        let young, oracle = watched (tag - i) in
        match made m "boxroot_modify" (modify s.r young) with
        | Some r -> { r; tag = tag - i; oracle }
        | None -> unchanged s
      end else if i mod 11 = 3 then begin
        match made m "boxroot_modify" (modify s.r (get s.r)) with
        | Some r -> { s with r }
        | None -> unchanged s
      end else s) m.strong;
  m.weak <- List.mapi (fun i (w, kept) ->
      if i mod 5 <> 0 then (w, kept)
      else begin
        let young = Obj.repr (ref (tag - i)) in
        match made m "boxroot_weak_modify" (weak_modify w young) with
        | Some w' -> (w', Some young)
        | None ->
          (match kept, weak_get w with
           | Some v, Some x when x == v -> ()
           | None, _ -> ()
           | _ -> problem m "a failed boxroot_weak_modify changed its root");
          (w, kept)
      end) m.weak

(* Every 5th root deleted by its owner. *)
let delete_some m =
  m.strong <- List.filteri (fun i s -> i mod 5 <> 2 || (delete s.r; false)) m.strong;
  m.weak <- List.filteri (fun i (w, _) -> i mod 5 <> 2 || (weak_delete w; false)) m.weak

let worker base () =
  let m = new_made () in
  for i = 1 to 2500 do strong m (base + i) done;
  for i = 1 to 1500 do weak m (ref (base + i)) ~keep:(i mod 2 = 0) done;
  Gc.minor ();
  modify_some m (- base);
  delete_some m;
  (* Young when the domain terminates: the adopter promotes them. *)
  for i = 1 to 2500 do strong m (base + 10_000 + i) done;
  for i = 1 to 1000 do weak m (ref (base + 10_000 + i)) ~keep:(i mod 2 = 0) done;
  if not (check_invariants ()) then problem m "a worker's invariants were not checked";
  m

let workload () =
  let main = new_made () in
  for i = 1 to 3000 do strong main i done;
  for i = 1 to 1000 do weak main (ref i) ~keep:(i mod 3 = 0) done;
  (* Workers are spawned at the start of a cycle (below), where OCaml
     5's runtime counts them among the domains that mark ephemerons: a
     domain created in a later phase of a cycle and terminated within it
     can leave that count below zero (runtime/major_gc.c,
     ephe_cycle_info.num_domains_todo: seen at -1 on OCaml 5.3.0, the
     runtime looping over major slices), and the cycle then never
     ends. *)
  Gc.full_major ();
  let all = ref [main] in
  for round = 1 to 2 do
    let workers = List.init 2 (fun k -> Par.spawn (worker ((2 * round + k) * 100_000))) in
    for i = 1 to 1000 do strong main (- round * 10_000 - i) done;
    Gc.minor ();
    let made = List.map Par.join workers in
    (* A third of each worker's roots deleted from this domain, a few of
       them from a thread without any lock. *)
    List.iter (fun m ->
        m.strong <- List.filteri (fun i s ->
            i mod 3 <> 0
            || ((if i mod 1500 = 0 then delete_foreign_thread s.r else delete s.r); false))
            m.strong;
        m.weak <- List.filteri (fun i (w, _) -> i mod 3 <> 0 || (weak_delete w; false)) m.weak)
      made;
    all := made @ !all;
    Gc.full_major ()
  done;
  modify_some main (-1_000_000);
  delete_some main;
  Gc.compact ();
  report_leaks ();
  Gc.full_major ();
  Gc.full_major ();
  let strong_alive = ref 0 and weak_alive = ref 0 and failed = ref 0 in
  List.iter (fun m ->
      failed := !failed + m.failed;
      List.iter (fun p -> check false "%s" p) m.problems;
      List.iter (fun s ->
          incr strong_alive;
          match Weak.get s.oracle 0 with
          | None -> check false "the value %d of a root was lost" s.tag
          | Some v ->
            check (get s.r == v && !(Obj.obj v : int ref) = s.tag)
              "a root does not read its value %d" s.tag) m.strong;
      List.iter (fun (w, kept) ->
          incr weak_alive;
          match kept, weak_get w with
          | Some v, Some x -> check (x == v) "a weak root reads another value"
          | Some _, None -> check false "a weak root whose value is kept reads empty"
          | None, Some _ -> check false "a weak root reads a value dead two cycles ago"
          | None, None -> ()) m.weak) !all;
  let s = stats () in
  check (s.roots_alive = !strong_alive) "%d roots alive, %d expected" s.roots_alive !strong_alive;
  check (s.weak_roots_alive = !weak_alive) "%d weak roots alive, %d expected"
    s.weak_roots_alive !weak_alive;
  check (s.pools_orphaned = 0) "%d pools orphaned" s.pools_orphaned;
  check (check_invariants ()) "the invariants were not checked";
  List.iter (fun m ->
      List.iter (fun s -> delete s.r) m.strong;
      List.iter (fun (w, _) -> weak_delete w) m.weak) !all;
  Gc.full_major ();
  let s = stats () in
  check (s.roots_alive = 0 && s.weak_roots_alive = 0) "%d roots and %d weak roots left"
    s.roots_alive s.weak_roots_alive;
  !failed

let child spec =
  (match String.split_on_char ',' spec with
   | [k; persistent] -> fail_allocations all_sites (int_of_string k) (persistent = "1")
   | _ -> ());
  let failed_ops = workload () in
  let injected = ref 0 in
  Array.iteri (fun i _ -> if allocation_failures (1 lsl i) > 0 then injected := !injected lor (1 lsl i))
    site_names;
  Printf.printf "ALLOC attempts %d failed %d ops %d sites %d per-site %s\n"
    (allocation_attempts all_sites) (allocation_failures all_sites) failed_ops !injected
    (String.concat "," (Array.to_list (Array.mapi (fun i _ ->
         string_of_int (allocation_attempts (1 lsl i))) site_names)));
  finish "test_alloc_failures (child)"

(* ---- The sweep ---- *)

let read_file name =
  let ic = open_in_bin name in
  let s = really_input_string ic (in_channel_length ic) in
  close_in ic;
  s

(* The child's summary line: attempts, injected failures, failed
   operations, the sites that failed (a mask), attempts per site. *)
let summary out =
  let line = List.find_opt (fun l -> String.length l > 6 && String.sub l 0 6 = "ALLOC ")
      (String.split_on_char '\n' out) in
  Option.map (fun l -> Scanf.sscanf l "ALLOC attempts %d failed %d ops %d sites %d per-site %s"
                 (fun a f o s p -> a, f, o, s, p)) line

(* A child normally takes well under a second. One that is still running
   after [child_seconds] is killed and run again, once: the runtime's
   own hang above can still strike a worker spawned at a cycle's start
   that outlives its phase; a child that hangs twice is a failure. *)
let child_seconds = 60
let killed = 137 (* timeout -s KILL *)

let sweep () =
  let exe = Sys.executable_name and log = Filename.temp_file "alloc_failures" ".log" in
  let retried = ref 0 in
  let run spec =
    let once () =
      Sys.command (Printf.sprintf "BOXROOT_ALLOC_FAIL=%s timeout -s KILL %d %s > %s 2>&1" spec
                     child_seconds (Filename.quote exe) (Filename.quote log)) in
    let rc = match once () with
      | rc when rc = killed -> incr retried; once ()
      | rc -> rc in
    let out = read_file log in
    rc, out, summary out in
  let t0 = Unix.gettimeofday () in
  let rc, out, base = run "none" in
  check (rc = 0) "the workload fails without any failure injected:\n%s" out;
  let n, per_site = match base with Some (a, _, _, _, p) -> a, p | None -> 0, "" in
  check (n > 0) "no allocation attempt counted";
  let repeats = env_int "BOXROOT_ALLOC_REPEATS" 1 in
  let last = n + n / 10 + 2 in
  let runs = ref 0 and injected_runs = ref 0 and sites = ref 0 and ops = ref 0 in
  let one k persistent =
    incr runs;
    let rc, out, s = run (Printf.sprintf "%d,%d" k (if persistent then 1 else 0)) in
    (match s with
     | Some (_, f, o, m, _) ->
       if f > 0 then incr injected_runs;
       sites := !sites lor m;
       ops := !ops + o
     | None -> ());
    if rc <> 0 || s = None then begin
      let lines = String.split_on_char '\n' out in
      check false "k = %d%s: exit code %d:\n%s" k (if persistent then ", persistent" else "") rc
        (String.concat "\n" (List.filteri (fun i _ -> i < 30) lines))
    end in
  for _ = 1 to repeats do
    for k = 0 to last do one k false; one k true done
  done;
  let covered = List.filteri (fun i _ -> !sites land (1 lsl i) <> 0) (Array.to_list site_names) in
  Printf.printf "alloc failures: %d attempts without failure (per site, %s: %s); %d runs \
                 (k = 0..%d, the k-th failing once or from then on, %d times), %d with a \
                 failure injected, %d operations failed with ENOMEM; sites failed: %s; \
                 %d children hung once and were run again; %.1f s\n%!"
    n (String.concat ", " (Array.to_list site_names)) per_site !runs last repeats
    !injected_runs !ops (String.concat ", " covered) !retried (Unix.gettimeofday () -. t0);
  Sys.remove log

let () =
  match Sys.getenv_opt "BOXROOT_ALLOC_FAIL" with
  | Some "none" -> child "none"
  | Some spec -> child spec
  | None -> sweep (); finish "test_alloc_failures"
