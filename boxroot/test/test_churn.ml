(* Domain churn: domains are spawned and joined thousands of
   times, each leaving live roots behind in its pools; a terminated
   domain's pools must be adopted and scanned by the survivors, and then
   reused, never leaked.

   Each round spawns a few domains at once. Each child checks and deletes
   or modifies some roots it is handed (created by earlier, now dead,
   domains: remote-domain deletions on orphaned or adopted pools), creates
   roots, deletes some of them, and returns the rest. The parent checks
   every live root after forced collections, frees roots to keep their
   number bounded, and checks the accounting: no orphan left after a
   collection, roots and slots in use as in the model, and no more pools
   handed out than the pools holding live roots plus the free pools one
   domain keeps (FREE_POOLS_KEPT, domain.h).

   On OCaml 4.14 the same runs with systhreads instead of domains.
   BOXROOT_CHURN_DOMAINS: domains in total (default 2_000).
   BOXROOT_TEST_SEED: random seed. *)
open Boxroot_test
module V = Checked_values

let total = env_int "BOXROOT_CHURN_DOMAINS" 2_000
let seed = env_int "BOXROOT_TEST_SEED" 42
let at_once = 3
let max_live = 20_000
let free_pools_kept = 8 (* FREE_POOLS_KEPT in domain.h *)

let live : V.item option array = Array.make max_live None
let nlive = ref 0
let released = V.Released.create ()

let add_live it =
  let rec find i = if live.(i) = None then i else find ((i + 1) mod max_live) in
  let i = find (Random.int max_live) in
  live.(i) <- Some it;
  incr nlive

let take_live () =
  let rec find i = match live.(i) with
    | Some it -> live.(i) <- None; decr nlive; it
    | None -> find ((i + 1) mod max_live) in
  find (Random.int max_live)

let verify where (it : V.item) =
  if not (V.holds (get it.root) it.expect) then
    check false "%s: root does not hold %s" where (V.describe it.expect)

let verify_all where = Array.iter (Option.iter (verify where)) live

(* One child: its work and what it returns to the parent. *)
(* Children do not track released values with Weak arrays: a Weak array
   is an ephemeron of the domain that allocates it, and OCaml 5.3
   mishandles the ephemerons of terminating domains (dangling or
   uncleaned entries; fixed for OCaml 5.5 by ocaml/ocaml#14718, #14722,
   #14734): seen here under TSan as a use-after-free in the runtime's
   ephe_mark and as released values reported alive. Writing into the
   parent's Weak arrays instead is a data race in the runtime
   (caml_ephe_clean). That the children's deletions free their slots is
   checked by the accounting instead (slots in use = live roots). *)
type child_result = { keep : V.item list }

let child ~worker ~seed inbound () =
  let rng = Random.State.make [| seed |] and counter = ref 0 in
  let keep = ref [] in
  List.iter (fun (it : V.item) ->
      if not (V.holds (get it.root) it.expect) then
        failwith ("child: inbound root lost " ^ V.describe it.expect);
      if Random.State.bool rng then delete it.root
      else begin
        let expect = V.random_expected rng ~worker ~counter in
        keep := { V.root = modify it.root (V.make expect); expect } :: !keep
      end) inbound;
  let n = if Random.State.int rng 20 = 0 then 3_000 else Random.State.int rng 400 in
  for _ = 1 to n do
    let it = V.create rng ~worker ~counter in
    if Random.State.int rng 3 = 0 then delete it.root
    else keep := it :: !keep
  done;
  if Random.State.int rng 4 = 0 then Gc.minor ();
  { keep = !keep }

let check_accounting where =
  match Boxroot.stats () with
  | None -> check false "%s: no stats" where
  | Some s ->
    check (s.pools_orphaned = 0) "%s: %d pools still orphaned after a collection"
      where s.pools_orphaned;
    check (s.roots_alive = !nlive) "%s: %d roots alive, model has %d" where s.roots_alive !nlive;
    check (s.slots_in_use = !nlive) "%s: %d slots in use, model has %d" where s.slots_in_use !nlive;
    let pools = Hashtbl.create 64 in
    Array.iter (Option.iter (fun (it : V.item) -> Hashtbl.replace pools (V.pool_of it.root) ())) live;
    let bound = Hashtbl.length pools + free_pools_kept + 1 in
    check (s.pools_handed_out <= bound)
      "%s: %d pools handed out, but only %d hold live roots (bound %d)"
      where s.pools_handed_out (Hashtbl.length pools) bound

let () =
  Random.init seed;
  Printf.printf "test_churn: %d %s, %d at a time, seed %d\n%!" total Par.kind at_once seed;
  let spawned = ref 0 and round = ref 0 and max_pools = ref 0 in
  while !spawned < total do
    incr round;
    let batch = min at_once (total - !spawned) in
    let tasks = List.init batch (fun k ->
        let inbound = List.init (min !nlive (Random.int 30)) (fun _ -> take_live ()) in
        let worker = (!spawned + k) land 1023 in
        Par.spawn (child ~worker ~seed:(Random.bits ()) inbound)) in
    spawned := !spawned + batch;
    List.iter (fun t ->
        let r = Par.join t in
        List.iter add_live r.keep) tasks;
    (* No child runs now: only the parent can scan the children's pools. *)
    if !round mod 25 = 0 then Gc.full_major () else Gc.minor ();
    if !round mod 25 = 0 then verify_all (Printf.sprintf "round %d" !round);
    while !nlive > max_live / 2 do
      let it = take_live () in
      verify "parent" it;
      V.Released.add released it;
      delete it.root
    done;
    if !round mod 50 = 0 then begin
      Gc.full_major ();
      Gc.full_major ();
      verify_all (Printf.sprintf "round %d, checkpoint" !round);
      check_accounting (Printf.sprintf "round %d" !round);
      (match Boxroot.stats () with
       | Some s -> max_pools := max !max_pools s.pools_handed_out
       | None -> ());
    end
  done;
  Gc.full_major ();
  Gc.full_major ();
  verify_all "end";
  check_accounting "end";
  Array.iteri (fun i -> function
      | Some (it : V.item) -> V.Released.add released it; delete it.root; live.(i) <- None
      | None -> ()) live;
  nlive := 0;
  Gc.full_major ();
  Gc.full_major ();
  check_accounting "all deleted";
  let n = V.Released.still_alive released in
  check (n = 0) "%d values released by the parent still alive" n;
  (match Boxroot.stats () with
   | Some s ->
     Printf.printf "test_churn: %d rounds, at most %d pools handed out at a checkpoint, \
                    %d at the end\n" !round !max_pools s.pools_handed_out
   | None -> ());
  print_stats ();
  finish "test_churn"
