(* pause (OCaml 5): the root-marking pause of a major cycle with n roots
   alive, and the duration of Gc.full_major.

   At the start of each major cycle, every domain stops while the runtime
   darkens its roots (OCaml 5 major_gc.c: the runtime_events phase
   EV_MAJOR_MARK_ROOTS, which covers the local roots, the scanning hook
   where boxroot and upstream scan their pools, and the global roots).
   This program reads the begin and end timestamps of that phase from
   OCaml's runtime_events library, for [cycles] major cycles (one
   Gc.major each), and reports the median and the maximum.

   The roots hold either one shared old block (values=shared) or a
   block of their own each (values=distinct, so that marking has n blocks
   to visit). Handles that are immediates are kept in a Bigarray, outside
   the OCaml heap, so that the runtime never scans them; the "ocaml"
   implementation keeps the same values in an OCaml array, and "gc" keeps
   an OCaml array of refs made in C: both are marked incrementally by the
   runtime, not in the pause.

   Last, the wall-clock duration of [full_majors] calls of Gc.full_major
   (median), with the same roots alive. *)
open Harness

let mark_roots_durations ~cycles =
  let cursor = Runtime_events.create_cursor None in
  let started = ref None and out = ref [] in
  let runtime_begin domain ts phase =
    if domain = 0 && phase = Runtime_events.EV_MAJOR_MARK_ROOTS then
      started := Some (Runtime_events.Timestamp.to_int64 ts)
  in
  let runtime_end domain ts phase =
    if domain = 0 && phase = Runtime_events.EV_MAJOR_MARK_ROOTS then
      match !started with
      | Some t0 ->
          out := Int64.(to_int (sub (Runtime_events.Timestamp.to_int64 ts) t0)) :: !out;
          started := None
      | None -> ()
  in
  let callbacks = Runtime_events.Callbacks.create ~runtime_begin ~runtime_end () in
  ignore (Runtime_events.read_poll cursor callbacks None);
  out := [];
  (* Poll after each cycle: a cycle's events fit in the ring easily. *)
  for _ = 1 to cycles do
    Gc.major ();
    ignore (Runtime_events.read_poll cursor callbacks None)
  done;
  Runtime_events.free_cursor cursor;
  Array.of_list !out

let percentile sorted p =
  if Array.length sorted = 0 then -1
  else sorted.(min (Array.length sorted - 1) (Array.length sorted * p / 100))

let () =
  let n = arg_int "n" 1_000_000 in
  let values = arg_string "values" "distinct" in
  let cycles = arg_int "cycles" 12 in
  let full_majors = arg_int "full_majors" 5 in
  let shared = ref 0 in
  let value_of i = match values with
    | "shared" -> shared
    | "distinct" -> ref i
    | v -> failwith ("pause: unknown values=" ^ v)
  in
  Runtime_events.start ();
  let immediate = Obj.is_int (Obj.repr (Ref.create shared |> fun r -> Ref.delete r; r)) in
  let in_heap = if immediate then [||] else Array.init n (fun i -> Ref.create (value_of i)) in
  let outside = Bigarray.(Array1.create int c_layout (if immediate then n else 0)) in
  if immediate then
    for i = 0 to n - 1 do outside.{i} <- (Obj.magic (Ref.create (value_of i)) : int) done;
  (* Every root now holds an old value, in old pools. *)
  Gc.full_major ();
  Gc.full_major ();
  let pauses = mark_roots_durations ~cycles in
  Array.sort compare pauses;
  let full = Array.init full_majors (fun _ ->
      let w0 = wall_ns () in
      Gc.full_major ();
      wall_ns () - w0)
  in
  Array.sort compare full;
  report ~bench:"pause" ~impl:Ref.name ~case:(Printf.sprintf "values=%s,n=%d" values n)
    [ ("mark_roots_med_ns", string_of_int (percentile pauses 50));
      ("mark_roots_max_ns", string_of_int (percentile pauses 100));
      ("cycles", string_of_int (Array.length pauses));
      ("full_major_med_ns", string_of_int (percentile full 50));
      ("full_major_min_ns", string_of_int (percentile full 0));
      ("pools", string_of_int (Ref.pools ())) ];
  (* Every root is read back: none may have lost its value. *)
  let check i v = if values = "distinct" && !v <> i then failwith "pause: wrong value" in
  Array.iteri (fun i r -> check i (Ref.get r); Ref.delete r) in_heap;
  for i = 0 to Bigarray.Array1.dim outside - 1 do
    let r = Obj.magic outside.{i} in
    check i (Ref.get r);
    Ref.delete r
  done
