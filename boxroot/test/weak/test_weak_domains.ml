(* Weak roots across domains (weak.c: deletion, domains): domains that
   create weak roots and terminate (their pools are orphaned, adopted and
   cleared by the others), weak roots deleted by other domains and by C
   threads holding no lock while collections clear them, and reads from
   other domains than the owner's. On OCaml 4.14, Par runs systhreads:
   the same code, one domain.

   Each round, `width` workers each create `k` weak roots to fresh
   values, keep every other value strongly, and hand both to the main
   domain as they terminate; a deleter running in parallel deletes a
   third of the previous round's weak roots while the main domain runs
   collections. Then, after two full major cycles, every kept value
   reads full and equal from its weak root, every other one reads empty,
   and the statistics count exactly the weak roots not deleted.
   BOXROOT_WEAK_DOMAINS_ROUNDS (default 30). *)
open Boxroot_test

let rounds = env_int "BOXROOT_WEAK_DOMAINS_ROUNDS" 30
let width = 3 and k = 2000

type batch = { ws : Weak_test.t array; kept : int ref option array; wrong_reads : int }

(* Checks are counted by the main domain (Boxroot_test.check is not
   thread-safe): the worker returns its count of wrong reads. *)
let worker base () =
  let vals = Array.init k (fun i -> ref (base + i)) in
  let ws = Array.map Weak_test.create vals in
  (* Read by the owner during whatever phase the GC is in. *)
  let wrong = ref 0 in
  Array.iteri (fun i w ->
      match Weak_test.get w with
      | Some v -> if Obj.obj v != vals.(i) then incr wrong
      | None -> incr wrong) ws;
  { ws; kept = Array.mapi (fun i v -> if i mod 2 = 0 then Some v else None) vals;
    wrong_reads = !wrong }

let verify b =
  Array.iteri (fun i w ->
      match b.kept.(i), Weak_test.get w with
      | Some v, Some x -> check (Obj.obj x == v) "kept value %d reads another value" !v
      | Some v, None -> check false "kept value %d reads empty" !v
      | None, Some _ -> if !failures < 3 then Weak_test.debug w; check false "value %d full two cycles after it died" i
      | None, None -> ()) b.ws

let () =
  let live = ref [] and alive = ref 0 in
  for r = 1 to rounds do
    let workers = List.init width (fun j -> Par.spawn (worker ((r * width + j) * k))) in
    (* Deletions racing the clearing: every third weak root of the
       previous batches, from a helper and from C threads. *)
    let victims = List.concat_map (fun b -> List.filteri (fun i _ -> i mod 3 = 1) (Array.to_list b.ws)) !live in
    let half = List.length victims / 2 in
    let deleter = Par.spawn (fun () -> List.iteri (fun i w -> if i < half then Weak_test.delete w) victims) in
    List.iteri (fun i w -> if i >= half then Weak_test.delete_foreign w) victims;
    Gc.full_major ();
    Par.join deleter;
    let batches = List.map Par.join workers in
    List.iter (fun b -> check (b.wrong_reads = 0) "round %d: a worker read %d wrong values" r
                  b.wrong_reads) batches;
    alive := !alive - List.length victims;
    (* Survivors of earlier rounds, minus the deleted ones. *)
    live := List.map (fun b ->
        let keep = Array.mapi (fun i _ -> i mod 3 <> 1) b.ws in
        let ws = Array.of_list (List.filteri (fun i _ -> keep.(i)) (Array.to_list b.ws)) in
        let kept = Array.of_list (List.filteri (fun i _ -> keep.(i)) (Array.to_list b.kept)) in
        { ws; kept; wrong_reads = 0 }) !live;
    live := batches @ !live;
    alive := !alive + width * k;
    Gc.full_major (); Gc.full_major ();
    List.iter verify !live;
    if List.length !live > 6 then begin
      (* Keep the work per round bounded: delete the oldest batches. *)
      let old = List.filteri (fun i _ -> i >= 6) !live in
      List.iter (fun b -> Array.iter Weak_test.delete b.ws; alive := !alive - Array.length b.ws) old;
      live := List.filteri (fun i _ -> i < 6) !live
    end;
    Gc.minor ();
    let st = stats () in
    check (st.Boxroot.weak_roots_alive = !alive)
      "round %d: %d weak roots alive, %d expected" r st.Boxroot.weak_roots_alive !alive
  done;
  List.iter (fun b -> Array.iter Weak_test.delete b.ws) !live;
  Gc.minor ();
  check ((stats ()).Boxroot.weak_roots_alive = 0) "weak roots left at the end";
  print_stats ();
  (* Domain.join returns before the domain's thread has released its
     runtime resources (test_hazard.ml). *)
  Thread.delay 0.2;
  finish "test_weak_domains"
