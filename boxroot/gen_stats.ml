(* Writes the OCaml module Boxroot (boxroot.ml, or boxroot.mli with
   "mli") from the counter list of boxroot_stats.h, BOXROOT_STATS_FIELDS,
   so that the record type and the C struct cannot diverge. Run by dune:
   ocaml gen_stats.ml boxroot_stats.h (ml|mli) *)

let fields header =
  let ic = open_in header in
  let rec loop acc =
    match input_line ic with
    | exception End_of_file -> close_in ic; List.rev acc
    | line ->
      let line = String.trim line in
      (* Lines of the form: X(name, "doc") \ *)
      if String.length line > 2 && String.sub line 0 2 = "X(" then
        let comma = String.index line ',' in
        let name = String.sub line 2 (comma - 2) in
        let q1 = String.index line '"' and q2 = String.rindex line '"' in
        loop ((name, String.sub line (q1 + 1) (q2 - q1 - 1)) :: acc)
      else loop acc
  in
  loop []

let () =
  let header = Sys.argv.(1) and kind = Sys.argv.(2) in
  let fields = fields header in
  if fields = [] then (prerr_endline "gen_stats: no field found"; exit 2);
  let p = Printf.printf in
  p "(* Generated from boxroot_stats.h by gen_stats.ml: do not edit. *)\n\n";
  if kind = "mli" then
    p "(** Boxroot, seen from OCaml: monitoring numbers.\n\n\
      \    Boxroot itself is a C library (see [boxroot.h]); this module lets an\n\
      \    OCaml program that links it (directly or through C, C++ or Rust\n\
      \    bindings) read its statistics. The numbers are those of\n\
      \    [boxroot_stats.h]: one instant of every domain, also while other\n\
      \    domains use boxroot (on OCaml 5, [stats] stops them for the read). *)\n\n";
  p "type stats = {\n";
  List.iter (fun (name, doc) ->
      if kind = "mli" then p "  %s : int;  (** %s *)\n" name doc
      else p "  %s : int;\n" name) fields;
  p "}\n\n";
  if kind = "mli" then begin
    p "val stats : unit -> stats option\n\
       (** [None] until the first root is created (or after teardown). *)\n\n";
    p "val print_stats : unit -> unit\n(** Prints a summary on standard output. *)\n"
  end else begin
    p "external stats : unit -> stats option = \"boxroot__ml_stats\"\n";
    p "external print_stats : unit -> unit = \"boxroot__ml_print_stats\"\n"
  end
