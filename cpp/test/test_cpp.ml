(* Drives the C++ stubs (stubs.cpp) that use ocaml::Root (../boxroot.hpp).
   Last line: `test_cpp: N passed, N failed`. *)
external roots_survive : int -> int = "cpp_roots_survive"
external root_follows_minor_gc : unit -> bool = "cpp_root_follows_minor_gc"
external modify : int -> int = "cpp_modify"
external moves : unit -> int = "cpp_moves"
external unwind : int -> int = "cpp_unwind"
external delete_on_other_threads : int -> int = "cpp_delete_on_other_threads"
external failure_message : unit -> string = "cpp_failure_message"
external store : 'a -> unit = "cpp_store"
external fetch : unit -> 'a = "cpp_fetch"
external release_stored : unit -> unit = "cpp_release_stored"
external roots_alive : unit -> int = "cpp_roots_alive"
external weak_roots : int -> int = "cpp_weak_roots"
external notifying_weak_roots : int -> int = "cpp_notifying_weak_roots"

let passed = ref 0 and failed = ref 0

let check name ok =
  if ok then incr passed
  else begin incr failed; Printf.printf "FAILED: %s\n%!" name end

let contains s sub =
  let n = String.length sub in
  let rec go i = i + n <= String.length s && (String.sub s i n = sub || go (i + 1)) in
  go 0

let () =
  Gc.set { (Gc.get ()) with minor_heap_size = 4096 };
  check "roots survive collections" (roots_survive 20_000 = 0);
  check "a root follows its value at a minor GC" (root_follows_minor_gc ());
  check "modify, then collections" (modify 5_000 = 0);
  check "moves" (moves () = 0);
  check "a C++ exception leaks no root" (unwind 3_000 = 0);
  check "roots destroyed on other threads" (delete_on_other_threads 4_000 = 4_000);
  let msg = failure_message () in
  check (Printf.sprintf "failure throws with the error string (got %S)" msg)
    (contains msg "boxroot_create failed" && contains msg "out of memory");
  let base = roots_alive () in
  store (List.init 1000 string_of_int);
  for _ = 1 to 10 do ignore (Array.make 10_000 "garbage") done;
  Gc.full_major ();
  Gc.compact ();
  check "a stored root keeps its value across OCaml code"
    ((fetch () : string list) = List.init 1000 string_of_int);
  release_stored ();
  check "released" (roots_alive () = base);
  check "weak roots follow the GC" (weak_roots 4_000 = 0);
  check "notifying weak roots report once" (notifying_weak_roots 4_000 = 0);
  Printf.printf "test_cpp: %d passed, %d failed\n" !passed !failed;
  if !failed > 0 then exit 1
