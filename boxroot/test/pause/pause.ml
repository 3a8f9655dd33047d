(* The root-marking pause (OCaml 5): how long the stop-the-world section
   that starts a major cycle spends darkening roots (runtime_events'
   EV_MAJOR_MARK_ROOTS), with n live boxroots, against the same values
   held in an OCaml array; and the time of Gc.full_major.

   pause.exe HOLDER VALUES N [CYCLES]
     HOLDER: boxroot (n roots created from C) or array (an OCaml array)
     VALUES: distinct (n refs) or shared (one ref, n times)
   Prints one line: the median and maximum pause over CYCLES major
   cycles (Gc.major each, default 12), and the median of 7 Gc.full_major.
   Run from the repository root, e.g.
     dune build --profile release ./boxroot/test/pause/pause.exe
     ./_build/default/boxroot/test/pause/pause.exe boxroot distinct 1000000
   (boxroot/test/pause/run.sh runs the whole table.) *)

external create : Obj.t array -> Obj.t -> int -> unit = "pause_create"
external check : Obj.t -> bool = "pause_check"
external delete : unit -> unit = "pause_delete"

let holder, values, n, cycles =
  match Array.to_list Sys.argv |> List.tl with
  | [ h; v; n ] -> h, v, int_of_string n, 12
  | [ h; v; n; c ] -> h, v, int_of_string n, int_of_string c
  | _ -> prerr_endline "usage: pause.exe boxroot|array distinct|shared N [CYCLES]"; exit 2

let median l =
  let a = Array.of_list l in
  Array.sort compare a;
  let k = Array.length a in
  if k = 0 then nan else if k mod 2 = 1 then a.(k / 2) else (a.(k / 2 - 1) +. a.(k / 2)) /. 2.

let () =
  let shared = Obj.repr (ref (-1)) in
  let distinct = values = "distinct" in
  let vals = if distinct then Array.init n (fun i -> Obj.repr (ref i)) else [||] in
  let kept =
    match holder with
    | "boxroot" ->
      Gc.full_major (); (* values old first: roots created from C hold no young value *)
      create vals (if distinct then Obj.repr () else shared) n;
      [||]
    | "array" -> if distinct then vals else Array.make n shared
    | _ -> prerr_endline "HOLDER: boxroot or array"; exit 2
  in
  let vals = ref vals in
  vals := [||]; (* distinct boxroot values: held by the roots alone *)
  Gc.full_major ();
  Runtime_events.start ();
  let cursor = Runtime_events.create_cursor None in
  let started = Hashtbl.create 8 and pauses = ref [] in
  let runtime_begin ring ts phase =
    if phase = Runtime_events.EV_MAJOR_MARK_ROOTS then
      Hashtbl.replace started ring (Runtime_events.Timestamp.to_int64 ts) in
  let runtime_end ring ts phase =
    if phase = Runtime_events.EV_MAJOR_MARK_ROOTS then
      match Hashtbl.find_opt started ring with
      | Some t0 ->
        let dt = Int64.sub (Runtime_events.Timestamp.to_int64 ts) t0 in
        pauses := Int64.to_float dt /. 1e6 :: !pauses
      | None -> () in
  let callbacks = Runtime_events.Callbacks.create ~runtime_begin ~runtime_end () in
  ignore (Runtime_events.read_poll cursor callbacks None);
  pauses := [];
  for _ = 1 to cycles do
    Gc.major ();
    ignore (Runtime_events.read_poll cursor callbacks None)
  done;
  let full = List.init 7 (fun _ ->
      let t0 = Unix.gettimeofday () in
      Gc.full_major ();
      (Unix.gettimeofday () -. t0) *. 1e3) in
  let ok = match holder with
    | "boxroot" -> check (if distinct then Obj.repr () else shared)
    | _ -> Array.length kept = n in
  if holder = "boxroot" then delete ();
  ignore (Sys.opaque_identity kept);
  if Sys.getenv_opt "PAUSE_VERBOSE" <> None then
    List.iter (Printf.printf "%.3f ") (List.rev !pauses);
  Printf.printf "holder=%s values=%s n=%d cycles=%d mark_roots_median_ms=%.3f \
                 mark_roots_max_ms=%.3f full_major_median_ms=%.2f values_ok=%b\n%!"
    holder values n (List.length !pauses) (median !pauses)
    (List.fold_left max 0. !pauses) (median full) ok
