(* The leak report of the debug build (boxroot_debug_report_leaks).

   Run without arguments, this program runs itself as `test_leaks.exe
   CASE` with or without BOXROOT_DEBUG_LEAKS=1, and checks the child's
   output. In each case, C code (leaks_stubs.c) leaks 1000 roots from one
   function and 3 weak roots from another, and creates and deletes 10
   roots in a third: the report must name the first two with their
   counts, largest first, and never the third. *)
open Boxroot_test

external create : unit -> unit = "leaks_test_create"
external move_one : 'a -> bool = "leaks_test_move_one"
external delete_all : unit -> unit = "leaks_test_delete_all"
external report : unit -> unit = "leaks_test_report"
external teardown : unit -> unit = "test_teardown"

let leaked_line = "      1000  leaks_test_leak_a_thousand+0x"
let weak_line = "         3  leaks_test_leak_three_weak+0x"
let strong_header = "boxroot: 1000 roots alive, created at 1 site (largest group first):"
let weak_header = "boxroot: 3 weak roots alive, created at 1 site (largest group first):"
let unused = "leaks_test_create_and_delete_ten"

(* The children. *)
let run_case = function
  | "report" ->
    (* On demand, twice: before and after deleting everything. A moved
       root keeps its site. *)
    create ();
    Gc.minor ();
    if not (move_one (ref 1)) then (prerr_endline "the root did not move"; exit 2);
    report ();
    delete_all ();
    report ()
  | "at_exit" -> create ()
  | "at_teardown" -> create (); teardown ()
  | name -> Printf.eprintf "unknown case %s\n" name; exit 2

let read_file path =
  let ic = open_in_bin path in
  let s = really_input_string ic (in_channel_length ic) in
  close_in ic; s

let run_child name ~report_env =
  let out = Filename.temp_file "boxroot_leaks" ".out"
  and err = Filename.temp_file "boxroot_leaks" ".err" in
  let fd_out = Unix.openfile out [ Unix.O_WRONLY; Unix.O_TRUNC ] 0o600
  and fd_err = Unix.openfile err [ Unix.O_WRONLY; Unix.O_TRUNC ] 0o600 in
  let env = Array.of_list
      ((if report_env then [ "BOXROOT_DEBUG_LEAKS=1" ] else [])
       @ List.filter (fun kv -> not (String.starts_with ~prefix:"BOXROOT_DEBUG_LEAKS=" kv))
         (Array.to_list (Unix.environment ()))) in
  let pid = Unix.create_process_env Sys.executable_name
      [| Sys.executable_name; name |] env Unix.stdin fd_out fd_err in
  let _, status = Unix.waitpid [] pid in
  Unix.close fd_out; Unix.close fd_err;
  let o = read_file out and e = read_file err in
  Sys.remove out; Sys.remove err;
  check (status = Unix.WEXITED 0) "%s: the child failed, stderr %S" name e;
  o, e

let lines s = String.split_on_char '\n' s
let count_lines pred s = List.length (List.filter pred (lines s))
let has_prefix p line = String.starts_with ~prefix:p line
let mentions sub s =
  let n = String.length s and m = String.length sub in
  let rec at i = i + m <= n && (String.sub s i m = sub || at (i + 1)) in
  at 0

(* `text` holds `reports` full reports of the roots leaked by `create`. *)
let check_reports name text reports =
  check (count_lines (( = ) strong_header) text = reports)
    "%s: expected %d times %S in %S" name reports strong_header text;
  check (count_lines (has_prefix leaked_line) text = reports)
    "%s: expected %d times %S in %S" name reports leaked_line text;
  check (count_lines (( = ) weak_header) text = reports)
    "%s: expected %d times %S in %S" name reports weak_header text;
  check (count_lines (has_prefix weak_line) text = reports)
    "%s: expected %d times %S in %S" name reports weak_line text;
  check (not (mentions unused text)) "%s: the report names %s: %S" name unused text

let parent () =
  (* On demand: one full report, then one of nothing; none at exit. *)
  let out, err = run_child "report" ~report_env:false in
  check_reports "report" out 1;
  let empty = "boxroot: no roots alive\nboxroot: no weak roots alive\n" in
  check (String.ends_with ~suffix:empty out) "report: expected %S at the end of %S" empty out;
  check (err = "") "report: unexpected stderr %S" err;
  (* At exit, only if asked. *)
  let _, err = run_child "at_exit" ~report_env:true in
  check_reports "at_exit" err 1;
  let _, err = run_child "at_exit" ~report_env:false in
  check (err = "") "at_exit without BOXROOT_DEBUG_LEAKS: unexpected stderr %S" err;
  (* At teardown, and then not again at exit. *)
  let _, err = run_child "at_teardown" ~report_env:true in
  check_reports "at_teardown" err 1;
  print_string out;
  finish "test_leaks"

let () =
  match Sys.argv with
  | [| _; name |] -> run_case name
  | _ -> parent ()
