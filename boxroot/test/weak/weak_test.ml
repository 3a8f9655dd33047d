(* OCaml side of the weak-root test stubs (weak_stubs.c). *)
type t (* an immediate: the address of the weak root with bit 0 set *)

external create : 'a -> t = "weak_test_create"
external get : t -> Obj.t option = "weak_test_get"
external peek_empty : t -> bool = "weak_test_peek_empty" [@@noalloc]
external modify : t -> 'a -> t = "weak_test_modify"
external delete : t -> unit = "weak_test_delete"
external delete_foreign : t -> unit = "weak_test_delete_foreign"
external upgrade : t -> Boxroot_test.root option = "weak_test_upgrade"
external of_boxroot : Boxroot_test.root -> t = "weak_test_of_boxroot"
external count_full : t array -> int -> int -> int = "weak_test_count_full" [@@noalloc]
external phase : unit -> int = "weak_test_phase" [@@noalloc]
external defer_clearing : bool -> unit = "weak_test_defer_clearing"
external delay_scans : int -> int -> unit = "weak_test_delay_scans"
(* The reading of weak roots in the window, from a slice hook of this
   domain (weak_stubs.c): armed for the weak roots and the cycles
   completed so far; how many read full, -1 before the window. *)
external arm_window_read : t array -> int -> unit = "weak_test_arm_window_read"
external window_read : unit -> int = "weak_test_window_read" [@@noalloc]
external disarm_window_read : unit -> unit = "weak_test_disarm_window_read"

let idle = 0 and marking = 1 and cleaning = 2

(* n values held by an array, a weak root to each and OCaml's own weak
   pointers to them (the oracle), all old: the start of the hazard tests'
   rounds. *)
let held_with_oracle n =
  let hold = Array.init n (fun i -> ref i) in
  let ws = Array.map create hold in
  let oracle = Weak.create n in
  Array.iteri (fun i v -> Weak.set oracle i (Some v)) hold;
  Gc.full_major ();
  hold, ws, oracle

(* Major cycles completed so far. *)
let cycles () = (Gc.quick_stat ()).Gc.major_collections
external debug : t -> unit = "weak_test_debug"

(* Notifying weak roots (weak_notify.c). *)
external create_notifying : 'a -> int -> t = "weak_test_create_notifying"
external next_emptied : unit -> (t * int) option = "weak_test_next_emptied"
external notifying_word : t -> int = "weak_test_notifying_word" [@@noalloc]

(* Every notice of this domain. *)
let drain () =
  let rec go acc = match next_emptied () with
    | Some n -> go (n :: acc)
    | None -> List.rev acc in
  go []
