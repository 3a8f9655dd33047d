(* Model-based test of weak roots, with OCaml's own Weak as the oracle.

   Random steps over a table of slots; each slot holds a weak root, its
   value's kind and id, a one-element Weak.t holding the same value (the
   oracle), and perhaps a strong reference to the value (kept alive by
   the test). Values: small blocks, strings, closures of `let rec ... and
   ...` (held through an infix pointer), arrays larger than the runtime's
   size classes (freed by free() on OCaml 5), values with a Gc.finalise or
   Gc.finalise_last finaliser, immediates. Steps: create, drop the strong
   reference, modify (to a new value, or back to the kept one), delete
   (locally, or from a thread holding no lock), read one slot, upgrade one
   slot to a strong root and back, and collections: minor, major slices,
   full major, compaction.

   After every step:
   - a slot whose value the test keeps reads full, with that very value
     (physical equality) (never empty while reachable otherwise);
   - a slot that reads empty without darkening (a raw look at the slot)
     has an oracle that says dead (Weak.check false): never emptied
     before OCaml's Weak would;
   - once the oracle says dead, the slot is empty at the latest two major
     cycles after the one in which the oracle was first seen dead (the
     oracle clears young values at minor collections on OCaml 4.14, while
     weak roots promote them: weak.c, W2).
   A value read full (rarely, since a read darkens it during marking, which
   keeps it alive) must be intact: its contents match its id.

   BOXROOT_WEAK_MODEL_STEPS (default 20_000), BOXROOT_WEAK_MODEL_SLOTS
   (default 200), BOXROOT_WEAK_MODEL_SEED (default 42). *)
open Boxroot_test

type kind = Small | Str | Closure | Large | Final | Final_last | Imm

let kinds = [| Small; Str; Closure; Large; Final; Final_last; Imm |]

let make kind id : Obj.t =
  match kind with
  | Small -> Obj.repr (ref id)
  | Str -> Obj.repr (string_of_int id ^ "#")
  | Closure ->
    (* g is an infix pointer into the closure block of f and g. *)
    let rec f x = if x = 0 then id else g (x - 1)
    and g x = if x = 0 then id else f (x - 1) in
    Obj.repr g
  | Large -> Obj.repr (Array.init 2000 (fun i -> if i = 0 || i = 1999 then id else i))
  | Final -> let r = ref id in Gc.finalise (fun r -> ignore (Sys.opaque_identity r)) r; Obj.repr r
  | Final_last -> let r = ref id in Gc.finalise_last (fun () -> ()) r; Obj.repr r
  | Imm -> Obj.repr id

let intact kind id (v : Obj.t) =
  match kind with
  | Small | Final | Final_last -> !(Obj.obj v : int ref) = id
  | Str -> (Obj.obj v : string) = string_of_int id ^ "#"
  | Closure -> (Obj.obj v : int -> int) 3 = id
  | Large -> let a = (Obj.obj v : int array) in Array.length a = 2000 && a.(0) = id && a.(1999) = id
  | Imm -> (Obj.obj v : int) = id

type slot = {
  mutable w : Weak_test.t;
  mutable kind : kind;
  mutable id : int;
  oracle : Obj.t Weak.t;
  mutable kept : Obj.t option;
  mutable dead_since : int option; (* cycles () when the oracle was first seen dead *)
}

let steps = env_int "BOXROOT_WEAK_MODEL_STEPS" 20_000
let nslots = env_int "BOXROOT_WEAK_MODEL_SLOTS" 200
let () = Random.init (env_int "BOXROOT_WEAK_MODEL_SEED" 42)
let slots : slot option array = Array.make nslots None
let next_id = ref 0

let fill s kind =
  incr next_id;
  let v = make kind !next_id in
  s.kind <- kind; s.id <- !next_id;
  Weak.set s.oracle 0 (Some v);
  s.kept <- (if Random.int 3 = 0 then None else Some v);
  s.dead_since <- None;
  v

let create i =
  let s = { w = Obj.magic 1; kind = Imm; id = 0; oracle = Weak.create 1; kept = None;
            dead_since = None } in
  let v = fill s kinds.(Random.int (Array.length kinds)) in
  s.w <- Weak_test.create v;
  slots.(i) <- Some s

let delete i s =
  if Random.bool () then Weak_test.delete s.w else Weak_test.delete_foreign s.w;
  slots.(i) <- None

let kept_none s = match s.kept with None -> true | Some _ -> false

let read s =
  match Weak_test.get s.w with
  | Some v ->
    check (intact s.kind s.id v) "read: the value of slot %d (id %d) is not intact" s.id s.id;
    (match s.kept with
     | Some k -> check (k == v) "read: id %d reads another value than the one kept" s.id
     | None -> ())
  | None ->
    check (kept_none s) "read: id %d reads empty while the test keeps its value" s.id;
    check (not (Weak.check s.oracle 0)) "read: id %d reads empty, the oracle full" s.id

let step () =
  let i = Random.int nslots in
  match Random.int 100, slots.(i) with
  | _, None -> create i
  | r, Some s when r < 25 -> s.kept <- None
  | r, Some s when r < 35 ->
    let v = fill s kinds.(Random.int (Array.length kinds)) in
    s.w <- Weak_test.modify s.w v
  | r, Some s when r < 45 -> delete i s
  | r, Some s when r < 55 -> read s
  | r, Some s when r < 58 ->
    (match Weak_test.upgrade s.w with
     | Some root ->
       let v = get root in
       check (intact s.kind s.id v) "upgrade: id %d not intact" s.id;
       Boxroot_test.delete root
     | None ->
       check (kept_none s) "upgrade: id %d empty while kept" s.id)
  | r, _ when r < 80 -> ignore (Sys.opaque_identity (Array.make (Random.int 200) 0))
  | r, _ when r < 90 -> Gc.minor ()
  | r, _ when r < 97 -> ignore (Gc.major_slice 0)
  | r, _ when r < 99 -> Gc.full_major ()
  | _, _ -> Gc.compact ()

let check_all () =
  let now = Weak_test.cycles () in
  Array.iter (function
      | None -> ()
      | Some s ->
        let empty = Weak_test.peek_empty s.w in
        (match s.kept with
         | Some _ -> check (not empty) "id %d is empty while the test keeps its value" s.id
         | None -> ());
        if empty then
          check (not (Weak.check s.oracle 0)) "id %d is empty while the oracle is full" s.id;
        if s.dead_since = None && not (Weak.check s.oracle 0) then s.dead_since <- Some now;
        match s.dead_since with
        | Some c when now >= c + 2 ->
          check (s.kind = Imm || empty)
            "id %d still full %d cycles after the oracle emptied" s.id (now - c)
        | _ -> ())
    slots

let () =
  for _ = 1 to steps do step (); check_all () done;
  Gc.full_major (); Gc.full_major ();
  (* Everything not kept is dead by now, and reads empty. *)
  Array.iter (function
      | Some s when kept_none s && s.kind <> Imm ->
        check (Weak_test.get s.w |> Option.is_none) "id %d is full at the end, not kept" s.id
      | Some s -> read s
      | None -> ())
    slots;
  let st = stats () in
  check (st.Boxroot.weak_roots_alive = Array.fold_left (fun n s -> if s = None then n else n + 1) 0 slots)
    "statistics: %d weak roots alive" st.Boxroot.weak_roots_alive;
  check (st.Boxroot.weak_cleared > 0) "statistics: no weak root was ever cleared";
  Array.iteri (fun i -> function Some s -> delete i s | None -> ()) slots;
  Gc.minor ();
  check ((stats ()).Boxroot.weak_roots_alive = 0) "statistics: weak roots left after deleting all";
  Printf.printf "test_weak_model: %d steps, %d weak roots cleared\n" steps (stats ()).Boxroot.weak_cleared;
  print_stats ();
  finish "test_weak_model"
