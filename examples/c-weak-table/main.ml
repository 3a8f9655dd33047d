external add : int -> string -> unit = "table_add"
external sweep : unit -> int = "table_sweep"
external entries : unit -> int = "table_entries"

(* 1000 entries; the OCaml side keeps every other key. *)
let fill () =
  let keys = Array.init 1000 (fun i -> "key " ^ string_of_int i) in
  Array.iteri add keys;
  Array.init 500 (fun i -> keys.(2 * i))

let () =
  let kept = fill () in
  Printf.printf "%d entries\n" (entries ());
  Gc.full_major ();
  Gc.full_major ();
  let removed = sweep () in
  Printf.printf "after the GC: %d removed, %d left\n" removed (entries ());
  ignore (Sys.opaque_identity kept)
