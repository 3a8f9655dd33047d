(* Microbenchmark: nanoseconds per boxroot_delete, by kind.

   - local: by the domain that created the roots, lock held;
   - remote-domain: by another domain, holding its own lock (OCaml 5);
   - no lock (purely remote): by a plain C thread the runtime never saw.

   Each measurement creates BOXROOT_BENCH_ROOTS roots (default 100_000)
   holding immediates, then times a C loop deleting all of them, in
   creation order or shuffled. Kinds are interleaved within each of
   BOXROOT_BENCH_RUNS rounds (default 11); we print the minimum and the
   median over rounds. Remote deletions leave work for the owner's next
   scan: "+ next scan" is the time boxroot's scan takes at the minor
   collection that follows (collecting the delayed frees of young pools),
   per root, minus the same after local deletions.

   Run: eval "$(tools/toolchain.sh)" && dune exec boxroot/test/bench_delete.exe *)
open Boxroot_test

type batch
external create_batch : int -> bool -> batch = "bench_create"
external delete_batch : batch -> int = "bench_delete"
external delete_batch_no_lock : batch -> int = "bench_delete_no_lock"

let n = env_int "BOXROOT_BENCH_ROOTS" 100_000
let runs = env_int "BOXROOT_BENCH_RUNS" 11

type kind = Local | Remote_domain | No_lock
let kinds = if Par.kind = "domains" then [ Local; Remote_domain; No_lock ] else [ Local; No_lock ]
let name = function
  | Local -> "local" | Remote_domain -> "remote-domain" | No_lock -> "no lock (purely remote)"


(* Remote-domain deletions run on a helper that stays alive: a domain
   that terminates collects everything (no minor collection left to time). *)
type helper = { lock : Mutex.t; cond : Condition.t; mutable job : batch option;
                mutable result : int option; mutable quit : bool }
let helper = { lock = Mutex.create (); cond = Condition.create (); job = None;
               result = None; quit = false }

let helper_loop () =
  Mutex.lock helper.lock;
  while not helper.quit do
    match helper.job with
    | Some b ->
      helper.job <- None;
      Mutex.unlock helper.lock;
      let ns = delete_batch b in
      Mutex.lock helper.lock;
      helper.result <- Some ns;
      Condition.broadcast helper.cond
    | None -> Condition.wait helper.cond helper.lock
  done;
  Mutex.unlock helper.lock

let delete_on_helper b =
  Mutex.lock helper.lock;
  helper.job <- Some b;
  Condition.broadcast helper.cond;
  while helper.result = None do Condition.wait helper.cond helper.lock done;
  let ns = Option.get helper.result in
  helper.result <- None;
  Mutex.unlock helper.lock;
  ns

(* ns per delete, and ns per root of the minor collection that follows. *)
let measure kind ~shuffle =
  Gc.full_major ();
  let b = create_batch n shuffle in
  let ns = match kind with
    | Local -> delete_batch b
    | No_lock -> delete_batch_no_lock b
    | Remote_domain -> delete_on_helper b in
  let scan_ns () = match Boxroot.stats () with Some s -> s.minor_scan_ns | None -> 0 in
  let t0 = scan_ns () in
  Gc.minor ();
  let scan = scan_ns () - t0 in
  (float ns /. float n, float scan /. float n)

let median l =
  let a = Array.of_list l in
  Array.sort compare a;
  a.(Array.length a / 2)
let minimum l = List.fold_left min infinity l

let () =
  Printf.printf "bench_delete: OCaml %s, %d roots per measurement, %d rounds\n%!"
    Sys.ocaml_version n runs;
  delete (create (ref 0));
  let helper_task =
    if List.mem Remote_domain kinds then Some (Par.spawn helper_loop) else None in
  let cases = List.concat_map (fun k -> [ (k, false); (k, true) ]) kinds in
  let results = Hashtbl.create 8 in
  for round = 1 to runs do
    (* Rotate the order of the cases from round to round. *)
    let rot = round mod List.length cases in
    let order = List.filteri (fun i _ -> i >= rot) cases @ List.filteri (fun i _ -> i < rot) cases in
    List.iter (fun (k, shuffle) ->
        let r = measure k ~shuffle in
        Hashtbl.replace results (k, shuffle)
          (r :: (try Hashtbl.find results (k, shuffle) with Not_found -> [])))
      order
  done;
  Printf.printf "%-26s %-9s %10s %10s %18s\n" "delete" "order" "min ns" "median ns"
    "+ next scan (med)";
  let local_minor shuffle = median (List.map snd (Hashtbl.find results (Local, shuffle))) in
  List.iter (fun (k, shuffle) ->
      let rs = Hashtbl.find results (k, shuffle) in
      let ds = List.map fst rs and ms = List.map snd rs in
      Printf.printf "%-26s %-9s %10.2f %10.2f %18.2f\n" (name k)
        (if shuffle then "shuffled" else "creation") (minimum ds) (median ds)
        (median ms -. local_minor shuffle))
    cases;
  Mutex.lock helper.lock;
  helper.quit <- true;
  Condition.broadcast helper.cond;
  Mutex.unlock helper.lock;
  Option.iter Par.join helper_task
