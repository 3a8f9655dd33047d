(* Statistics across domains, OCaml 5 only: deletions from
   another domain are counted as such and collected by the owner, and the
   pools of a terminated domain are adopted, with their roots intact. *)
open Boxroot_test

let get_stats () =
  match Boxroot.stats () with
  | Some st -> st
  | None -> check false "no statistics while boxroot runs"; exit 1

let value_of r : int = !(Obj.obj (get r) : int ref)

let () =
  let n = 1000 and k = 300 in
  let roots = Array.init n (fun i -> create (ref i)) in
  (* k deletions from another domain. *)
  Domain.join (Domain.spawn (fun () -> for i = 0 to k - 1 do delete roots.(i) done));
  let st = get_stats () in
  check (st.deleted_remote_domain = k) "deleted_remote_domain = %d, expected %d"
    st.deleted_remote_domain k;
  check (st.deleted_local = 0 && st.deleted_purely_remote = 0)
    "other deletions: %d local, %d purely remote" st.deleted_local st.deleted_purely_remote;
  check (st.roots_alive = n - k) "roots_alive = %d, expected %d" st.roots_alive (n - k);
  Gc.full_major ();
  let st = get_stats () in
  check (st.delayed_frees_collected = k) "delayed_frees_collected = %d, expected %d"
    st.delayed_frees_collected k;
  check (st.slots_in_use = n - k) "slots_in_use = %d, expected %d" st.slots_in_use (n - k);
  (* A domain creates q roots in its own pools, then terminates. *)
  let q = 2500 in
  let theirs = Domain.join (Domain.spawn (fun () -> Array.init q (fun i -> create (ref (-i))))) in
  let st = get_stats () in
  check (st.roots_alive = n - k + q) "roots_alive = %d, expected %d" st.roots_alive (n - k + q);
  check (st.slots_in_use = n - k + q) "slots_in_use = %d, expected %d"
    st.slots_in_use (n - k + q);
  check (st.pools_orphaned + st.pools_adopted = 2)
    "orphaned %d + adopted %d pools, expected 2" st.pools_orphaned st.pools_adopted;
  Gc.minor ();
  let st = get_stats () in
  check (st.pools_orphaned = 0 && st.pools_adopted = 2)
    "after a minor GC: %d pools orphaned, %d adopted" st.pools_orphaned st.pools_adopted;
  (* The adopted roots are still scanned: their values move and survive. *)
  for _ = 1 to 3 do
    ignore (Sys.opaque_identity (List.init 100_000 (fun i -> ref i)));
    Gc.compact ()
  done;
  Array.iteri (fun i r -> check (value_of r = -i) "adopted root %d holds %d" i (value_of r)) theirs;
  for i = k to n - 1 do check (value_of roots.(i) = i) "root %d" i done;
  Array.iter delete theirs;
  for i = k to n - 1 do delete roots.(i) done;
  let st = get_stats () in
  check (st.roots_alive = 0) "roots_alive at the end: %d" st.roots_alive;
  check (st.deleted_local = n - k + q) "deleted_local = %d, expected %d" st.deleted_local (n - k + q);
  Boxroot.print_stats ();
  finish "test_stats_domains"
