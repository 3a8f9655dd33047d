(* What every benchmark program shares: arguments, clocks, a small
   deterministic random generator, and the RESULT lines that bench/run.py
   parses.

   Output protocol: one line per measurement,
     RESULT bench=B impl=I case=C key=value key=value ...
   where [case] names the parameter point (e.g. depth=10) and the keys
   include cpu_s and wall_s (the timed section only), minor and major
   (collections during it) and pools (boxroot pools; -1 if n/a). The
   library's statistics are fields named stat_<counter>. *)

external cpu_ns : unit -> int = "bench_cpu_ns" [@@noalloc]
external wall_ns : unit -> int = "bench_wall_ns" [@@noalloc]
external callgrind_toggle : unit -> unit = "bench_callgrind_toggle" [@@noalloc]

(* Arguments are key=value pairs. *)
let args =
  Array.to_list Sys.argv |> List.tl
  |> List.filter_map (fun a ->
         match String.index_opt a '=' with
         | Some i -> Some (String.sub a 0 i, String.sub a (i + 1) (String.length a - i - 1))
         | None -> None)

let arg_string key default = try List.assoc key args with Not_found -> default
let arg_int key default = int_of_string (arg_string key (string_of_int default))
let arg_float key default = float_of_string (arg_string key (string_of_float default))
let arg_ints key default =
  arg_string key default |> String.split_on_char ',' |> List.map int_of_string

(* A 48-bit linear congruential generator: the same decisions on every
   OCaml version and for every implementation. *)
module Rng = struct
  type t = { mutable s : int }
  let make seed = { s = seed land 0xFFFF_FFFF_FFFF }
  let next r =
    r.s <- (r.s * 0x5DEECE66D + 11) land 0xFFFF_FFFF_FFFF;
    r.s lsr 16
  (* Uniform in [0, n), n < 2^32. *)
  let int r n = next r mod n
  (* True with probability p. *)
  let chance r p = float_of_int (next r) < p *. 4294967296.
end

let gc_counts () =
  let s = Gc.quick_stat () in
  (s.Gc.minor_collections, s.Gc.major_collections)

type measure = { cpu_s : float; wall_s : float; minor : int; major : int }

let measure f =
  let mi0, ma0 = gc_counts () in
  let c0 = cpu_ns () and w0 = wall_ns () in
  callgrind_toggle ();
  let r = f () in
  callgrind_toggle ();
  let c1 = cpu_ns () and w1 = wall_ns () in
  let mi1, ma1 = gc_counts () in
  ( r,
    { cpu_s = float_of_int (c1 - c0) /. 1e9; wall_s = float_of_int (w1 - w0) /. 1e9;
      minor = mi1 - mi0; major = ma1 - ma0 } )

(* The library's own statistics (boxroot's counters; none for the other
   implementations), as (name, value) pairs named stat_<counter>. *)
let stats () =
  String.split_on_char ' ' (Ref.stats ())
  |> List.filter_map (fun f ->
         match String.index_opt f '=' with
         | Some i -> Some (String.sub f 0 i, int_of_string (String.sub f (i + 1) (String.length f - i - 1)))
         | None -> None)

(* Resident memory of this process in KiB, from /proc/self/status:
   [rss_kib "VmRSS"] now, [rss_kib "VmHWM"] its peak; -1 if unknown. *)
let rss_kib key =
  match open_in "/proc/self/status" with
  | exception Sys_error _ -> -1
  | ic ->
      let rec find () =
        match input_line ic with
        | exception End_of_file -> -1
        | line when String.starts_with ~prefix:(key ^ ":") line ->
            Scanf.sscanf (String.sub line (String.length key + 1) (String.length line - String.length key - 1))
              " %d" Fun.id
        | _ -> find ()
      in
      let v = find () in
      close_in ic;
      v

let last_report = ref ("none", "none")

let report ~bench ~impl ~case fields =
  last_report := (bench, case);
  print_string
    (String.concat " "
       (Printf.sprintf "RESULT bench=%s impl=%s case=%s" bench impl case
       :: List.map (fun (k, v) -> k ^ "=" ^ v) fields));
  print_newline ()

(* BENCH_STATS=1: one more RESULT line at exit, case=exit, whose fields
   are the library's statistics then (bench/tune.py reads them). *)
let () =
  if Sys.getenv_opt "BENCH_STATS" = Some "1" then
    at_exit (fun () ->
        let bench, _ = !last_report in
        report ~bench ~impl:Ref.name ~case:"exit"
          (List.map (fun (k, v) -> (k, string_of_int v)) (stats ())))

let measure_fields m =
  [ ("cpu_s", Printf.sprintf "%.6f" m.cpu_s); ("wall_s", Printf.sprintf "%.6f" m.wall_s);
    ("minor", string_of_int m.minor); ("major", string_of_int m.major) ]
