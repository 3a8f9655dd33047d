(* Roots deleted from custom blocks' finalizers (boxroot.h, "Roots in
   finalizers"). A holder (finalizers_stubs.c) is a custom block with a
   strong and a weak root of a value of its own, whose finalizer deletes
   both. Tasks (domains on OCaml 5, systhreads on 4.14) make holders and
   drop them at three ages, so that finalizers run:
   - in minor collections: a third of the holders dies young;
   - in major sweeps: a third lives in a ring of RING_MEDIUM holders,
     across minor collections;
   - during Gc.compact: a third lives in a ring of RING_LONG holders,
     while task 0 compacts the heap every COMPACT_EVERY holders (on
     OCaml 5 compaction finalizes the garbage of the pools it empties;
     on 4.14 the full majors it starts do); and in another domain than
     their own: each task hands its long-lived holders to the main
     domain, which drops them after the task has ended.
   Each value is checked through both roots when its holder is made and
   again when a surviving holder is dropped. At the end, after full
   majors: every holder was finalized exactly once, and the statistics
   count no root, strong or weak, alive.
   BOXROOT_FINALIZERS_HOLDERS: holders in all (300,000). *)
open Boxroot_test

type holder
external init : int -> unit = "fin_init"
external make : int -> 'a -> holder = "fin_make"
external check_holder : holder -> bool = "fin_check"
external id : holder -> int = "fin_id"
external counts : unit -> int * int * int = "fin_counts"
external set_compacting : bool -> unit = "fin_set_compacting"
external during_compaction : unit -> int = "fin_during_compaction"

let holders = env_int "BOXROOT_FINALIZERS_HOLDERS" 300_000
let tasks = 3
let ring_medium = 2_000
let ring_long = 20_000
let compact_every = 25_000

(* Made and checked; `bad` counts values read back wrong. *)
let make_checked bad i =
  let h = make i (i, string_of_int i) in
  if not (check_holder h) then Atomic.incr bad;
  h

let drop bad ring k =
  match ring.(k) with
  | Some h ->
    if not (check_holder h) then Atomic.incr bad;
    ring.(k) <- None
  | None -> ()

let compactions = Atomic.make 0

let compact () =
  set_compacting true;
  Gc.compact ();
  set_compacting false;
  Atomic.incr compactions

(* Task t makes the holders of ids [first, last); returns its
   long-lived holders still alive. *)
let task bad t first last () =
  let medium = Array.make ring_medium None and long = Array.make ring_long None in
  for i = first to last - 1 do
    let h = make_checked bad i in
    (match i mod 3 with
     | 0 -> ()
     | 1 -> let k = i / 3 mod ring_medium in drop bad medium k; medium.(k) <- Some h
     | _ -> let k = i / 3 mod ring_long in drop bad long k; long.(k) <- Some h);
    if t = 0 && (i - first + 1) mod compact_every = 0 then compact ()
  done;
  Array.iteri (fun k _ -> drop bad medium k) medium;
  long

(* Checks the long-lived holders that the tasks handed back: they are
   dropped when this returns, and finalized by this domain. *)
let[@inline never] check_handed bad handed =
  let alive = ref 0 in
  List.iter (Array.iter (function
      | Some h -> incr alive; if not (check_holder h) then Atomic.incr bad
      | None -> ())) handed;
  !alive

let () =
  init holders;
  let bad = Atomic.make 0 in
  let t0 = Unix.gettimeofday () in
  let per = holders / tasks in
  let running =
    List.init tasks (fun t ->
        let last = if t = tasks - 1 then holders else (t + 1) * per in
        Par.spawn (task bad t (t * per) last))
  in
  let alive = check_handed bad (List.map Par.join running) in
  compact ();
  Gc.full_major ();
  Gc.full_major ();
  let never, once, more = counts () in
  let s = stats () in
  Printf.printf "test_finalizers (%s, %d tasks): %d holders, %d finalized once, \
                 %d never, %d more than once; %d while a task was in Gc.compact \
                 (%d calls, their major cycles included); %d handed to the main \
                 domain; %.2f s\n%!"
    Par.kind tasks holders once never more (during_compaction ()) (Atomic.get compactions)
    alive (Unix.gettimeofday () -. t0);
  check (Atomic.get bad = 0) "%d values read back wrong" (Atomic.get bad);
  check (never = 0) "%d holders never finalized" never;
  check (more = 0) "%d holders finalized more than once" more;
  check (once = holders) "%d holders finalized once, of %d" once holders;
  check (s.roots_alive = 0) "%d roots alive at the end (left by the finalizers)" s.roots_alive;
  check (s.weak_roots_alive = 0) "%d weak roots alive at the end (left by the finalizers)"
    s.weak_roots_alive;
  finish "test_finalizers"
