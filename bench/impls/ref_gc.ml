(* "OCaml ref via C": create allocates, so it is not [@@noalloc]. *)
type 'a t

let name = "gc"
external create : 'a -> 'a t = "bench_ref_create"
external get : 'a t -> 'a = "bench_ref_get" [@@noalloc]
external modify : 'a t -> 'a -> 'a t = "bench_ref_modify" [@@noalloc]
external delete : 'a t -> unit = "bench_ref_delete" [@@noalloc]
external pools : unit -> int = "bench_ref_pools"
external stats : unit -> string = "bench_ref_stats"
external setup : unit -> unit = "bench_ref_setup"
let () = setup ()
