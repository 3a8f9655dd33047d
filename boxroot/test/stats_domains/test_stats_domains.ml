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
  (* Producer/consumer: batches created here are deleted by another
     domain. The producer reuses the slots it gets back (domain.c,
     BOXROOT_RECLAIM_YOUNG_POOLS) instead of taking fresh pools until its
     next collection: the pools ever carved stay few, whatever the number
     of batches (a consumer at most [cap] batches behind holds at most 2
     pools of them; without the reclaim, tens of pools). *)
  let batches = 2000 and size = 1000 and cap = 2 in
  let q = Queue.create () and m = Mutex.create () and c = Condition.create () in
  let consumer = Domain.spawn (fun () ->
      let sum = ref 0 in
      for _ = 1 to batches do
        Mutex.lock m;
        while Queue.is_empty q do Condition.wait c m done;
        let b = Queue.pop q in
        Condition.broadcast c;
        Mutex.unlock m;
        Array.iter (fun r -> sum := !sum + value_of r; delete r) b
      done;
      !sum) in
  for i = 1 to batches do
    let b = Array.init size (fun j -> create (ref (i + j))) in
    Mutex.lock m;
    while Queue.length q >= cap do Condition.wait c m done;
    Queue.push b q;
    Condition.broadcast c;
    Mutex.unlock m
  done;
  let sum = Domain.join consumer in
  check (sum = batches * (size * (size - 1) / 2) + size * (batches * (batches + 1) / 2))
    "producer/consumer: wrong sum %d" sum;
  Gc.full_major ();
  let st = get_stats () in
  let carved = st.pools_handed_out + st.chunk_free_pools_committed
               + st.chunk_free_pools_decommitted in
  check (carved <= 24) "producer/consumer of %d roots: %d pools carved" (batches * size) carved;
  check (st.roots_alive = 0) "roots_alive after producer/consumer: %d" st.roots_alive;
  Boxroot.print_stats ();
  finish "test_stats_domains"
