(* Values that only roots keep alive, for test_model and the
   multi-threaded tests (test_stress, test_churn): a root travels
   with a description of the value it must hold; the value itself is held
   by the root alone, so a root that lost its value or missed a move shows
   as a wrong value or a crash. Values of released roots go into a weak
   array (Released) and must be gone after two major collections (remote
   deletions are collected at the next scan). Thread-safe as long as each
   Released.t stays with one thread until it is checked. *)

type expected =
  | Imm of int          (* an immediate *)
  | Young of int        (* a small block, allocated in the minor heap *)
  | Old of int          (* a block allocated directly in the major heap *)
  | Static of int       (* a constant the compiler placed out of the heap *)

type small = { id : int; text : string }

let statics = [| "static zero"; "static one"; "static two" |]
let static_list = [ 1; 2; 3 ]
let static k = if k = 3 then Obj.repr static_list else Obj.repr statics.(k)

let make = function
  | Imm i -> Obj.repr i
  | Young id -> Obj.repr { id; text = string_of_int id }
  | Old id -> Obj.repr (Array.make 300 id) (* > Max_young_wosize *)
  | Static k -> static k

let holds v = function
  | Imm i -> Obj.is_int v && (Obj.obj v : int) = i
  | Young id ->
    Obj.is_block v && Obj.size v = 2
    && (let s : small = Obj.obj v in s.id = id && s.text = string_of_int id)
  | Old id ->
    Obj.is_block v && Obj.size v = 300
    && (let a : int array = Obj.obj v in a.(0) = id && a.(299) = id)
  | Static k -> v == static k

let describe = function
  | Imm i -> Printf.sprintf "Imm %d" i
  | Young i -> Printf.sprintf "Young %d" i
  | Old i -> Printf.sprintf "Old %d" i
  | Static k -> Printf.sprintf "Static %d" k

(* Ids unique across threads and domains: [worker] in the low bits. *)
let random_expected rng ~worker ~counter =
  incr counter;
  let id = (!counter lsl 10) lor worker in
  match Random.State.int rng 10 with
  | 0 | 1 -> Imm id
  | 2 | 3 | 4 | 5 | 6 | 7 -> Young id
  | _ -> Old id

type item = { root : Boxroot_test.root; expect : expected }

let create rng ~worker ~counter =
  let expect = random_expected rng ~worker ~counter in
  { root = Boxroot_test.create (make expect); expect }

(* The pool of a root: roots cross into OCaml as their address + 1. *)
let pool_of (r : Boxroot_test.root) = (Obj.magic r : int) lsr 13

module Released = struct
  (* The last [size] released values; older ones are forgotten. *)
  type t = { weak : Obj.t Weak.t; what : string array; mutable next : int;
             mutable tracked : int; size : int }
  let create ?(size = 1 lsl 14) () =
    { weak = Weak.create size; what = Array.make size ""; next = 0; tracked = 0; size }

  (* Call before the root that holds [expect] is deleted or modified. *)
  let add t (it : item) =
    match it.expect with
    | Imm _ | Static _ -> () (* not in the heap: nothing to release *)
    | Young _ | Old _ ->
      let ix = t.next in
      t.next <- (ix + 1) mod t.size;
      Weak.set t.weak ix (Some (Boxroot_test.get it.root));
      t.what.(ix) <- describe it.expect;
      t.tracked <- t.tracked + 1

  (* After every deletion was made and two major collections: the number
     of released values still alive (each is reported). *)
  let still_alive t =
    let n = ref 0 in
    for ix = 0 to t.size - 1 do
      if Weak.check t.weak ix then begin
        incr n;
        if !n <= 5 then Printf.printf "released value still alive: %s\n%!" t.what.(ix)
      end
    done;
    !n
end
