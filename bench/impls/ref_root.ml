(* Every implementation that keeps its roots outside the OCaml heap: the
   handle is an immediate (pointer | 1) and no operation allocates on the
   OCaml heap, so all are [@@noalloc]. [modify] returns the handle, which
   changes when the library moves the root (boxroot_modify may). *)
type 'a t

external impl_name : unit -> string = "bench_ref_name"
let name = impl_name ()
external create : 'a -> 'a t = "bench_ref_create" [@@noalloc]
external get : 'a t -> 'a = "bench_ref_get" [@@noalloc]
external modify : 'a t -> 'a -> 'a t = "bench_ref_modify" [@@noalloc]
external delete : 'a t -> unit = "bench_ref_delete" [@@noalloc]
external pools : unit -> int = "bench_ref_pools"
external stats : unit -> string = "bench_ref_stats"
external setup : unit -> unit = "bench_ref_setup"
let () = setup ()
