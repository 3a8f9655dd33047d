(* Sets boxroot up and creates a root while the program initialises,
   before the threads library does (this library comes first in the
   executable's link order, see dune). *)
external setup_and_root : string -> unit = "early_setup_and_root"
external root_value : unit -> string = "early_root_value"
external delete_root_unlocked : unit -> unit = "early_delete_root_unlocked"
external thread_self : unit -> Obj.t = "caml_thread_self"

(* OCaml 4.14's Thread.self fails until the threads library is set up. *)
let threads_were_initialised =
  Sys.ocaml_version.[0] = '4'
  && (try ignore (thread_self ()); true with Invalid_argument _ -> false)

let expected_value = String.make 3 'e' ^ string_of_int (Sys.opaque_identity 42)
let () = setup_and_root expected_value
