(* Statistics read while other domains (threads on OCaml 4.14) change
   their pools: two churners fill pools, sometimes collect, and empty
   them, so that pools move between rings and go back to the chunk
   allocator, while the main domain reads the statistics in a loop. Every
   snapshot must be sane (no crash, no hang: a watchdog ends a hung run),
   and exact once the churners have joined. Also: without the domain
   lock, the statistics are refused rather than read unsafely. *)
open Boxroot_test

external watchdog : int -> unit = "stats_race_watchdog"
external refused_without_lock : unit -> bool = "stats_race_refused_without_lock"
external pool_slots : unit -> int = "stats_pool_slots"
external free_pools_kept : unit -> int = "stats_free_pools_kept"

let seconds = env_int "BOXROOT_STATS_RACE_SECONDS" 2
let own_roots = 100
(* More pools than a domain keeps free, so that emptying a batch gives
   pools back to the chunk allocator. *)
let max_batch = (free_pools_kept () + 4) * pool_slots ()

let churn ~seed stop () =
  let rng = Random.State.make [| seed |] in
  let batches = ref 0 in
  while not (Atomic.get stop) do
    let n = 1 + Random.State.int rng max_batch in
    let roots = Array.init n (fun i -> create (ref i)) in
    if Random.State.int rng 4 = 0 then Gc.minor ();
    (* Either order: pools empty front to back, or their counts drop
       below the low mark one by one and they move up their ring. *)
    if Random.State.bool rng then Array.iter delete roots
    else for i = n - 1 downto 0 do delete roots.(i) done;
    incr batches
  done;
  !batches

(* Every counter of the record (all ints) is non-negative. *)
let all_non_negative (s : Boxroot.stats) =
  let r = Obj.repr s in
  let ok = ref true in
  for i = 0 to Obj.size r - 1 do
    if (Obj.obj (Obj.field r i) : int) < 0 then ok := false
  done;
  !ok

(* What is wrong with snapshot [s] (read after [prev], if any). *)
let problems ~prev (s : Boxroot.stats) =
  let bad = ref [] in
  let expect cond fmt = Printf.ksprintf (fun m -> if not cond then bad := m :: !bad) fmt in
  expect (all_non_negative s) "a negative counter";
  expect (s.roots_alive >= own_roots && s.roots_alive <= own_roots + 2 * max_batch)
    "roots_alive = %d, outside [%d, %d]" s.roots_alive own_roots (own_roots + 2 * max_batch);
  expect (s.slots_in_use = s.roots_alive)
    "slots_in_use = %d, roots_alive = %d (no remote deletion here)" s.slots_in_use s.roots_alive;
  let on_rings = s.pools_young + s.pools_old + s.pools_free + s.pools_orphaned in
  expect (on_rings = s.pools_handed_out)
    "pools on rings %d, handed out by the chunk allocator %d" on_rings s.pools_handed_out;
  (match prev with
   | None -> ()
   | Some (p : Boxroot.stats) ->
     expect (s.created >= p.created && s.deleted_local >= p.deleted_local)
       "counts went back: created %d -> %d, deleted_local %d -> %d"
       p.created s.created p.deleted_local s.deleted_local);
  List.rev !bad

let check_snapshot where ~prev s =
  List.iter (fun m -> check false "%s: %s" where m) (problems ~prev s)

let () =
  watchdog (seconds + 60);
  let mine = Array.init own_roots (fun i -> create (ref i)) in
  let stop = Atomic.make false in
  let churners = List.init 2 (fun k -> Par.spawn (churn ~seed:k stop)) in
  let deadline = Unix.gettimeofday () +. float seconds in
  (* Reading on after a bad snapshot (reporting the first few) gives a
     broken read the time to crash or hang, as it would in a program. *)
  let reads = ref 0 and bad = ref 0 and prev = ref None in
  while Unix.gettimeofday () < deadline do
    let s = stats () in
    if problems ~prev:!prev s <> [] then begin
      incr bad;
      if !bad <= 3 then check_snapshot (Printf.sprintf "read %d" !reads) ~prev:!prev s
    end;
    prev := Some s;
    incr reads;
    (* On 4.14 the churners run only when this thread lets them. *)
    if !reads land 63 = 0 then Par.relax ()
  done;
  check (!bad = 0) "%d of %d snapshots were not sane" !bad !reads;
  Atomic.set stop true;
  let batches = List.fold_left (fun acc t -> acc + Par.join t) 0 churners in
  Printf.printf "test_stats_race (%s): %d reads while %d batches churned\n%!"
    Par.kind !reads batches;
  check (batches > 0) "the churners made no batch";
  (* Nobody else runs: exact. *)
  let s = stats () in
  check_snapshot "after join" ~prev:!prev s;
  check (s.roots_alive = own_roots) "after join: roots_alive = %d, expected %d"
    s.roots_alive own_roots;
  check (s.slots_in_use = own_roots) "after join: slots_in_use = %d, expected %d"
    s.slots_in_use own_roots;
  check (s.created = s.deleted_local + own_roots)
    "after join: created %d, deleted_local %d" s.created s.deleted_local;
  check (refused_without_lock ()) "statistics without the domain lock not refused with EPERM";
  Array.iter delete mine;
  check ((stats ()).roots_alive = 0) "roots_alive at the end: %d" (stats ()).roots_alive;
  finish "test_stats_race"
