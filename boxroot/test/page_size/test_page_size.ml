(* Decommitting with pages larger than pools (chunk.c): roots fill pools,
   then pools are emptied so that each 64 KiB page keeps one pool in use,
   then whole pages, then pools while the marker may read them, then
   pools are filled and emptied again. The library checks every range it
   gives back to the system against the page size it assumes, 64 KiB in
   the build of this directory, the system's in boxroot/test (testing.h,
   boxroot__testing_decommit_violations); a build that gives back single
   pools whatever the page size must fail that check
   (BOXROOT_PAGE_EXPECT_VIOLATIONS=1). *)
open Boxroot_test

external fill : int -> int = "ps_fill"
external keep_one_pool_per_group : unit -> int = "ps_keep_one_pool_per_group"
external empty_groups : int -> int = "ps_empty_groups"
external delete_all : unit -> int = "ps_delete_all"
external wrong : unit -> int = "ps_wrong"
external violations : unit -> int = "ps_violations"
external page_size : unit -> int = "ps_page_size"

let pool_size = 16384
let pools = 400

let decommitted () = (stats ()).chunk_free_pools_decommitted

let () =
  let expect_violations = Sys.getenv_opt "BOXROOT_PAGE_EXPECT_VIOLATIONS" = Some "1" in
  let page = page_size () in
  Printf.printf "pages of %d bytes, pools of %d\n%!" page pool_size;
  Gc.full_major ();
  let n = fill pools in
  check (wrong () = 0) "filled %d roots in %d pools" n pools;
  let deleted = keep_one_pool_per_group () in
  let after_fragmenting = decommitted () in
  Printf.printf "one pool per 64 KiB left: %d roots deleted, %d pools decommitted\n%!"
    deleted after_fragmenting;
  check (wrong () = 0) "the roots left hold their values";
  if not expect_violations then begin
    (* Every 64 KiB page holds a pool in use; smaller pages hold free
       pools alone. *)
    if page >= 65536 then
      check (after_fragmenting = 0) "no page given back while it holds a pool in use";
    if page <= pool_size then
      check (after_fragmenting > 0) "free pools given back one by one"
  end;
  Gc.full_major ();
  let deleted = empty_groups 0 in
  let after_pages = decommitted () in
  Printf.printf "half the 64 KiB pages emptied: %d roots deleted, %d pools decommitted\n%!"
    deleted after_pages;
  check (wrong () = 0) "the roots left hold their values";
  (* Pools given back while the marker may read them keep their memory,
     and so do the pages that hold them. *)
  if drive_into_marking () then begin
    let deleted = empty_groups 1 in
    Printf.printf "the other pages emptied while marking: %d roots deleted, %d pools decommitted\n%!"
      deleted (decommitted ());
    Gc.full_major ()
  end;
  ignore (delete_all ());
  let n = fill pools in
  check (wrong () = 0) "filled %d roots again in %d pools" n pools;
  ignore (delete_all ());
  let at_end = decommitted () in
  Printf.printf "refilled and emptied: %d pools decommitted\n%!" at_end;
  (* Pools given back while the marker may read them keep their memory
     until handed out again, and so do their pages: on OCaml 5.3, whose
     cycles start by marking, the pages emptied above may all hold one;
     refilled and emptied, they all go back. *)
  if not expect_violations then
    check (at_end > after_fragmenting) "emptied pages given back";
  let v = violations () in
  if expect_violations then
    check (v > 0) "the build that gives back single pools gave back %d ranges that it must not" v
  else
    check (v = 0) "%d ranges given back that the system would refuse or extend over pools that must keep their memory" v;
  finish "test_page_size"
