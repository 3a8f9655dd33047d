(* perm_count: all permutations of [0; ...; n-1] in a non-determinism
   monad (the ocaml-boxroot README's benchmark, CHOICE=persistent),
   counted at the end: an expensive way to compute n! with many
   allocations, where every element of every intermediate result is
   boxed in a Ref. Many roots are alive at once:
   the final result holds n! of them.

   The monad is a persistent (immutable) list of Refs. Each operation owns
   the list it consumes: it reads and deletes its Refs and creates new
   ones for its result, so a Ref is alive exactly while some intermediate
   result holds it. *)
open Harness

type 'a m = 'a Ref.t list

let return x = [ Ref.create x ]

(* [rev_append_m a b]: the Refs of [a] in front of [b]; no Ref changes hands. *)
let rec rev_append_m a b = match a with [] -> b | r :: rest -> rev_append_m rest (r :: b)

let plus (a : 'a m) (b : 'a m) : 'a m = rev_append_m (List.rev a) b

(* Consumes [m]. *)
let map f (m : 'a m) : 'b m =
  let rec go acc = function
    | [] -> List.rev acc
    | r :: rest ->
        let x = Ref.get r in
        Ref.delete r;
        go (Ref.create (f x) :: acc) rest
  in
  go [] m

(* Consumes [m] and every list [f] returns. *)
let bind (m : 'a m) (f : 'a -> 'b m) : 'b m =
  let rec go acc = function
    | [] -> List.rev acc
    | r :: rest ->
        let x = Ref.get r in
        Ref.delete r;
        go (rev_append_m (f x) acc) rest
  in
  go [] m

(* Every way of inserting [x] into [l]. *)
let rec insert x l : 'a list m =
  match l with
  | [] -> return [ x ]
  | y :: ys -> plus (return (x :: l)) (map (fun ys' -> y :: ys') (insert x ys))

let rec permutations = function
  | [] -> return []
  | x :: xs -> bind (permutations xs) (insert x)

(* Consumes [m]. *)
let count (m : 'a m) =
  List.fold_left (fun n r -> ignore (Ref.get r); Ref.delete r; n + 1) 0 m

let () =
  let n = arg_int "n" 10 in
  let result, m = measure (fun () -> count (permutations (List.init n Fun.id))) in
  let expected = List.fold_left ( * ) 1 (List.init n succ) in
  if result <> expected then failwith (Printf.sprintf "perm_count: %d <> %d" result expected);
  report ~bench:"perm_count" ~impl:Ref.name ~case:(Printf.sprintf "n=%d" n)
    (measure_fields m @ [ ("pools", string_of_int (Ref.pools ())); ("count", string_of_int result) ])
