(* Micro-benchmark: millions of live roots, random operations on them,
   and many minor and major collections.

     roots_bench.exe [ROOTS [ROUNDS [OPS_PER_ROUND [MAJOR_EVERY]]]]

   Each round runs OPS_PER_ROUND random operations (roots_bench_stubs.c)
   then a minor collection; every MAJOR_EVERY rounds, a major one. Prints
   one line of key=value pairs: the time of the rounds (wall and CPU
   time of the process), boxroot's own
   scanning time (Boxroot.stats), and the huge pages the process used
   (AnonHugePages of /proc/self/smaps_rollup). Environment:
   BOXROOT_HUGE_PAGES (chunk.h) selects huge pages. *)
external setup : int -> unit = "bench_setup"
external ops : int -> unit = "bench_ops"
external teardown : unit -> unit = "bench_teardown"
external now_ns : unit -> int = "bench_now_ns"
external cpu_ns : unit -> int = "bench_cpu_ns"

let arg i default =
  if Array.length Sys.argv > i then int_of_string Sys.argv.(i) else default

let anon_huge_kb () =
  try
    let ic = open_in "/proc/self/smaps_rollup" in
    let rec find () =
      match input_line ic with
      | line when String.length line > 14 && String.sub line 0 14 = "AnonHugePages:" ->
        Scanf.sscanf (String.sub line 14 (String.length line - 14)) " %d" (fun kb -> kb)
      | _ -> find ()
      | exception End_of_file -> -1 in
    let kb = find () in
    close_in ic; kb
  with Sys_error _ -> -1

let () =
  let roots = arg 1 4_000_000 and rounds = arg 2 20
  and per_round = arg 3 1_000_000 and major_every = arg 4 5 in
  let t0 = now_ns () in
  setup roots;
  let t1 = now_ns () and c1 = cpu_ns () in
  for round = 1 to rounds do
    ops per_round;
    if round mod major_every = 0 then Gc.major () else Gc.minor ()
  done;
  let t2 = now_ns () and c2 = cpu_ns () in
  let huge = anon_huge_kb () in
  let st = Option.get (Boxroot.stats ()) in
  teardown ();
  Printf.printf "setup_ms=%.1f rounds_ms=%.1f rounds_cpu_ms=%.1f minor_scan_ms=%.1f major_scan_ms=%.1f \
                 minor_scans=%d major_scans=%d chunks=%d huge_chunks=%d anon_huge_kb=%d\n"
    (float (t1 - t0) /. 1e6) (float (t2 - t1) /. 1e6) (float (c2 - c1) /. 1e6)
    (float st.minor_scan_ns /. 1e6) (float st.major_scan_ns /. 1e6)
    st.minor_scans st.major_scans st.chunks st.huge_page_chunks huge
