(* Teardown while another domain is inside one of boxroot's hooks
   (OCaml 5). boxroot_teardown's precondition holds: when it is called,
   every root has been deleted, by a thread without any lock (while the
   other domain is held, so that its pools are still there, deletions
   pending), and the tearing-down domain owns none. Teardown must wait
   for the hooks in flight before it frees what they use
   (compat_ocaml5.c).

   - darkening: the other domain is held in its root-darkening hook,
     past the hook's status check, before it counts itself and darkens
     its directory: on OCaml 5.5 the tearing-down domain may have left
     that section already (marking.c, M5), and no flag tells it that a
     cycle's marking is starting;
   - slice: the other domain is held in a major slice hook, clearing its
     weak roots (weak.c, W3): slice hooks run outside stop-the-world
     sections on every OCaml 5.

   Each scenario runs in a child process (teardown is once per process),
   which must exit normally; with BOXROOT_HAZARD_EXPECT_LOSS=1 (the build
   whose teardown neither waits for the hooks nor finishes a cycle whose
   marking started), the child must crash in at least one scenario where
   the window opens. *)
open Boxroot_test

external hold : int -> int -> int -> int -> unit = "window_hold"
external wait_to_take_hold : unit -> bool = "window_wait_to_take_hold"
external set_triggered : bool -> unit = "window_set_marking_on"
external hold_taken : unit -> bool = "window_hold_taken"
external hold_go : unit -> unit = "window_hold_go"
external point : string -> int = "window_point_of_name"
external teardown_now : unit -> unit = "window_teardown"
external domain_id : unit -> int = "window_domain_id"
external delete_foreign : root array -> int -> int -> unit = "hazard_delete_foreign"
external weak_create : 'a -> int = "window_weak_create"
external weak_delete_foreign : int array -> unit = "window_weak_delete_foreign"
external waits_mark : bool -> unit = "window_waits_mark"
external phase : unit -> string = "hazard_phase"

let n = 10_000
let expect_crash = env_int "BOXROOT_HAZARD_EXPECT_LOSS" 0 = 1
let window_opens scenario =
  scenario = "slice" || Sys.ocaml_release.Sys.minor >= 5

(* Another domain runs [delete_all], then tears boxroot down, as soon as
   it takes this domain held at [at] (which goes on 100 ms later, 2 s at
   most), or once [trigger] returned if it could not (on OCaml 5.1-5.4 a
   domain held in a root-darkening hook holds every domain in its
   section). *)
let teardown_while_held scenario at ~trigger ~delete_all =
  let p = point at in
  check (p >= 0) "no window point %S" at;
  set_triggered false;
  let w = Domain.spawn (fun () ->
      ignore (wait_to_take_hold ());
      delete_all ();
      hold_go ();
      teardown_now ()) in
  hold p (domain_id ()) 100 2000;
  trigger ();
  set_triggered true;
  Domain.join w;
  if window_opens scenario then
    check (hold_taken ()) "no domain was held at the window point %S (GC phase: %s)"
      at (phase ());
  check (status () = tore_down) "boxroot is not torn down";
  check (try_create 0 = None) "creation after teardown succeeded"

let darkening () =
  let roots = Array.init n (fun i -> create (ref i)) in
  Gc.full_major ();
  teardown_while_held "darkening" "stamp switched"
    ~trigger:(fun () -> ignore (drive_into_marking ()))
    ~delete_all:(fun () -> delete_foreign roots 0 n)

let slice () =
  let wroots = Array.init n (fun i -> weak_create (ref i)) in
  Gc.full_major ();
  teardown_while_held "slice" "weak clearing"
    ~delete_all:(fun () -> weak_delete_foreign wroots)
    ~trigger:(fun () ->
        (* Slices, with minor collections between them: their hooks see
           the end of marking and lower the flag (marking.c, M4), so that
           teardown has no cycle to finish, which would wait for this
           domain. Slices with a budget of their own, on both domains
           (window_waits_mark says why). *)
        waits_mark true;
        let k = ref 0 in
        while not (hold_taken ()) && !k < 100_000 do
          ignore (Sys.opaque_identity (Array.make 1000 0));
          Gc.minor ();
          ignore (Gc.major_slice 10_000);
          incr k
        done;
        waits_mark false)

let () =
  match Sys.getenv_opt "BOXROOT_TEARDOWN_SCENARIO" with
  | Some "darkening" -> darkening (); finish "test_teardown (darkening)"
  | Some "slice" -> slice (); finish "test_teardown (slice)"
  | Some s -> failwith ("unknown scenario " ^ s)
  | None ->
    let crashed = ref [] in
    List.iter (fun s ->
        let rc = Sys.command (Printf.sprintf "BOXROOT_TEARDOWN_SCENARIO=%s %s"
                                s (Filename.quote Sys.executable_name)) in
        Printf.printf "teardown during %s: exit code %d\n%!" s rc;
        if expect_crash then (if rc <> 0 && window_opens s then crashed := s :: !crashed)
        else check (rc = 0) "teardown during %s: the child failed (exit code %d)" s rc)
      ["darkening"; "slice"];
    if expect_crash then
      check (!crashed <> []) "the build whose teardown does not wait crashed in no scenario";
    finish "test_teardown"
