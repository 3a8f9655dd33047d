(* globroots: about 1024 roots alive at all times, few root operations
   between two collections, and many forced collections (adapted from the
   idea of the OCaml test suite's global-roots test; written anew).

   At each step one of these happens, at random:
   - a major collection (Gc.major: finishes the cycle; 3% of steps),
   - a minor collection (2%),
   - one root operation on a random slot (95%, equally split): check that
     it holds the expected string; set it to a new young copy or to the
     old, shared copy (modify); or delete it and create a new root with a
     young copy or with the old copy.
   With the default 1.35M steps: ~40k major and ~67k minor collections in
   all (a major collection starts with a minor one), as in the paper. *)
open Harness

let size = 1024

let () =
  let steps = arg_int "steps" 1_350_000 in
  let rng = Rng.make 7 in
  let old_copies = Array.init size string_of_int in
  let young_copy i = String.init (String.length old_copies.(i)) (String.get old_copies.(i)) in
  let roots = Array.init size (fun i -> Ref.create old_copies.(i)) in
  Gc.full_major ();
  let checked = ref 0 in
  let step () =
    let c = Rng.int rng 1000 in
    if c < 30 then Gc.major ()
    else if c < 50 then Gc.minor ()
    else begin
      let i = Rng.int rng size in
      match c mod 5 with
      | 0 ->
          if Ref.get roots.(i) <> old_copies.(i) then failwith "globroots: wrong value";
          incr checked
      | 1 -> roots.(i) <- Ref.modify roots.(i) (young_copy i)
      | 2 -> roots.(i) <- Ref.modify roots.(i) old_copies.(i)
      | 3 -> Ref.delete roots.(i); roots.(i) <- Ref.create (young_copy i)
      | _ -> Ref.delete roots.(i); roots.(i) <- Ref.create old_copies.(i)
    end
  in
  let (), m = measure (fun () -> for _ = 1 to steps do step () done) in
  Array.iteri (fun i r -> if Ref.get r <> old_copies.(i) then failwith "globroots: wrong value") roots;
  Array.iter Ref.delete roots;
  report ~bench:"globroots" ~impl:Ref.name ~case:(Printf.sprintf "steps=%d" steps)
    (measure_fields m @ [ ("pools", string_of_int (Ref.pools ())); ("check", string_of_int !checked) ])
