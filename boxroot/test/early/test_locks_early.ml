(* Lock detection when boxroot is set up before the threads library is
   initialised (early_setup.ml), so that OCaml 4.14's Thread
   initialisation replaces boxroot's blocking-section hooks. Until boxroot
   takes them back, no thread may be taken for the lock holder: the main
   thread held the lock when the hooks were replaced, and then releases
   it through systhreads' hook only. See lock_checks.ml for the rest. *)
open Boxroot_test

external locked_in_blocking_section_until_went_on : unit -> int
  = "test_locked_in_blocking_section_until_went_on"
external went_on : unit -> unit = "test_went_on"

let () =
  check (not Early_setup.threads_were_initialised)
    "threads were initialised before early_setup ran: check the link order";
  if Lock_checks.is_ocaml_4 then
    check (not (Lock_checks.blocking_hooks_are_boxroots ()))
      "Thread's initialisation did not replace boxroot's hooks: nothing tested";
  check (Lock_checks.locked_in_blocking_section () = -1)
    "main thread in a blocking section, hooks replaced: lock seen";
  let before = match Boxroot.stats () with Some s -> s.deleted_purely_remote | None -> -1 in
  check (Early_setup.root_value () = Early_setup.expected_value) "early root lost its value";
  Early_setup.delete_root_unlocked ();
  let after = match Boxroot.stats () with Some s -> s.deleted_purely_remote | None -> -1 in
  check (after = before + 1) "delete in a blocking section, hooks replaced: not remote (%d -> %d)"
    before after;
  (* Another thread makes boxroot take its hooks back while the main
     thread waits in a blocking section it entered through systhreads'
     hook: the main thread's old record of holding the lock must not
     count any more. *)
  let repaired_by_other = ref false in
  let other = Thread.create (fun () ->
      let replaced = not (Lock_checks.blocking_hooks_are_boxroots ()) in
      let r = create (Obj.repr (ref 5)) in
      repaired_by_other := replaced && Lock_checks.blocking_hooks_are_boxroots ();
      delete r;
      went_on ()) () in
  let d = locked_in_blocking_section_until_went_on () in
  Thread.join other;
  if Lock_checks.is_ocaml_4 then
    check !repaired_by_other "the other thread did not take the hooks back: nothing tested";
  check (d = -1) "main thread in a blocking section, hooks taken back by another thread: lock seen";
  Lock_checks.run "test_locks_early"
