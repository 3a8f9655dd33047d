(* OCaml side of the test stubs (stubs.c). *)
type root (* an immediate: the address of the boxroot with bit 0 set *)

external create : 'a -> root = "test_create"
external try_create : 'a -> root option = "test_try_create"
external get : root -> Obj.t = "test_get"
external get_ref : root -> Obj.t = "test_get_ref"
external delete : root -> unit = "test_delete"
external delete_remote : root -> unit = "test_delete_remote"
external delete_unlocked : root -> unit = "test_delete_unlocked"
external delete_foreign_thread : root -> unit = "test_delete_foreign_thread"
external modify : root -> 'a -> root = "test_modify"
external try_modify : root -> 'a -> root option = "test_try_modify"
external status : unit -> int = "test_status"
external error_string : unit -> string = "test_error_string"
external errno : unit -> int = "test_errno"
external clear_errno : unit -> unit = "test_clear_errno"
external eperm : unit -> int = "test_eperm"
external enomem : unit -> int = "test_enomem"
external enotsup : unit -> int = "test_enotsup"
external setup : unit -> bool = "test_setup"
external teardown : unit -> unit = "test_teardown"
external print_stats : unit -> unit = "test_print_stats"
external fail_pool_allocations_after : int -> unit = "test_fail_pool_allocations_after"
external check_invariants : unit -> bool = "test_check_invariants"
external create_unlocked : 'a -> int = "test_create_unlocked"
external modify_unlocked : root -> 'a -> int = "test_modify_unlocked"
external create_foreign_thread : int -> int = "test_create_foreign_thread"
(* Test builds only (testing.h); they raise Failure otherwise. *)
external fail_directory_growth_after : int -> unit = "test_fail_directory_growth_after"
external cycle_offset : int -> unit = "test_cycle_offset"
(* The library's allocations (testing.h): among the attempts at [sites]
   (a mask: bit i is the site of enum boxroot__alloc_site with value
   1 lsl i), [after] more succeed, then one fails, or every one if
   [persistent]; [after] < 0: none. *)
external fail_allocations : int -> int -> bool -> unit = "test_fail_allocations"
external allocation_attempts : int -> int = "test_allocation_attempts"
external allocation_failures : int -> int = "test_allocation_failures"
external alloc_sites_all : unit -> int = "test_alloc_sites_all"
external adopt_at_compaction_only : bool -> unit = "test_adopt_at_compaction_only"
external adopt_at_darkening_only : int -> unit = "test_adopt_at_darkening_only"
external retired_directory_blocks : unit -> int = "test_retired_directory_blocks"
external stale_marker : bool -> unit = "test_stale_marker"
external domain_id : unit -> int = "test_domain_id"

let not_setup = 0 and running = 1 and tore_down = 2

(* The library's statistics (Boxroot, generated from boxroot_stats.h);
   all zero while boxroot is not running. *)
let stats () =
  match Boxroot.stats () with
  | Some s -> s
  | None -> failwith "Boxroot.stats: boxroot is not running"

let failures = ref 0
let checks = ref 0
let check cond fmt =
  Printf.ksprintf (fun msg ->
      incr checks;
      if not cond then begin
        incr failures;
        Printf.printf "FAIL: %s\n%!" msg
      end) fmt

let env_int name default =
  match Sys.getenv_opt name with
  | Some s -> (try int_of_string s with _ -> default)
  | None -> default

(* Prints the closing line that test runners read, and sets the exit code. *)
let finish name =
  Printf.printf "%s: %d passed, %d failed\n%!" name (!checks - !failures) !failures;
  exit (if !failures = 0 then 0 else 1)

(* Marking (stubs.c). OCaml 5.5 starts each major cycle with a
   sweep-only phase and darkens the roots later, in the stop-the-world
   section of a minor collection; earlier versions darken them at the
   cycle start. A test of what happens while pools wait on a mark stack
   first drives the runtime into marking: a little allocation, sweeping
   work and a minor collection at a time, until the phase says marking.
   False if it never did. *)
external marking_started : unit -> bool = "test_marking_started"

(* Marking work that this domain does before it reaches the pools: the
   runtime darkens finalisers' closures after our hook, so this closure is
   above the pools' directory on the mark stack, and the array it
   captures (reachable from nowhere else, so that no other domain marks
   it) is scanned first, in every slice, including the opportunistic ones
   that a domain makes while it waits for the others to join a
   collection. A control (the build without barrier) must see the window
   even on a busy machine, where such waits are long: more ballast there.
   BOXROOT_HAZARD_BALLAST overrides the number of values. Returns the
   finalised value: keep it alive. *)
let install_ballast ~control =
  let owner = ref 0 in
  let ballast = Array.init (env_int "BOXROOT_HAZARD_BALLAST"
                              (if control then 8_000_000 else 1_000_000)) (fun i -> ref i) in
  Gc.finalise (fun _ -> ignore (Sys.opaque_identity ballast)) owner;
  owner

external request_marking : unit -> unit = "test_request_marking"

(* Completes the current major cycle and the start of the next, which
   compacts the heap (OCaml 5.2 and later); false elsewhere. *)
external finish_cycle_compacting : unit -> bool = "test_finish_cycle_compacting"

let drive_into_marking () =
  let rec go k =
    marking_started ()
    || k > 0 && begin
      (* OCaml 5.5 starts marking after an idle phase as long as the
         previous sweep phase, in work units (major_gc.c,
         caml_reset_major_pacing), which the opportunistic work of
         domains waiting in stop-the-world sections inflates, while the
         idle phase advances only with allocation: on a loaded machine it
         outlasted this loop. The loop asks for the mark phase at once,
         as the runtime does at the end of that phase: the next minor
         collection starts marking. *)
      request_marking ();
      ignore (Sys.opaque_identity (Array.make 1000 0));
      ignore (Gc.major_slice 0);
      Gc.minor ();
      go (k - 1)
    end in
  go 100_000
