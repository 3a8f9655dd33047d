(* parallel (OCaml 5): root throughput with several domains.
   - prodcons: the domains form a ring; each creates roots in batches and
     hands every batch to the next domain, which reads and deletes them:
     every deletion is made by a domain other than the creator (with one
     domain, the ring is a loop and deletions are local).
   - independent: each domain creates a batch of roots, reads and
     deletes them, on its own.
   Each root holds a fresh young block. Reports roots per second (create
   + delete) over the whole run, wall-clock. Built for the "ocaml"
   implementation too, which roots nothing (Ref.create is the identity):
   what the ring's channels and the blocks cost by themselves.

   Memory held: halfway through its batches, and again after the run,
   domain 0 records the process's resident memory (VmRSS) and the pools
   that boxroot holds (handed out to domains, or kept committed by the
   chunk allocator); with the peak resident memory (VmHWM), a growth
   between the two points shows memory that grows with the run's length.
   More domains than cores oversubscribe them (run.py labels such runs). *)
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

(* Pools that boxroot holds: handed out to domains, or free but still
   committed in the chunk allocator; -1 without boxroot's statistics. *)
let pools_held () =
  match stats () with
  | [] -> -1
  | s -> List.assoc "stat_pools_handed_out" s + List.assoc "stat_chunk_free_pools_committed" s

(* Not Array.init: a batch is too large for the minor heap, and making
   such an array from a young first element forces a minor collection
   (caml_make_vect), which would stop every domain once per batch for the
   implementations whose handles are blocks. *)
let make_batch size base =
  let b = Array.make size (Obj.magic 0 : int ref Ref.t) in
  for i = 0 to size - 1 do b.(i) <- Ref.create (ref (base + i)) done;
  b

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
  let half = ref [] in
  let sample_memory b id =
    if id = 0 && b = batches / 2 then
      half := [ ("rss_half_kib", string_of_int (rss_kib "VmRSS"));
                ("pools_half", string_of_int (pools_held ())) ]
  in
  let work id () =
    let sum = ref 0 in
    (match mode with
    | "prodcons" ->
        let out = channels.(id) and inp = channels.((id + domains - 1) mod domains) in
        for b = 1 to batches do
          Channel.push out (make_batch batch b);
          sum := !sum + consume (Channel.pop inp);
          sample_memory b id
        done
    | "independent" ->
        for b = 1 to batches do
          sum := !sum + consume (make_batch batch b);
          sample_memory b id
        done
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
    :: measure_fields m
    @ [ ("pools", string_of_int (Ref.pools ())) ]
    @ !half
    @ [ ("rss_end_kib", string_of_int (rss_kib "VmRSS"));
        ("pools_end", string_of_int (pools_held ()));
        ("rss_peak_kib", string_of_int (rss_kib "VmHWM")) ])
