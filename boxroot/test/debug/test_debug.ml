(* The debug build reports each kind of misuse.

   Run without arguments, this program runs itself once per case below,
   as `test_debug.exe CASE`. The child performs the misuse, after
   printing on stdout the address that the report must name; it must die
   of SIGABRT, with "boxroot debug: OP(ADDRESS): ..." and the expected
   words on stderr. The case "correct_use" exercises every operation
   correctly (locally, remotely, across collections) and must exit
   normally with nothing on stderr. *)
open Boxroot_test

external no_core_dump : unit -> unit = "debug_no_core_dump"
external pool_slots : unit -> int = "debug_pool_slots"
external announce_root : root -> unit = "debug_announce_root"
external announce_value : 'a -> unit = "debug_announce_value"
external get_non_root : int -> unit = "debug_get_non_root"
external get_at_offset : root -> int -> Obj.t = "debug_get_at_offset"
external get_in_header : root -> Obj.t = "debug_get_in_header"
external create_bad_value : int -> root -> unit = "debug_create_bad_value"
external modify_bad_value : root -> int -> unit = "debug_modify_bad_value"
external get_unlocked : root -> unit = "debug_get_unlocked"
external delete_race : int -> unit = "debug_delete_race"
type weak
external weak_create : 'a -> weak = "debug_weak_create"
external weak_get : weak -> bool = "debug_weak_get"
external weak_delete : weak -> unit = "debug_weak_delete"
external get_weak_as_strong : weak -> Obj.t = "debug_get_weak_as_strong"
external delete_weak_as_strong : weak -> unit = "debug_delete_weak_as_strong"
external weak_get_strong : root -> bool = "debug_weak_get_strong"
let announce_weak (w : weak) = announce_root (Obj.magic w : root)
type in_finalizer
external in_finalizer : int -> 'a -> in_finalizer = "debug_in_finalizer"
(* Operation `kind` (misuse_stubs.c) on `r` from a custom block's
   finalizer, run by a minor collection. *)
let from_finalizer kind r = ignore (in_finalizer kind r); Gc.minor ()
external weak_create_notifying : 'a -> int -> weak = "debug_weak_create_notifying"
external notifying_word : weak -> int = "debug_notifying_word"
external drain : unit -> int = "debug_drain"
external next_emptied_unlocked : unit -> unit = "debug_next_emptied_unlocked"

let young i = ref i
let word = Sys.word_size / 8

(* A live root, announced as the address of the report. Another root
   stays alive in its pool, so that deleting it leaves the pool in use
   (an emptied pool starts over: "this slot is not allocated"). *)
let neighbours = ref []
let announced_root () =
  neighbours := create (young 0) :: !neighbours;
  let r = create (young 1) in
  announce_root r; r

let not_in_pool = "not a root: this address is in no boxroot pool"
let deleted = "not a live root: this root was deleted (use after delete, or double delete)"
let deleted_remotely = "not a live root: this root was deleted by another thread"
let no_lock = "this thread does not hold the OCaml domain lock"

(* The quarantine (pool.h): a root deleted, then 100 others created and
   deleted, then one more created; its slot must not have been reused. *)
let deleted_then_churned () =
  let r = announced_root () in
  delete r;
  for i = 1 to 100 do delete (create (young i)) done;
  neighbours := create (young 0) :: !neighbours;
  r

(* name, operation named in the report, expected words, misuse *)
let cases = [
  "get_after_reuse", "boxroot_get", deleted,
  (fun () -> ignore (get (deleted_then_churned ())));
  "modify_after_reuse", "boxroot_modify", deleted,
  (fun () -> ignore (modify (deleted_then_churned ()) (young 2)));
  "delete_after_reuse", "boxroot_delete", deleted,
  (fun () -> delete (deleted_then_churned ()));
  "get_after_remote_delete_and_reuse", "boxroot_get", deleted,
  (fun () ->
     let r = announced_root () in
     delete_remote r; Gc.minor ();
     for i = 1 to 100 do delete (create (young i)) done;
     neighbours := create (young 0) :: !neighbours;
     ignore (get r));
  "weak_get_after_reuse", "boxroot_weak_get", deleted,
  (fun () ->
     let keep = weak_create (young 0) in
     let w = weak_create (young 1) in announce_weak w; weak_delete w;
     for i = 1 to 100 do weak_delete (weak_create (young i)) done;
     let again = weak_create (young 2) in
     ignore (weak_get w); ignore (Sys.opaque_identity (keep, again)));
  "get_malloc_pointer", "boxroot_get", not_in_pool, (fun () -> get_non_root 0);
  "get_stack_address", "boxroot_get", not_in_pool, (fun () -> get_non_root 1);
  "get_garbage", "boxroot_get", not_in_pool, (fun () -> get_non_root 2);
  "get_null", "boxroot_get", "NULL is not a root", (fun () -> get_non_root 3);
  "get_misaligned", "boxroot_get", "not a root: misaligned address",
  (fun () -> ignore (get_at_offset (create (young 1)) 4));
  "get_pool_header", "boxroot_get", "not a root: this address is in a pool header",
  (fun () -> ignore (get_in_header (create (young 1))));
  "get_never_allocated", "boxroot_get", "not a live root: this slot is not allocated",
  (fun () -> ignore (get_at_offset (create (young 1)) (word * (pool_slots () - 1))));
  (* The current pool stays as it is when it empties (domain.c). *)
  "get_after_delete_in_emptied_pool", "boxroot_get", deleted,
  (fun () -> let r = create (young 1) in announce_root r; delete r; ignore (get r));
  "get_after_delete", "boxroot_get", deleted,
  (fun () -> let r = announced_root () in delete r; ignore (get r));
  "get_ref_after_delete", "boxroot_get_ref", deleted,
  (fun () -> let r = announced_root () in delete r; ignore (get_ref r));
  "modify_after_delete", "boxroot_modify", deleted,
  (fun () -> let r = announced_root () in delete r; ignore (modify r (young 2)));
  "double_delete", "boxroot_delete", deleted,
  (fun () -> let r = announced_root () in delete r; delete r);
  "delete_after_unlocked_delete", "boxroot_delete", deleted_remotely,
  (fun () -> let r = announced_root () in delete_unlocked r; delete r);
  "get_after_unlocked_delete", "boxroot_get", deleted_remotely,
  (fun () -> let r = announced_root () in delete_unlocked r; ignore (get r));
  "delete_after_collected_unlocked_delete", "boxroot_delete", deleted,
  (fun () -> let r = announced_root () in delete_unlocked r; Gc.minor (); delete r);
  (* The remote path itself (as when two deletions race past the
     checks): the second sees the first one's delayed-free bit. *)
  "double_remote_delete", "boxroot_delete", "root deleted twice: another thread's deletion of it is still pending",
  (fun () -> let r = announced_root () in delete_remote r; delete_remote r);
  (* A remote deletion of a slot already free: found at collection. *)
  "remote_delete_of_free_slot", "boxroot_delete", "root deleted twice: a thread deleted it while it was already free",
  (fun () -> let r = announced_root () in delete r; delete_remote r; Gc.minor ());
  "two_threads_delete_one_root", "boxroot_delete", "deleted",
  (fun () -> delete_race 1000);
  "get_in_released_pool", "boxroot_get", "not a live root: its pool holds no root any more",
  (fun () ->
     (* Fill 30 pools, empty them all: most go back to the chunk
        allocator (a domain keeps a few). *)
     let n = pool_slots () in
     let roots = Array.init (30 * n) (fun i -> create i) in
     Array.iter delete roots;
     announce_root roots.(25 * n);
     ignore (get roots.(25 * n)));
  "create_null", "boxroot_create", "not an OCaml value: a null or near-null pointer",
  (fun () -> create_bad_value 0 (create 0));
  "create_misaligned", "boxroot_create", "not an OCaml value: a misaligned pointer",
  (fun () -> create_bad_value 1 (create 0));
  "create_with_a_boxroot", "boxroot_create", "not an OCaml value: a pointer into a boxroot pool",
  (fun () -> create_bad_value 2 (create 0));
  "modify_with_a_boxroot", "boxroot_modify", "is not an OCaml value: a pointer into a boxroot pool",
  (fun () -> let r = create (young 1) in modify_bad_value r 2);
  "modify_with_null", "boxroot_modify", "is not an OCaml value: a null or near-null pointer",
  (fun () -> let r = create (young 1) in modify_bad_value r 0);
  "create_unlocked", "boxroot_create", no_lock,
  (fun () -> ignore (create 0); announce_value 7; ignore (create_unlocked 7));
  "create_in_foreign_thread", "boxroot_create", no_lock,
  (fun () -> ignore (create 0); announce_value 7; ignore (create_foreign_thread 7));
  "modify_unlocked", "boxroot_modify", no_lock,
  (fun () -> let r = announced_root () in ignore (modify_unlocked r (young 2)));
  "get_unlocked", "boxroot_get", no_lock,
  (fun () -> get_unlocked (create (young 1)));
  "get_weak_root", "boxroot_get", "a weak root (boxroot_weak) passed where a boxroot is expected",
  (fun () -> let w = weak_create (young 1) in announce_weak w; ignore (get_weak_as_strong w));
  "delete_weak_root", "boxroot_delete", "a weak root (boxroot_weak) passed where a boxroot is expected",
  (fun () -> let w = weak_create (young 1) in announce_weak w; delete_weak_as_strong w);
  "weak_get_strong_root", "boxroot_weak_get", "a boxroot passed where a weak root (boxroot_weak) is expected",
  (fun () -> ignore (weak_get_strong (announced_root ())));
  "weak_delete_after_delete", "boxroot_weak_delete", deleted,
  (fun () -> let keep = weak_create (young 0) in
    let w = weak_create (young 1) in announce_weak w; weak_delete w; weak_delete w;
    ignore (Sys.opaque_identity keep));
  "next_emptied_unlocked", "boxroot_weak_next_emptied", no_lock,
  (* A root first: on OCaml 4.14 the lock is known once boxroot is set up. *)
  (fun () -> ignore (weak_create_notifying (young 0) 0); next_emptied_unlocked ());
  "notifying_word_of_plain_weak_root", "boxroot_weak_notifying_word", "not a notifying weak root",
  (fun () -> let w = weak_create (young 1) in announce_weak w; ignore (notifying_word w));
  "notifying_word_after_delete", "boxroot_weak_notifying_word", deleted,
  (fun () -> let keep = weak_create_notifying (young 0) 0 in
    let w = weak_create_notifying (young 1) 1 in announce_weak w; weak_delete w;
    ignore (notifying_word w); ignore (Sys.opaque_identity keep));
]

(* Calls from a custom block's finalizer, caught where the runtime
   records the collection that runs it (boxroot.h, "Roots in
   finalizers"): on OCaml 4.14, or on OCaml 5 with its debug runtime
   (../debug_runtime/misuse sets BOXROOT_TEST_DEBUG_RUNTIME). *)
let collection_recorded =
  Sys.ocaml_version < "5" || Sys.getenv_opt "BOXROOT_TEST_DEBUG_RUNTIME" = Some "1"
let in_collection = "called inside a collection (from a custom block's finalizer?)"
let cases = cases @ if not collection_recorded then [] else [
  "create_in_finalizer", "boxroot_create", in_collection,
  (fun () -> from_finalizer 0 (create 0));
  "get_in_finalizer", "boxroot_get", in_collection,
  (fun () -> from_finalizer 1 (create (young 1)));
  "modify_in_finalizer", "boxroot_modify", in_collection,
  (fun () -> from_finalizer 2 (create (young 1)));
  "weak_get_in_finalizer", "boxroot_weak_get", in_collection,
  (fun () -> from_finalizer 3 (weak_create (young 1)));
  "weak_create_in_finalizer", "boxroot_weak_create", in_collection,
  (fun () -> from_finalizer 4 (create 0));
]

(* Every operation used correctly: the debug build must stay silent. *)
let correct_use () =
  let roots = Array.init 10_000 (fun i -> create (young i)) in
  Gc.minor ();
  Array.iteri (fun i r ->
      let r = if i mod 3 = 0 then modify r (young (-i)) else r in
      roots.(i) <- r;
      ignore (get_ref r)) roots;
  Gc.full_major ();
  Array.iteri (fun i r ->
      let expect = if i mod 3 = 0 then -i else i in
      if !(Obj.obj (get r) : int ref) <> expect then exit 3;
      match i mod 4 with
      | 0 -> delete_unlocked r
      | 1 -> delete_foreign_thread r
      | 2 -> delete_remote r
      | _ -> delete r) roots;
  Gc.full_major ();
  let weaks = Array.init 1000 (fun i -> weak_create (if i mod 2 = 0 then Obj.repr (young i) else Obj.repr i)) in
  Gc.full_major ();
  Array.iter (fun w -> ignore (weak_get w); weak_delete w) weaks;
  (* Deleting from finalizers is allowed. *)
  from_finalizer 5 (create (young 7));
  from_finalizer 6 (weak_create (young 8));
  (* Notifying roots: every emptied one reported, then deleted. *)
  let ns = Array.init 1000 (fun i -> weak_create_notifying (young i) i) in
  Array.iteri (fun i w -> if notifying_word w <> i then exit 4) ns;
  Gc.full_major (); Gc.full_major ();
  if drain () <> 1000 then exit 5;
  Array.iter weak_delete ns;
  let r = create (young 5) in
  delete r;
  let r = create (young 6) in
  delete r;
  print_endline "correct use: done"

let read_file path =
  let ic = open_in_bin path in
  let s = really_input_string ic (in_channel_length ic) in
  close_in ic; s

let contains s sub =
  let n = String.length s and m = String.length sub in
  let rec at i = i + m <= n && (String.sub s i m = sub || at (i + 1)) in
  at 0

(* The last "address: A" line of the child's stdout. *)
let announced out =
  List.fold_left (fun acc line ->
      match String.index_opt line ':' with
      | Some i when String.sub line 0 i = "address" ->
        Some (String.trim (String.sub line (i + 1) (String.length line - i - 1)))
      | _ -> acc) None (String.split_on_char '\n' out)

let run_child name =
  let out = Filename.temp_file "boxroot_debug" ".out"
  and err = Filename.temp_file "boxroot_debug" ".err" in
  let fd_out = Unix.openfile out [ Unix.O_WRONLY; Unix.O_TRUNC ] 0o600
  and fd_err = Unix.openfile err [ Unix.O_WRONLY; Unix.O_TRUNC ] 0o600 in
  let pid = Unix.create_process Sys.executable_name
      [| Sys.executable_name; name |] Unix.stdin fd_out fd_err in
  let _, status = Unix.waitpid [] pid in
  Unix.close fd_out; Unix.close fd_err;
  let o = read_file out and e = read_file err in
  Sys.remove out; Sys.remove err;
  status, o, e

let describe_status = function
  | Unix.WEXITED n -> Printf.sprintf "exited with %d" n
  | Unix.WSIGNALED n -> Printf.sprintf "killed by signal %d (OCaml numbering)" n
  | Unix.WSTOPPED n -> Printf.sprintf "stopped by signal %d" n

let parent () =
  List.iter (fun (name, op, words, _) ->
      let status, out, err = run_child name in
      let addr = announced out in
      let prefix = match addr with
        | Some a -> Printf.sprintf "boxroot debug: %s(%s): " op a
        | None -> "(no address announced)" in
      let ok_status = status = Unix.WSIGNALED Sys.sigabrt in
      let ok_message = addr <> None && contains err prefix && contains err words in
      check ok_status "%s: expected an abort, child %s" name (describe_status status);
      check ok_message "%s: expected %S and %S on stderr, got %S" name prefix words err;
      if ok_status && ok_message then
        Printf.printf "%-40s %s" name (List.hd (List.rev (String.split_on_char '\n' (String.trim err))) ^ "\n"))
    cases;
  let status, out, err = run_child "correct_use" in
  check (status = Unix.WEXITED 0) "correct_use: child %s, stderr %S" (describe_status status) err;
  check (not (contains err "boxroot debug")) "correct_use reported a misuse: %S" err;
  check (contains out "correct use: done") "correct_use did not finish: %S" out;
  finish "test_debug"

let () =
  match Sys.argv with
  | [| _; "correct_use" |] -> correct_use ()
  | [| _; name |] ->
    no_core_dump ();
    (match List.find_opt (fun (n, _, _, _) -> n = name) cases with
     | Some (_, _, _, misuse) -> misuse (); print_endline "misuse went unnoticed"; exit 0
     | None -> Printf.eprintf "unknown case %s\n" name; exit 2)
  | _ -> parent ()
