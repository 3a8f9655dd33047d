(* Notifying weak roots across domains (weak_notify.c, N2 and N4). Each
   round, two workers (domains on OCaml 5, threads on 4.14) each create
   k notifying roots, keep every other value and drop the rest, and run
   two full major cycles: the dropped ones empty, their notices go to
   the worker's own queue. Worker 0 drains its queue before it
   terminates; worker 1 terminates with its notices queued, which its
   adopter (the main domain) must report after its next collection.
   Then the main domain drops the kept values: they empty in pools it
   adopted, and it reports them.

   Domain.join may return before the worker's termination hook has run
   (test_hazard.ml): until then its pools and notices are its own, and
   whichever domain runs a collection first afterwards adopts them (the
   main domain, or a worker of the next round). So the main domain
   collects and drains until what it expects has come, for up to 20 s,
   and every drain, a worker's too, counts in one table.

   Checks: every word is reported exactly once overall, a kept value's
   never before it is dropped. BOXROOT_WEAK_NOTIFY_ROUNDS (default 10). *)
open Boxroot_test

let rounds = env_int "BOXROOT_WEAK_NOTIFY_ROUNDS" 10
let k = 2_000

type batch = {
  ws : Weak_test.t array;
  kept : int ref option array;
  reported : int list; (* words that the worker's own drain reported *)
}

let worker base ~drains () =
  let vals = Array.init k (fun i -> ref (base + i)) in
  let ws = Array.mapi (fun i v -> Weak_test.create_notifying v (base + i)) vals in
  let kept = Array.mapi (fun i v -> if i mod 2 = 0 then Some v else None) vals in
  Array.fill vals 0 k (ref (-1));
  Gc.full_major (); Gc.full_major ();
  let reported = if drains then List.map snd (Weak_test.drain ()) else [] in
  { ws; kept; reported }

let counts = Hashtbl.create 100_000
let twice = ref 0
let note word =
  if Hashtbl.mem counts word then incr twice else Hashtbl.replace counts word ()

(* Collects and drains until every word of `words` is reported. *)
let await words =
  let t0 = Unix.gettimeofday () in
  let missing () = List.filter (fun w -> not (Hashtbl.mem counts w)) words in
  let rec go () =
    Gc.minor ();
    Gc.full_major ();
    List.iter (fun (_, w) -> note w) (Weak_test.drain ());
    let m = missing () in
    if m <> [] && Unix.gettimeofday () -. t0 < 20. then begin Thread.delay 0.01; go () end
    else List.length m in
  go ()

let () =
  for r = 1 to rounds do
    let base j = (r * 2 + j) * 1_000_000 in
    let w0 = Par.spawn (worker (base 0) ~drains:true)
    and w1 = Par.spawn (worker (base 1) ~drains:false) in
    let b0 = Par.join w0 and b1 = Par.join w1 in
    List.iter note b0.reported;
    let words parity = List.concat_map (fun j ->
        List.init (k / 2) (fun i -> base j + 2 * i + parity)) [ 0; 1 ] in
    let missing = await (words 1) in
    let early = List.length (List.filter (Hashtbl.mem counts) (words 0)) in
    (* Now the kept ones die, in adopted pools. *)
    let ws = Array.append b0.ws b1.ws in
    let missing_kept = await (words 0) in
    Array.iter Weak_test.delete ws;
    check (missing = 0 && missing_kept = 0 && !twice = 0 && early = 0)
      "round %d: %d dropped and %d kept never reported, %d reported twice, %d reported while kept"
      r missing missing_kept !twice early
  done;
  Gc.minor ();
  check ((stats ()).Boxroot.weak_roots_alive = 0) "weak roots left at the end";
  Thread.delay 0.2;
  finish "test_weak_notify_domains"
