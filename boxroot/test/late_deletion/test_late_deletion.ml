(* Deletions that a terminating domain makes after its last scan, here
   from the finalisers of its young custom blocks, which run in its last
   minor collection: they must reach their pools (remote.c), or their
   slots stay in use until a later domain reuses the id, forever if none
   does. *)
type holder
external holder : 'a -> holder = "late_holder"
external slots_in_use : unit -> int = "late_slots_in_use"

let failures = ref 0
let check cond fmt =
  Printf.ksprintf (fun msg -> if not cond then begin
      incr failures; Printf.printf "FAIL: %s\n%!" msg end) fmt

let () =
  let base = slots_in_use () in
  let n = 100 in
  Domain.join (Domain.spawn (fun () ->
      (* Young, unreachable once the domain ends: finalised by its last
         minor collection. *)
      for i = 1 to n do ignore (Sys.opaque_identity (holder (ref i))) done));
  (* The pools were orphaned; adopted and collected by this domain. *)
  Gc.full_major (); Gc.full_major ();
  let left = slots_in_use () - base in
  Printf.printf "late deletions: %d of %d slots still in use\n" left n;
  check (left = 0) "%d slots deleted after the domain's last scan are still in use" left;
  Printf.printf "test_late_deletion: %d passed, %d failed\n" (1 - !failures) !failures;
  exit (if !failures = 0 then 0 else 1)
