(* Weak roots (boxroot.h) against strong boxroots and against what
   programs do today: a boxroot, or a generational global root, holding a
   one-element Weak.t that OCaml reads (Weak.get).

   weak_bench.exe ops [REPS]
     ns per create+delete and per get, each implementation in turn within
     a repetition (interleaved), REPS repetitions (default 5); prints one
     line per measurement: "ops impl=... op=... rep=... ns=...".
     Weak gets are measured twice: with no marking under way (5.5's
     sweep-only phase, right after Gc.full_major; on 5.1-5.4 marking is
     always under way, weak.c W4) and during marking; and gets again in
     a loop timed in C ("get-c"), without the OCaml-to-C call per get
     that bounds the ratios of the OCaml-side loop.
   weak_bench.exe pause N [CYCLES]
   weak_bench.exe pause-none N [CYCLES]
     with N values in an OCaml array, and N weak roots to them (pause) or
     none (pause-none, the baseline): the array keeps the values
     alive (so every cycle reads them all, W3): the median over CYCLES
     major cycles (default 12) of the root-marking pause
     (EV_MAJOR_MARK_ROOTS), of the stop-the-world section that ends a
     cycle (EV_MAJOR_GC_CYCLE_DOMAINS, where the fallback of W3 would
     run), of Gc.major; and the clearing time per cycle, in slices and
     stop-the-world, from the statistics.
   weak_bench.exe table drain|poll N [CYCLES [PER_MILLE]]
     a C table of N weak entries, each to a value of an OCaml array; each
     major cycle PER_MILLE/1000 (default 10: 1%) of the values are replaced (so the entries of the
     old ones die), then the table is cleaned: by draining the notices
     of notifying roots (drain), or by reading every entry (poll, plain
     weak roots). The median over CYCLES cycles (default 20, after 3
     warm-up cycles) of the cleaning, in ms, and of Gc.major (which
     includes the clearing, and recording the notices); then the
     entries removed get a root to their new value. *)

external create : 'a -> int = "wb_create" [@@noalloc]
external get : int -> Obj.t = "wb_get" [@@noalloc]
external delete : int -> unit = "wb_delete" [@@noalloc]
external weak_create : 'a -> int = "wb_weak_create" [@@noalloc]
external weak_get : int -> Obj.t = "wb_weak_get" [@@noalloc]
external weak_delete : int -> unit = "wb_weak_delete" [@@noalloc]
external global_create : 'a -> int = "wb_global_create" [@@noalloc]
external global_get : int -> Obj.t = "wb_global_get" [@@noalloc]
external global_delete : int -> unit = "wb_global_delete" [@@noalloc]
external weak_stats : unit -> int * int * int = "wb_weak_stats"
external get_loop : int -> int array -> int -> float = "wb_get_loop"
external table_init : 'a array -> bool -> unit = "wb_table_init"
external table_clean : unit -> float = "wb_table_clean"
external table_removed : unit -> int = "wb_table_removed"
external table_refill : 'a array -> unit = "wb_table_refill"
external table_free : unit -> unit = "wb_table_free"

let median l =
  let a = Array.of_list l in
  Array.sort compare a;
  let k = Array.length a in
  if k = 0 then nan else if k mod 2 = 1 then a.(k / 2) else (a.(k / 2 - 1) +. a.(k / 2)) /. 2.

let now () = Unix.gettimeofday ()

(* ---- ops ---- *)

let n_roots = 1000
let value_pool = Array.init n_roots (fun i -> ref i)
let sink = ref 0

let time_per_op ops f =
  let t0 = now () in
  f ();
  (now () -. t0) *. 1e9 /. float_of_int ops

let kind_index = function `Strong -> 0 | `Weak -> 1 | `Weak_t_boxroot -> 2 | `Weak_t_global -> 3

let create_delete kind iters =
  let v = value_pool.(0) in
  time_per_op iters (fun () ->
      match kind with
      | `Strong -> for _ = 1 to iters do delete (create v) done
      | `Weak -> for _ = 1 to iters do weak_delete (weak_create v) done
      | `Weak_t_boxroot ->
        for _ = 1 to iters do
          let w = Weak.create 1 in
          Weak.set w 0 (Some v);
          delete (create w)
        done
      | `Weak_t_global ->
        for _ = 1 to iters do
          let w = Weak.create 1 in
          Weak.set w 0 (Some v);
          global_delete (global_create w)
        done)

let gets ?(in_c = false) kind rounds =
  let handles = match kind with
    | `Strong -> Array.map create value_pool
    | `Weak -> Array.map weak_create value_pool
    | `Weak_t_boxroot ->
      Array.map (fun v -> let w = Weak.create 1 in Weak.set w 0 (Some v); create w) value_pool
    | `Weak_t_global ->
      Array.map (fun v -> let w = Weak.create 1 in Weak.set w 0 (Some v); global_create w)
        value_pool in
  let read_weak_t (w : Obj.t) =
    match Weak.get (Obj.obj w : int ref Weak.t) 0 with Some r -> !r | None -> 0 in
  let ns = if in_c then get_loop (kind_index kind) handles rounds else
    time_per_op (rounds * n_roots) (fun () ->
      let s = ref 0 in
      for _ = 1 to rounds do
        match kind with
        | `Strong -> Array.iter (fun h -> s := !s + !(Obj.obj (get h) : int ref)) handles
        | `Weak -> Array.iter (fun h -> s := !s + !(Obj.obj (weak_get h) : int ref)) handles
        | `Weak_t_boxroot -> Array.iter (fun h -> s := !s + read_weak_t (get h)) handles
        | `Weak_t_global -> Array.iter (fun h -> s := !s + read_weak_t (global_get h)) handles
      done;
      sink := !sink + !s) in
  Array.iter (match kind with
      | `Strong | `Weak_t_boxroot -> delete
      | `Weak -> weak_delete
      | `Weak_t_global -> global_delete) handles;
  ns

let name = function
  | `Strong -> "boxroot" | `Weak -> "weak" | `Weak_t_boxroot -> "boxroot+Weak.t"
  | `Weak_t_global -> "global+Weak.t"

(* Marking under way: allocate and collect a little (OCaml 5.5 starts a
   cycle's marking in a minor collection after a sweep-only phase). *)
let marking () =
  for _ = 1 to 200 do ignore (Sys.opaque_identity (Array.make 1000 0)); ignore (Gc.major_slice 0); Gc.minor () done

let ops reps =
  let kinds = [ `Strong; `Weak; `Weak_t_boxroot; `Weak_t_global ] in
  let line impl op rep ns = Printf.printf "ops impl=%s op=%s rep=%d ns=%.2f\n%!" impl op rep ns in
  for rep = 1 to reps do
    List.iter (fun k -> line (name k) "create+delete" rep (create_delete k 2_000_000)) kinds;
    List.iter (fun k ->
        Gc.full_major ();
        line (name k) "get" rep (gets k 2_000);
        Gc.full_major ();
        line (name k) "get-c" rep (gets ~in_c:true k 2_000)) kinds;
    marking ();
    line "weak" "get-marking" rep (gets `Weak 200);
    marking ();
    line "boxroot" "get-marking" rep (gets `Strong 200);
    marking ();
    line "weak" "get-c-marking" rep (gets ~in_c:true `Weak 200);
    marking ();
    line "boxroot" "get-c-marking" rep (gets ~in_c:true `Strong 200)
  done;
  ignore (Sys.opaque_identity !sink)

(* ---- pause ---- *)

let pause ~weak n cycles =
  let vals = Array.init n (fun i -> ref i) in
  let ws = if weak then Array.map weak_create vals else Array.make n 0 in
  Gc.full_major ();
  Runtime_events.start ();
  let cursor = Runtime_events.create_cursor None in
  let started = Hashtbl.create 8 and spans = Hashtbl.create 8 in
  let watched = Runtime_events.[ EV_MAJOR_MARK_ROOTS; EV_MAJOR_GC_CYCLE_DOMAINS ] in
  let runtime_begin ring ts phase =
    if List.mem phase watched then
      Hashtbl.replace started (ring, phase) (Runtime_events.Timestamp.to_int64 ts) in
  let runtime_end ring ts phase =
    match Hashtbl.find_opt started (ring, phase) with
    | Some t0 when List.mem phase watched ->
      let dt = Int64.to_float (Int64.sub (Runtime_events.Timestamp.to_int64 ts) t0) /. 1e6 in
      Hashtbl.replace spans phase (dt :: (try Hashtbl.find spans phase with Not_found -> []))
    | _ -> () in
  let callbacks = Runtime_events.Callbacks.create ~runtime_begin ~runtime_end () in
  ignore (Runtime_events.read_poll cursor callbacks None);
  Hashtbl.reset spans;
  let s0, stw0, _ = weak_stats () in
  let majors = List.init cycles (fun _ ->
      let t0 = now () in
      Gc.major ();
      ignore (Runtime_events.read_poll cursor callbacks None);
      (now () -. t0) *. 1e3) in
  let s1, stw1, _ = weak_stats () in
  let med p = median (try Hashtbl.find spans p with Not_found -> []) in
  let ok = ref true in
  if weak then begin
    Array.iteri (fun i w -> if weak_get w != Obj.repr vals.(i) then ok := false) ws;
    Array.iter weak_delete ws
  end;
  Printf.printf "pause weak_roots=%b n=%d cycles=%d mark_roots_median_ms=%.4f cycle_stw_median_ms=%.4f \
                 major_median_ms=%.3f clear_slices_ms_per_cycle=%.4f \
                 clear_stw_ms_per_cycle=%.4f values_ok=%b\n%!"
    weak n cycles (med Runtime_events.EV_MAJOR_MARK_ROOTS)
    (med Runtime_events.EV_MAJOR_GC_CYCLE_DOMAINS) (median majors)
    (float_of_int (s1 - s0) /. 1e6 /. float_of_int cycles)
    (float_of_int (stw1 - stw0) /. 1e6 /. float_of_int cycles) !ok

(* ---- table ---- *)

let table ~drain n cycles per_mille =
  let vals = Array.init n (fun i -> ref i) in
  Gc.full_major ();
  table_init vals drain;
  Gc.full_major ();
  Gc.full_major ();
  ignore (table_clean ());
  table_refill vals;
  let rng = Random.State.make [| 38 |] in
  let warmup = 3 in
  let cleans = ref [] and majors = ref [] and removed = ref 0 in
  for c = 1 to warmup + cycles do
    for _ = 1 to n / 1000 * per_mille do
      let i = Random.State.int rng n in
      vals.(i) <- ref (-i)
    done;
    let t0 = now () in
    Gc.major ();
    let dt_major = (now () -. t0) *. 1e3 in
    let ns = table_clean () in
    let k = table_removed () in
    if c > warmup then begin
      cleans := ns /. 1e6 :: !cleans;
      majors := dt_major :: !majors;
      removed := !removed + k
    end;
    table_refill vals
  done;
  table_free ();
  Printf.printf "table mode=%s n=%d per_mille=%d cycles=%d clean_median_ms=%.4f major_median_ms=%.3f \
                 removed_per_cycle=%.1f\n%!"
    (if drain then "drain" else "poll") n per_mille cycles (median !cleans) (median !majors)
    (float_of_int !removed /. float_of_int cycles);
  ignore (Sys.opaque_identity vals)

let () =
  match Array.to_list Sys.argv |> List.tl with
  | [ "table"; m; n ] -> table ~drain:(m = "drain") (int_of_string n) 20 10
  | [ "table"; m; n; c ] -> table ~drain:(m = "drain") (int_of_string n) (int_of_string c) 10
  | [ "table"; m; n; c; r ] ->
    table ~drain:(m = "drain") (int_of_string n) (int_of_string c) (int_of_string r)
  | [ "ops" ] -> ops 5
  | [ "ops"; r ] -> ops (int_of_string r)
  | [ "pause"; n ] -> pause ~weak:true (int_of_string n) 12
  | [ "pause"; n; c ] -> pause ~weak:true (int_of_string n) (int_of_string c)
  | [ "pause-none"; n ] -> pause ~weak:false (int_of_string n) 12
  | [ "pause-none"; n; c ] -> pause ~weak:false (int_of_string n) (int_of_string c)
  | _ -> prerr_endline "usage: weak_bench.exe ops [REPS] | pause N [CYCLES] | pause-none N [CYCLES] \
                 | table drain|poll N [CYCLES [PER_MILLE]]"; exit 2
