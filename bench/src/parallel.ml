(* parallel (OCaml 5): root throughput with several domains.
   - prodcons: the domains form a ring; each creates roots in batches and
     hands every batch to the next domain, which reads and deletes them:
     every deletion is made by a domain other than the creator (with one
     domain, the ring is a loop and deletions are local).
   - independent: each domain creates a batch of roots, reads and
     deletes them, on its own.
   Each root holds a fresh young block. Reports roots per second (create
   + delete) over the whole run, wall-clock. *)
open Harness

(* A bounded blocking queue of batches. In the ring, each domain pushes
   at most one batch more than it popped, so at most [domains] batches
   are in flight and a capacity of [domains] + 1 never blocks forever. *)
module Channel = struct
  type 'a t = { q : 'a Queue.t; m : Mutex.t; not_empty : Condition.t; not_full : Condition.t; cap : int }

  let create cap =
    { q = Queue.create (); m = Mutex.create (); not_empty = Condition.create ();
      not_full = Condition.create (); cap }

  let push c x =
    Mutex.lock c.m;
    while Queue.length c.q >= c.cap do Condition.wait c.not_full c.m done;
    Queue.push x c.q;
    Condition.signal c.not_empty;
    Mutex.unlock c.m

  let pop c =
    Mutex.lock c.m;
    while Queue.is_empty c.q do Condition.wait c.not_empty c.m done;
    let x = Queue.pop c.q in
    Condition.signal c.not_full;
    Mutex.unlock c.m;
    x
end

let make_batch size base = Array.init size (fun i -> Ref.create (ref (base + i)))

let consume batch =
  let sum = ref 0 in
  Array.iter (fun r -> sum := !sum + !(Ref.get r); Ref.delete r) batch;
  !sum

let () =
  let mode = arg_string "mode" "prodcons" in
  let domains = arg_int "domains" 2 in
  let roots = arg_int "roots" 10_000_000 in
  let batch = arg_int "batch" 1000 in
  let batches = roots / domains / batch in
  let channels = Array.init domains (fun _ -> Channel.create (domains + 1)) in
  let sums = Array.make domains 0 in
  let work id () =
    let sum = ref 0 in
    (match mode with
    | "prodcons" ->
        let out = channels.(id) and inp = channels.((id + domains - 1) mod domains) in
        for b = 1 to batches do
          Channel.push out (make_batch batch b);
          sum := !sum + consume (Channel.pop inp)
        done
    | "independent" -> for b = 1 to batches do sum := !sum + consume (make_batch batch b) done
    | m -> failwith ("parallel: unknown mode " ^ m));
    sums.(id) <- !sum
  in
  let (), m =
    measure (fun () ->
        let others = List.init (domains - 1) (fun i -> Domain.spawn (work (i + 1))) in
        work 0 ();
        List.iter Domain.join others)
  in
  let total = domains * batches * batch in
  let expected = domains * batches * (batch * (batch - 1) / 2) + domains * batch * (batches * (batches + 1) / 2) in
  if Array.fold_left ( + ) 0 sums <> expected then failwith "parallel: wrong sum";
  report ~bench:"parallel" ~impl:Ref.name ~case:(Printf.sprintf "mode=%s,domains=%d" mode domains)
    (("roots_per_s", Printf.sprintf "%.0f" (float_of_int total /. m.wall_s))
    :: measure_fields m @ [ ("pools", string_of_int (Ref.pools ())) ])
