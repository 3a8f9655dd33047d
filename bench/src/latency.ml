(* latency: the duration of a collection with n roots alive, all holding
   one shared old block (so that the collector's marking work does not
   grow with n: what grows is the roots' own cost). Measures, one by one,
   [minors] forced minor collections and [majors] forced major ones
   (Gc.major: completes a major cycle, whose start scans every root), and
   reports their median and 90th percentile wall-clock durations.

   Handles that are immediates are kept in a Bigarray, outside the OCaml
   heap, so that the GC does not scan them; the "ocaml" baseline keeps n
   references to the block in an OCaml array, which the major GC marks.
   With n = 0, an implementation with a GC hook first creates and deletes
   one root, so that its hook is installed but has nothing to scan: the
   difference with "ocaml" at n = 0 is the cost of linking it.

   Last, [minor_burst_ns]: n more roots created since the last minor
   collection (holding the same old block), and the duration of the next
   minor collection: what a collection costs right after a burst of root
   creations.

   With recreate=1 (used by bench/tune.py, off by default): once the
   burst is deleted, the CPU time of creating it again, [recreate_s]:
   what reusing the pools that the burst emptied costs (boxroot gives
   some back to the OS, whose pages then fault in again). *)
open Harness

let percentile sorted p = sorted.(min (Array.length sorted - 1) (Array.length sorted * p / 100))

let time_each count f =
  let t = Array.init count (fun _ ->
      let w0 = wall_ns () in
      f ();
      wall_ns () - w0)
  in
  Array.sort compare t;
  t

let () =
  let n = arg_int "n" 1000 in
  let minors = arg_int "minors" 2000 in
  let majors = arg_int "majors" 10 in
  let shared = ref 0 in
  Gc.full_major ();
  let c0 = cpu_ns () in
  let immediate = Obj.is_int (Obj.repr (Ref.create shared |> fun r -> Ref.delete r; r)) in
  let in_heap = if immediate then [||] else Array.init n (fun _ -> Ref.create shared) in
  let outside = Bigarray.(Array1.create int c_layout (if immediate then n else 0)) in
  if immediate then
    for i = 0 to n - 1 do outside.{i} <- (Obj.magic (Ref.create shared) : int) done;
  let create_s = float_of_int (cpu_ns () - c0) /. 1e9 in
  Gc.full_major ();
  Gc.full_major ();
  let minor = time_each minors Gc.minor in
  let major = time_each majors Gc.major in
  let burst =
    if immediate then Array.init n (fun _ -> (Obj.magic (Ref.create shared) : int))
    else [||]
  in
  let burst_ns = (time_each 1 Gc.minor).(0) in
  Array.iter (fun r -> Ref.delete (Obj.magic r)) burst;
  let recreate =
    if arg_int "recreate" 0 = 1 && immediate then begin
      (* Outside the heap, as [outside]: the timing is the roots' alone. *)
      let again = Bigarray.(Array1.create int c_layout n) in
      let c0 = cpu_ns () in
      for i = 0 to n - 1 do again.{i} <- (Obj.magic (Ref.create shared) : int) done;
      let c1 = cpu_ns () in
      for i = 0 to n - 1 do Ref.delete (Obj.magic again.{i}) done;
      [ ("recreate_s", Printf.sprintf "%.6f" (float_of_int (c1 - c0) /. 1e9)) ]
    end
    else []
  in
  report ~bench:"latency" ~impl:Ref.name ~case:(Printf.sprintf "n=%d" n)
    ([ ("minor_med_ns", string_of_int (percentile minor 50));
       ("minor_p90_ns", string_of_int (percentile minor 90));
       ("major_med_ns", string_of_int (percentile major 50));
       ("major_p90_ns", string_of_int (percentile major 90));
       ("minor_burst_ns", string_of_int burst_ns);
       ("create_s", Printf.sprintf "%.6f" create_s);
       ("pools", string_of_int (Ref.pools ())) ]
     @ recreate);
  Array.iter Ref.delete in_heap;
  for i = 0 to Bigarray.Array1.dim outside - 1 do Ref.delete (Obj.magic outside.{i}) done
