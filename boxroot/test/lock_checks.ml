(* Lock detection: in every way a thread gains or loses the
   runtime lock, boxroot must know whether it holds it. A wrong "held"
   makes a deletion take the unsynchronised local path while another
   thread runs; a wrong "not held" makes creations fail with EPERM.
   Shared by test_locks (Thread initialised before boxroot is set up) and
   test_locks_early (boxroot set up before Thread is initialised). *)
open Boxroot_test

external locked_domain : unit -> int = "test_locked_domain"
external locked_in_blocking_section : unit -> int = "test_locked_in_blocking_section"
external locked_after_signal_in_blocking_section : int -> int
  = "test_locked_after_signal_in_blocking_section"
external blocking_hooks_are_boxroots : unit -> bool = "test_blocking_hooks_are_boxroots"
external locked_in_foreign_thread : unit -> int = "test_locked_in_foreign_thread"
external locked_in_registered_thread : unit -> int * int * int * int * int * int
  = "test_locked_in_registered_thread"
external blocking_sections_under_signals : int -> int -> int
  = "test_blocking_sections_under_signals"
external arm_exit_probe : unit -> unit = "test_arm_exit_probe"
external exit_probe_seen : unit -> int = "test_exit_probe_seen"

let is_ocaml_4 = Sys.ocaml_version.[0] = '4'
let held d = d >= 0

type small = { id : int; text : string }
let young id = { id; text = string_of_int id }
let holds_young v id =
  let s : small = Obj.obj v in
  s.id = id && s.text = string_of_int id

(* Creating and deleting roots, locally and not, must work here. *)
let roots_work where =
  let r = create (young 42) in
  Gc.minor ();
  check (holds_young (get r) 42) "%s: root lost its value" where;
  delete r;
  let r = create (young 43) in
  delete_unlocked r

let main_thread () =
  check (held (locked_domain ())) "main thread, OCaml code: lock not seen";
  check (locked_in_blocking_section () = -1) "main thread, blocking section: lock seen";
  check (held (locked_domain ())) "main thread, after a blocking section: lock not seen";
  check (locked_in_foreign_thread () = -1) "thread unknown to OCaml: lock seen";
  let before, registered, inside, root_ok, left, unregistered =
    locked_in_registered_thread () in
  check (before = -1) "C thread before caml_c_thread_register: lock seen";
  check (registered = -1) "C thread registered, outside OCaml: lock seen (%d)" registered;
  check (held inside) "C thread after caml_leave_blocking_section: lock not seen (%d)" inside;
  check (root_ok = 1) "C thread holding the lock: create/get failed";
  check (left = -1) "C thread after caml_enter_blocking_section: lock seen";
  check (unregistered = -1) "C thread after caml_c_thread_unregister: lock seen";
  roots_work "main thread"

(* Threads started by Thread.create, handing the lock over through
   blocking sections, Thread.yield, mutexes and condition variables. *)
let systhreads () =
  let nthreads = 4 and rounds = 2_000 in
  let wrong = Array.make nthreads 0 and first = Array.make nthreads (-5) in
  let m = Mutex.create () and c = Condition.create () and turn = ref 0 in
  let body i () =
    first.(i) <- locked_domain ();
    let bad cond = if cond then wrong.(i) <- wrong.(i) + 1 in
    for k = 1 to rounds do
      bad (not (held (locked_domain ())));
      Thread.yield ();
      bad (not (held (locked_domain ())));
      bad (locked_in_blocking_section () <> -1);
      if k mod 10 = 0 then begin
        (* Take turns: every thread waits on the condition in order. *)
        Mutex.lock m;
        while !turn mod nthreads <> i do Condition.wait c m done;
        incr turn;
        Condition.broadcast c;
        Mutex.unlock m;
        bad (not (held (locked_domain ())))
      end
    done;
    roots_work (Printf.sprintf "thread %d" i)
  in
  let ts = List.init nthreads (fun i -> Thread.create (body i) ()) in
  List.iter Thread.join ts;
  Array.iteri (fun i w ->
      check (held first.(i)) "thread %d at start: lock not seen" i;
      check (w = 0) "thread %d: lock state wrong %d times" i w) wrong;
  (* Preemption by the tick thread: busy threads that never block. *)
  let stop = ref false and wrong = ref 0 and iterations = ref 0 in
  let busy () =
    while not !stop do
      incr iterations;
      ignore (Sys.opaque_identity (Array.make 10 0));
      if not (held (locked_domain ())) then incr wrong
    done in
  let ts = List.init 3 (fun _ -> Thread.create busy ()) in
  Thread.delay 0.3;
  stop := true;
  List.iter Thread.join ts;
  check (!wrong = 0) "preempted threads: lock not seen %d times in %d" !wrong !iterations

(* OCaml signal handlers run with the lock; caml_enter_blocking_section
   loops when signals arrive while it releases the lock. *)
let signals () =
  let in_handler = ref 0 and handler_wrong = ref 0 in
  let previous = Sys.signal Sys.sigusr1 (Sys.Signal_handle (fun _ ->
      incr in_handler;
      if not (held (locked_domain ())) then incr handler_wrong)) in
  for _ = 1 to 100 do
    let d = locked_after_signal_in_blocking_section Sys.sigusr1 in
    check (d = -1) "blocking section entered with a signal pending: lock seen"
  done;
  let wrong = blocking_sections_under_signals Sys.sigusr1 200_000 in
  Sys.set_signal Sys.sigusr1 previous;
  check (wrong = 0) "blocking sections under a storm of signals: lock state wrong %d times" wrong;
  check (!in_handler >= 100) "signal handler ran only %d times" !in_handler;
  check (!handler_wrong = 0) "signal handler: lock not seen %d times" !handler_wrong

(* After a thread's OCaml code returned, its thread-local destructors run
   without the lock. OCaml 4.14's systhreads releases it there without
   the hooks: a known gap (ocaml_compat.h), reported, not asserted. *)
let thread_exit () =
  Thread.join (Thread.create arm_exit_probe ());
  let rec wait n =
    if exit_probe_seen () = 1000 && n > 0 then (Thread.delay 0.001; wait (n - 1)) in
  wait 5_000;
  let seen = exit_probe_seen () in
  if is_ocaml_4 then
    Printf.printf "thread-local destructor after Thread.create's function: lock %s (known 4.14 gap)\n"
      (if held seen then "seen" else "not seen")
  else check (seen = -1) "thread-local destructor after the thread ended: lock seen (%d)" seen

(* `after`: what the caller checks last, before the summary. *)
let run ?(after = fun () -> ()) name =
  Printf.printf "%s: OCaml %s, boxroot hooks installed: %b\n%!" name Sys.ocaml_version
    (blocking_hooks_are_boxroots ());
  (* Sets boxroot up (test_locks), or, in test_locks_early, has it take
     its hooks back from systhreads. *)
  roots_work "first root";
  check (blocking_hooks_are_boxroots ()) "boxroot's hooks not installed after a creation";
  main_thread ();
  systhreads ();
  signals ();
  thread_exit ();
  Gc.full_major ();
  Gc.full_major ();
  (match Boxroot.stats () with
   | None -> check false "no stats"
   | Some s -> check (s.slots_in_use = 0) "%d slots still in use" s.slots_in_use);
  after ();
  finish name
