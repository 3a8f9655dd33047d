(* Many pools on a small OCaml heap. The runtime sizes each domain's mark
   stack by that domain's own major heap, which does not include our
   pools: however pools reach the marker, their number must not overflow
   the mark stack, nor make a major cycle cost more than linear time.
   The roots live in C memory (many_pools_stubs.c) and the OCaml heap
   stays tiny; each scenario runs two Gc.full_major and then checks every
   surviving root. Run with and without systhreads linked (their hook
   pushes an entry of its own, which changes how the stack grows). *)

type root_set (* C memory, disguised as an immediate *)

external fill : int -> int -> int -> root_set = "mp_fill"
external wrong : root_set -> int = "mp_wrong"
external clear : root_set -> unit = "mp_clear"
external fail_directory_growth_after : int -> unit = "mp_fail_directory_growth_after"

let failures = ref 0 and checks = ref 0
let check cond fmt =
  Printf.ksprintf (fun msg ->
      incr checks;
      if not cond then begin incr failures; Printf.printf "FAIL: %s\n%!" msg end) fmt

let env_int name default =
  match Sys.getenv_opt name with
  | Some s -> (try int_of_string s with _ -> default)
  | None -> default

let pools () =
  match Boxroot.stats () with
  | Some s -> s.Boxroot.pools_young + s.pools_old
  | None -> 0

(* One scenario: n roots, every keep-th kept, every blocks-th survivor a
   string. Returns the time of the first Gc.full_major per pool. *)
let scenario ~name ~n ~keep ~blocks =
  let set = fill n keep blocks in
  let p = pools () in
  let t0 = Unix.gettimeofday () in
  Gc.full_major ();
  let t1 = Unix.gettimeofday () in
  Gc.full_major ();
  let t2 = Unix.gettimeofday () in
  let bad = wrong set in
  Printf.printf "%s: %d roots, %d kept, %d pools: full_major %.3f s then %.3f s\n%!"
    name n ((n + keep - 1) / keep) p (t1 -. t0) (t2 -. t1);
  check (bad = 0) "%s: %d roots lost or changed" name bad;
  clear set;
  Gc.full_major ();
  (p, (t1 -. t0) /. float (max p 1))

let pool_slots = 2000 (* about: BOXROOT__POOL_SIZE / 8 *)

(* How often the runtime grew the mark stack while a child process (this
   program, argument "growth") held [pools] pools through one major
   cycle. Counted from the runtime's GC log (OCAMLRUNPARAM v=0x800), whose
   "Major slice" lines show that the log works. Entries of more than 64
   words, one per pool, made the stack grow by a few entries at a time,
   thousands of times, or overflow without systhreads. *)
let mark_stack_growths ~pools =
  let log = Filename.temp_file "many_pools" ".log" in
  let fd = Unix.openfile log [ O_WRONLY; O_TRUNC ] 0o600 in
  let env = Array.append [| "OCAMLRUNPARAM=v=0x800" |] (Unix.environment ()) in
  let pid =
    Unix.create_process_env Sys.executable_name
      [| Sys.executable_name; "growth"; string_of_int pools |] env
      Unix.stdin Unix.stdout fd in
  Unix.close fd;
  let _, status = Unix.waitpid [] pid in
  let ic = open_in log in
  let count_of s line =
    let n = String.length s in
    let rec at i = i + n <= String.length line && (String.sub line i n = s || at (i + 1)) in
    if at 0 then 1 else 0 in
  let growths = ref 0 and slices = ref 0 in
  (try
     while true do
       let line = input_line ic in
       growths := !growths + count_of "Growing mark stack" line;
       slices := !slices + count_of "Major slice" line
     done
   with End_of_file -> ());
  close_in ic;
  Sys.remove log;
  (status = Unix.WEXITED 0, !growths, !slices)

let run variant =
  if Array.length Sys.argv > 2 && Sys.argv.(1) = "growth" then begin
    let pools = int_of_string Sys.argv.(2) in
    let set = fill (pools * pool_slots) 1 0 in
    Gc.full_major ();
    exit (if wrong set = 0 then 0 else 1)
  end;
  let small = env_int "BOXROOT_MANY_POOLS_SMALL" 10_000 in
  let large = env_int "BOXROOT_MANY_POOLS_LARGE" 100_000 in
  (* A directory that cannot grow (out of memory): its pools are marked
     slot by slot. First, while no directory has room yet. *)
  fail_directory_growth_after 0;
  let _ = scenario ~name:"no directory" ~n:(small * pool_slots / 10) ~keep:10 ~blocks:3 in
  fail_directory_growth_after (-1);
  (* Dense: every root kept, immediates only. *)
  let p_small, per_pool_small =
    scenario ~name:"dense" ~n:(small * pool_slots) ~keep:1 ~blocks:0 in
  check (p_small >= small * 9 / 10) "dense: %d pools, %d wanted" p_small small;
  (* Sparse: 1 root in 1000 kept, some holding blocks. *)
  let p, _ = scenario ~name:"sparse" ~n:(small * pool_slots) ~keep:1000 ~blocks:7 in
  check (p >= small * 9 / 10) "sparse: %d pools, %d wanted" p small;
  (* The same on a spawned domain, whose mark stack is its own. *)
  let p, _ =
    Domain.join (Domain.spawn (fun () ->
        scenario ~name:"dense, spawned domain" ~n:(small * pool_slots) ~keep:1 ~blocks:3))
  in
  check (p >= small * 9 / 10) "spawned domain: %d pools, %d wanted" p small;
  (* Ten times as many pools: the first major cycle's time per pool must
     not grow with their number (it grew linearly, the cycle
     quadratically, when each pool was one mark-stack entry and the stack
     grew by its few small entries at each overflow). A generous bound: a
     noisy machine, and the larger case misses the caches more. *)
  if large > small then begin
    let p_large, per_pool_large =
      scenario ~name:"dense, large" ~n:(large * pool_slots) ~keep:1 ~blocks:0 in
    check (p_large >= large * 9 / 10) "large: %d pools, %d wanted" p_large large;
    let ratio = per_pool_large /. per_pool_small in
    Printf.printf "time per pool, %d pools / %d pools: %.2f\n%!" p_large p_small ratio;
    check (ratio < 4.) "time per pool grows with the number of pools: %.2fx" ratio
  end;
  let pools = env_int "BOXROOT_MANY_POOLS_GROWTH" 5_000 in
  let ok, growths, slices = mark_stack_growths ~pools in
  Printf.printf "%d pools: the mark stack grew %d times (%d major slices logged)\n%!"
    pools growths slices;
  check ok "growth: the child process failed";
  check (slices > 0) "growth: the runtime's GC log shows no major slice";
  check (growths <= 2) "growth: the mark stack grew %d times" growths;
  Printf.printf "many_pools (%s): %d passed, %d failed\n%!" variant
    (!checks - !failures) !failures;
  exit (if !failures = 0 then 0 else 1)
