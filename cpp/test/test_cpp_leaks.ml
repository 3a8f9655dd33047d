(* The leak report of the debug build for C++ (leaks_stubs.cpp): the
   Roots and WeakRoots that C++ code leaks are reported at the file:line
   that constructed them, with their counts; those it destroyed are not.
   Last line: `test_cpp_leaks: N passed, N failed`. *)
external create : unit -> string * int * int * int = "cpp_leaks_create"
external destroy : unit -> unit = "cpp_leaks_destroy"
external report_to : string -> bool = "cpp_leaks_report"

let passed = ref 0 and failed = ref 0

let check name ok =
  if ok then incr passed
  else begin incr failed; Printf.printf "FAILED: %s\n%!" name end

let report () =
  let path = Filename.temp_file "boxroot_cpp_leaks" ".txt" in
  if not (report_to path) then failwith "cannot write the report";
  let ic = open_in_bin path in
  let s = really_input_string ic (in_channel_length ic) in
  close_in ic; Sys.remove path;
  print_string s;
  String.split_on_char '\n' s

let () =
  let file, leaked_line, weak_line, dropped_line = create () in
  let lines = report () in
  let has l = List.mem l lines in
  check "1000 roots at one site"
    (has "boxroot: 1000 roots alive, created at 1 site (largest group first):");
  check "the leaking line" (has (Printf.sprintf "      1000  %s:%d" file leaked_line));
  check "3 weak roots at one site"
    (has "boxroot: 3 weak roots alive, created at 1 site (largest group first):");
  check "the weak roots' line" (has (Printf.sprintf "         3  %s:%d" file weak_line));
  let dropped = Printf.sprintf "%s:%d" file dropped_line in
  check "not the destroyed roots' line"
    (not (List.exists (fun l -> String.ends_with ~suffix:dropped l) lines));
  destroy ();
  let lines = report () in
  check "nothing left" (lines = [ "boxroot: no roots alive"; "boxroot: no weak roots alive"; "" ]);
  Printf.printf "test_cpp_leaks: %d passed, %d failed\n" !passed !failed;
  exit (if !failed = 0 then 0 else 1)
