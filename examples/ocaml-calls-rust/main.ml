external keep : 'a -> int = "registry_keep"
external get : int -> 'a = "registry_get"
external clear : unit -> unit = "registry_clear"

(* One copy of the C library serves OCaml and Rust: its statistics count
   the roots that Rust created. *)
let roots_alive () =
  match Boxroot.stats () with Some s -> s.Boxroot.roots_alive | None -> 0

let () =
  let i = keep (String.make 3 'x') and j = keep [ 1; 2; 3 ] in
  Gc.compact () (* moves both values: their roots follow them *);
  assert (get i = "xxx" && get j = [ 1; 2; 3 ]);
  Printf.printf "Rust keeps %d values\n" (roots_alive ());
  clear ();
  Printf.printf "then %d\n" (roots_alive ())
