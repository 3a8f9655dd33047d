(* The plain C loops that a user of the boxroot API writes, in a program
   built as a user without dune builds it (build.sh): stubs and library
   compiled together by `ocamlopt -ccopt -O2`. The other view of the same
   loops is bench/src/ops.ml's, built by dune's release profile.

     plain.exe impl=NAME [ops=create_delete,batches,modify,modify_old] [iters=N]

   Each operation runs N times (default 2*10^6) after a warm-up of N/10
   and a full major collection (its values are then old), and prints
   RESULT bench=plain impl=NAME case=op=OP ns_per_op=... cpu_s=...:
   - create_delete: create a root and delete it at once;
   - batches: 10,000 roots created, then deleted in creation order, per
     create+delete pair; also create_ns and delete_ns, each part per
     operation;
   - modify: one root set alternately to two old values;
   - modify_old: the same with the first of 10,000 roots created before
     some allocation (minor collections) and a full major collection (a
     long-lived root, in a pool that is old since). *)
external setup : unit -> bool = "plain_setup"
external create_delete : int -> 'a -> int = "plain_create_delete"
external batches : int -> 'a -> float array -> unit = "plain_batches"
external modify : int -> 'a -> 'a -> int = "plain_modify"
external keep_batch : 'a -> unit = "plain_keep_batch"
external modify_kept : int -> 'a -> 'a -> int = "plain_modify_kept"

let arg key default =
  let prefix = key ^ "=" in
  let n = String.length prefix in
  Array.fold_left
    (fun acc a ->
      if String.length a >= n && String.sub a 0 n = prefix then
        String.sub a n (String.length a - n)
      else acc)
    default Sys.argv

let () =
  let impl = arg "impl" "unknown" in
  let iters = int_of_string (arg "iters" "2000000") in
  let ops = String.split_on_char ',' (arg "ops" "create_delete,batches,modify,modify_old") in
  if not (setup ()) then failwith "boxroot_setup failed";
  let v1 = ref 1 and v2 = ref 2 in
  let per_op ns = ns /. float_of_int iters in
  let report op fields =
    print_endline
      (String.concat " "
         (Printf.sprintf "RESULT bench=plain impl=%s case=op=%s" impl op
         :: List.map (fun (k, v) -> Printf.sprintf "%s=%.6g" k v) fields))
  in
  (* The warm-up, then the timed run: its CPU time in ns. *)
  let timed f =
    ignore (f (iters / 10));
    Gc.full_major ();
    f iters
  in
  List.iter
    (fun op ->
      match op with
      | "create_delete" ->
          let ns = float_of_int (timed (fun n -> create_delete n v1)) in
          report op [ ("ns_per_op", per_op ns); ("cpu_s", ns /. 1e9) ]
      | "batches" ->
          let t = [| 0.; 0. |] in
          ignore (timed (fun n -> batches n v1 t; 0));
          let ns = t.(0) +. t.(1) in
          report op
            [ ("ns_per_op", per_op ns); ("create_ns", per_op t.(0));
              ("delete_ns", per_op t.(1)); ("cpu_s", ns /. 1e9) ]
      | "modify" ->
          let ns = float_of_int (timed (fun n -> modify n v1 v2)) in
          report op [ ("ns_per_op", per_op ns); ("cpu_s", ns /. 1e9) ]
      | "modify_old" ->
          let modify_old n =
            keep_batch v1;
            (* Minor collections as allocation triggers them. *)
            for _ = 1 to 2_000_000 do ignore (Sys.opaque_identity (ref 0)) done;
            Gc.full_major ();
            modify_kept n v1 v2
          in
          let ns = float_of_int (timed modify_old) in
          report op [ ("ns_per_op", per_op ns); ("cpu_s", ns /. 1e9) ]
      | _ -> failwith ("plain.exe: unknown operation " ^ op))
    ops
