(* Failure paths: every failure is a NULL or false
   with a reason, and disturbs nothing already rooted.

   - The chunk allocator refuses memory (test-only injection point):
     boxroot_create returns NULL with ENOMEM, boxroot_modify returns false
     and leaves its root unchanged, and the roots already alive keep
     their values through collections.
   - No domain lock (blocking section, or a thread OCaml never saw):
     create and modify fail with EPERM; delete works.
   - After boxroot_teardown, create fails with BOXROOT_TORE_DOWN. *)
open Boxroot_test

type small = { id : int; text : string }
let young id = { id; text = string_of_int id }
let holds v id =
  let s : small = Obj.obj v in
  s.id = id && s.text = string_of_int id

let () =
  check (status () = not_setup) "status before any root: %d" (status ());
  (* Fill some pools, keep every root. *)
  let roots = Array.init 5_000 (fun i -> create (young i)) in
  Gc.full_major ();
  check (status () = running) "status after creating roots: %d" (status ());

  (* 1. The OS refuses memory. *)
  fail_pool_allocations_after 0;
  let created = ref [] and failed_with = ref None in
  (try
     for i = 1 to 100_000 do
       clear_errno ();
       match try_create (young (-i)) with
       | Some r -> created := r :: !created
       | None -> failed_with := Some (errno (), error_string ()); raise Exit
     done
   with Exit -> ());
  (match !failed_with with
   | None -> check false "create never failed while pool allocation was refused"
   | Some (err, msg) ->
     check (err = enomem ()) "create failure: errno %d, expected ENOMEM" err;
     check (String.length msg > 0 && String.sub msg 0 14 = "boxroot_create")
       "create failure reason: %S" msg;
     Printf.printf "create failed as expected after %d more roots: %s\n"
       (List.length !created) msg);
  check (status () = running) "status after an allocation failure: %d" (status ());
  (* modify needs a young pool for a young value in an old pool. *)
  Gc.minor ();
  let victim = roots.(17) in
  clear_errno ();
  (match try_modify victim (young 99_999) with
   | Some _ -> check false "modify succeeded although no pool could be allocated"
   | None ->
     check (errno () = enomem ()) "modify failure: errno %d, expected ENOMEM" (errno ());
     check (holds (get victim) 17) "modify failure changed the root");
  Gc.full_major ();
  Gc.compact ();
  Array.iteri (fun i r -> check (holds (get r) i) "root %d disturbed by failures" i) roots;
  List.iteri (fun k r ->
      let i = List.length !created - k in
      check (holds (get r) (-i)) "root created before the failure lost its value") !created;
  fail_pool_allocations_after (-1);
  let r = create (young 123) in
  check (holds (get r) 123) "create works again once memory is back";
  delete r;
  List.iter delete !created;

  (* 2. Without the domain lock. *)
  let err = create_unlocked (young 1) in
  check (err = eperm ()) "create in a blocking section: errno %d, expected EPERM" err;
  Gc.minor ();
  let err = modify_unlocked roots.(3) (young 5) in
  check (err = eperm ()) "modify in a blocking section: errno %d, expected EPERM" err;
  check (holds (get roots.(3)) 3) "failed modify changed the root";
  let err = create_foreign_thread 7 in
  check (err = eperm ()) "create in a foreign thread: errno %d, expected EPERM" err;
  delete_unlocked roots.(0);
  delete_foreign_thread roots.(1);
  Gc.full_major ();
  for i = 2 to Array.length roots - 1 do
    check (holds (get roots.(i)) i) "root %d after unlocked deletes" i;
    delete roots.(i)
  done;
  Gc.full_major ();
  (match Boxroot.stats () with
   | None -> check false "no stats while running"
   | Some s ->
     check (s.roots_alive = 0) "roots alive at the end: %d" s.roots_alive;
     check (s.slots_in_use = 0) "slots in use at the end: %d" s.slots_in_use;
     check (s.deleted_purely_remote = 2) "purely remote deletes: %d" s.deleted_purely_remote);

  (* 3. Teardown. *)
  teardown ();
  check (status () = tore_down) "status after teardown: %d" (status ());
  clear_errno ();
  (match try_create (young 1) with
   | Some _ -> check false "create succeeded after teardown"
   | None ->
     check (errno () = enotsup ()) "create after teardown: errno %d" (errno ());
     Printf.printf "after teardown: %s\n" (error_string ()));
  check (not (setup ())) "setup succeeded after teardown";
  Gc.full_major ();
  finish "test_failures"
