(* boxroot_setup chains its hooks in front of the runtime's (OCaml 5;
   compat_ocaml5.c): a domain that calls boxroot's scan hook as soon as
   it is published also calls the hook installed before it (systhreads'
   scan of the other threads' stacks, on OCaml 5.5 possibly while another
   domain still darkens its roots). The window point right after each
   publication calls the scan hook; the hook installed earlier must run.
   Run before boxroot is set up: no root is created first. With
   BOXROOT_HAZARD_EXPECT_LOSS=1 (a broken build), the earlier hook must
   have been skipped. *)
open Boxroot_test

external setup_with_earlier_hook : unit -> int = "window_setup_with_earlier_hook"

let () =
  let calls = setup_with_earlier_hook () in
  Printf.printf "hook chain: the earlier hook ran %d time(s) as boxroot's was published\n%!" calls;
  if env_int "BOXROOT_HAZARD_EXPECT_LOSS" 0 = 1 then
    check (calls = 0) "the broken build ran the earlier hook"
  else
    check (calls >= 1) "the scan hook published by boxroot_setup skipped the hook it replaced";
  let r = create (ref 1) in
  check (!(Obj.obj (get r) : int ref) = 1) "a root after setup";
  delete r;
  finish "test_hook_chain"
