(* local_roots: a fixpoint computed through a chain of `depth` recursive
   calls (the Boxroot paper, §5.2), repeated calls/depth times; reports
   the time per recursive call. Variants:
   - ocaml: the pure OCaml function, no C call;
   - local: CAMLparam/CAMLlocal (callee-roots, the documented style);
   - <lib>-callee: boxroots used exactly like local roots;
   - <lib>-caller: the caller-roots discipline (f borrowed, x owned);
   - generational: caller-roots with generational global roots;
   where <lib> is boxroot (ours) or upstream, whichever this executable
   was built with. *)
open Harness

external local_fixpoint : (float -> float) -> float -> float = "bench_local_fixpoint"
external callee_fixpoint : (float -> float) -> float -> float = "bench_callee_fixpoint"
external caller_fixpoint : (float -> float) -> float -> float = "bench_caller_fixpoint"
external generational_fixpoint : (float -> float) -> float -> float = "bench_generational_fixpoint"
external library : unit -> string = "bench_local_roots_library"

let rec ocaml_fixpoint f x =
  let y = f x in
  if Float.compare x y = 0 then y else ocaml_fixpoint f y

(* One loop per variant, so that each calls its external directly. *)
let run variant ~iters f =
  let last = ref 0. in
  (match variant with
  | "ocaml" -> for _ = 1 to iters do last := ocaml_fixpoint f 1. done
  | "local" -> for _ = 1 to iters do last := local_fixpoint f 1. done
  | "callee" -> for _ = 1 to iters do last := callee_fixpoint f 1. done
  | "caller" -> for _ = 1 to iters do last := caller_fixpoint f 1. done
  | "generational" -> for _ = 1 to iters do last := generational_fixpoint f 1. done
  | v -> failwith ("local_roots: unknown variant " ^ v));
  !last

let () =
  let variant = arg_string "variant" "caller" in
  let depths = arg_ints "depths" "1,2,3,5,10,100,1000" in
  let calls = arg_int "calls" 10_000_000 in
  let impl =
    match variant with
    | "callee" | "caller" -> library () ^ "-" ^ variant
    | v -> v
  in
  List.iter
    (fun depth ->
      let f x = if truncate x >= depth then x else x +. 1. in
      let iters = max 1 (calls / depth) in
      ignore (run variant ~iters:(max 1 (iters / 10)) f); (* warm up *)
      let result, m = measure (fun () -> run variant ~iters f) in
      if result <> float_of_int depth then failwith "local_roots: wrong fixpoint";
      let ns = m.cpu_s *. 1e9 /. float_of_int (iters * depth) in
      report ~bench:"local_roots" ~impl ~case:(Printf.sprintf "depth=%d" depth)
        (("ns_per_call", Printf.sprintf "%.3f" ns) :: measure_fields m))
    depths
