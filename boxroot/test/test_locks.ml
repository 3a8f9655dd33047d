(* Lock detection with the usual initialisation order: Thread (linked
   before the test's modules) is initialised before boxroot is set up by
   the first boxroot_create. See lock_checks.ml.

   First, threads are woken while the main thread holds the lock and then
   sets boxroot up: they were waiting for the lock in systhreads' hook,
   before boxroot's was installed, so boxroot's hook never sees them take
   it. Their creations must work all the same. *)
open Boxroot_test

let waiters_take_the_lock_unseen () =
  let nthreads = 4 in
  let m = Mutex.create () and c = Condition.create () and go = ref false in
  let failures = Array.make nthreads (-1) in
  let body i () =
    Mutex.lock m;
    while not !go do Condition.wait c m done;
    Mutex.unlock m;
    let n = ref 0 in
    for k = 1 to 100 do
      (match try_create (ref k) with
       | Some r -> delete r
       | None -> incr n);
      if k mod 10 = 0 then Thread.yield ()
    done;
    failures.(i) <- !n in
  let ts = List.init nthreads (fun i -> Thread.create (body i) ()) in
  Thread.delay 0.05;
  check (status () = not_setup) "boxroot set up too early: nothing tested";
  Mutex.lock m;
  go := true;
  Condition.broadcast c;
  Mutex.unlock m;
  (* Keep the lock (the tick thread forces a switch only after 50 ms)
     while the waiters reach systhreads' leave hook, then set up. *)
  let t0 = Sys.time () in
  while Sys.time () -. t0 < 0.01 do () done;
  delete (create (ref 0));
  List.iter Thread.join ts;
  Array.iteri (fun i n ->
      check (n = 0) "thread %d, woken before setup: %d creations failed" i n) failures

(* OCaml 4.14: another library replaces boxroot's enter hook again and
   again. Each time, no thread counts as holding the lock until boxroot
   takes its hooks back, with an enter hook of its own that it never used
   before; once it has none left (ocaml_compat.h), no thread counts as
   holding the lock on the fast paths, and roots work all the same,
   through the slow paths. *)
external replace_enter_hook : unit -> unit = "test_replace_enter_hook"

let enter_hooks_used_up () =
  if Lock_checks.is_ocaml_4 then begin
    let replaced = ref 0 in
    while Lock_checks.blocking_hooks_are_boxroots () && !replaced < 1000 do
      replace_enter_hook ();
      incr replaced;
      check (Lock_checks.locked_domain () = -1) "enter hook replaced %d times: lock seen" !replaced;
      check (Lock_checks.locked_in_blocking_section () = -1)
        "enter hook replaced %d times, blocking section: lock seen" !replaced;
      Lock_checks.roots_work (Printf.sprintf "enter hook replaced %d times" !replaced);
      if Lock_checks.blocking_hooks_are_boxroots () then
        check (Lock_checks.locked_domain () = 0)
          "enter hook replaced %d times, hooks taken back: lock not seen" !replaced
    done;
    check (!replaced = 64) "boxroot took its hooks back %d times, not 63" (!replaced - 1);
    check (Lock_checks.locked_in_blocking_section () = -1)
      "enter hooks used up, blocking section: lock seen";
    Lock_checks.roots_work "enter hooks used up";
    let r = create (ref 7) in
    Gc.full_major ();
    check (!(Obj.obj (get r) : int ref) = 7) "enter hooks used up: root lost its value";
    delete r
  end

let () =
  waiters_take_the_lock_unseen ();
  Lock_checks.run ~after:enter_hooks_used_up "test_locks"
