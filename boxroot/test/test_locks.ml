(* Lock detection with the usual initialisation order: Thread (linked
   before the test's modules) is initialised before boxroot is set up by
   the first boxroot_create. See lock_checks.ml. *)
let () = Lock_checks.run "test_locks"
