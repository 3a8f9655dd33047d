type callback (* a C pointer, in a block the GC does not scan *)

external register : (unit -> unit) -> callback = "callback_register"
external fire : callback -> unit = "callback_fire"
external release : callback -> unit = "callback_release"

let () =
  let calls = ref 0 in
  let cb = register (fun () -> incr calls) in
  Gc.compact () (* moves the closure: its root follows it *);
  fire cb;
  fire cb;
  release cb;
  Printf.printf "called %d times\n" !calls
