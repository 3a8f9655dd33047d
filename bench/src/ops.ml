(* Single operations: nanoseconds per create+delete pair and per modify,
   with k roots alive, for k in [ks]. Timed in C (ops.c), each after a
   warm-up and a full major collection, so every root starts old:
   - create_delete: create a root (old value), delete the oldest alive;
   - modify_old: set the next root (round robin) to an old value;
   - modify_young: the same with young values, so that a library that
     keeps young values apart pays that on the first modification of
     each root: always when k >= iters. Upstream moves a root out of
     an old pool at its first modification after a minor collection
     whatever the value, boxroot up to BOXROOT_OLD_VALUE_MOVES roots per
     minor cycle (tunables.h), so modify_old pays it too.
   Then, once, plain C loops that keep their roots in C variables, as
   foreign code usually does (ops.c), iters operations each:
   - loop_create_delete: create a root and delete it at once;
   - loop_batches: create 10,000 roots, then delete them in creation
     order (per create+delete pair);
   - loop_modify: set one root alternately to two old values. *)
open Harness

external replace : 'a Ref.t array -> int -> 'a -> int = "bench_ops_replace"
external modify : 'a Ref.t array -> int -> 'a -> 'a -> int = "bench_ops_modify"
external modify_young : int ref Ref.t array -> int -> int = "bench_ops_modify_young"
external loop_create_delete : int -> 'a -> int = "bench_loop_create_delete"
external loop_batches : int -> 'a -> int = "bench_loop_batches"
external loop_modify : int -> 'a -> 'a -> int = "bench_loop_modify"

let () =
  let ks = arg_ints "ks" "1,10,100,1000,10000,100000,1000000" in
  let iters = arg_int "iters" 2_000_000 in
  (* ops=modify_old runs one operation alone, e.g. to count its
     instructions with callgrind (bench/tools/callgrind.sh). *)
  let only =
    String.split_on_char ','
      (arg_string "ops"
         "create_delete,modify_old,modify_young,loop_create_delete,loop_batches,loop_modify")
  in
  let v1 = ref 1 and v2 = ref 2 in
  (* [f n] runs n operations and returns their CPU time in ns, or -1 if
     the implementation cannot run them (nothing is reported then). *)
  let run ~case name f =
    if List.mem name only then begin
      ignore (f (iters / 10)); (* warm up *)
      Gc.full_major ();
      let mi0, ma0 = gc_counts () in
      let ns = f iters in
      let mi1, ma1 = gc_counts () in
      if ns >= 0 then
        report ~bench:"ops" ~impl:Ref.name ~case
          [ ("ns_per_op", Printf.sprintf "%.3f" (float_of_int ns /. float_of_int iters));
            ("cpu_s", Printf.sprintf "%.6f" (float_of_int ns /. 1e9));
            ("minor", string_of_int (mi1 - mi0)); ("major", string_of_int (ma1 - ma0));
            ("pools", string_of_int (Ref.pools ())) ]
    end
  in
  List.iter
    (fun k ->
      let alive = Array.init k (fun _ -> Ref.create v1) in
      let run name f = run ~case:(Printf.sprintf "op=%s,k=%d" name k) name f in
      run "create_delete" (fun n -> replace alive n v1);
      run "modify_old" (fun n -> modify alive n v1 v2);
      run "modify_young" (fun n -> modify_young alive n);
      Array.iter Ref.delete alive)
    ks;
  let run name f = run ~case:("op=" ^ name) name f in
  run "loop_create_delete" (fun n -> loop_create_delete n v1);
  run "loop_batches" (fun n -> loop_batches n v1);
  run "loop_modify" (fun n -> loop_modify n v1 v2)
