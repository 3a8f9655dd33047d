(* Parallel tasks on OCaml 4.14: systhreads (the one domain's threads). *)
let kind = "threads"
type 'a t = Thread.t * ('a, exn) result option ref
let spawn f =
  let result = ref None in
  let body () = result := Some (try Ok (f ()) with e -> Error e) in
  (Thread.create body (), result)
let join (th, result) =
  Thread.join th;
  match !result with
  | Some (Ok v) -> v
  | Some (Error e) -> raise e
  | None -> failwith "Par.join: no result"
let relax = Thread.yield
