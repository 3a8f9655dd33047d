type handle (* a custom block that owns a root *)

external make : 'a -> handle = "handle_make"
external payload : handle -> 'a = "handle_payload"
external finalized : unit -> int = "handle_finalized"

let roots_alive () =
  match Boxroot.stats () with Some s -> s.Boxroot.roots_alive | None -> 0

let use () =
  let handles = Array.init 1000 (fun i -> make (string_of_int i)) in
  Gc.compact () (* moves the strings: the roots follow them *);
  Printf.printf "payload %s, %d roots alive\n" (payload handles.(999)) (roots_alive ())

let () =
  use ();
  Gc.full_major () (* the handles are dead: their finalizers delete the roots *);
  Printf.printf "%d handles finalized, %d roots alive\n" (finalized ()) (roots_alive ())
