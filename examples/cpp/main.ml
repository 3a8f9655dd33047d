external push : string -> unit = "history_push"
external get : int -> string = "history_get"
external clear : unit -> unit = "history_clear"

let () =
  List.iter (fun s -> push (String.uppercase_ascii s)) [ "a"; "b"; "c" ];
  Gc.compact () (* moves the strings: their roots follow them *);
  print_endline (get 0 ^ get 1 ^ get 2);
  clear ()
