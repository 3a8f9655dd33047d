(* Field order: OCAML_STATS_FIELDS in ocaml_stubs.c. *)
type stats = {
  roots_alive : int;
  created : int;
  deleted_local : int;
  deleted_remote_domain : int;
  deleted_purely_remote : int;
  modify_moves : int;
  slots_in_use : int;
  delayed_frees_collected : int;
  pools_young : int;
  pools_old : int;
  pools_free : int;
  pools_orphaned : int;
  pools_demoted : int;
  pools_adopted : int;
  minor_scans : int;
  major_scans : int;
  minor_slots_scanned : int;
  major_slots_scanned : int;
  minor_scan_ns : int;
  major_scan_ns : int;
  chunks : int;
  reserved_bytes : int;
  huge_page_chunks : int;
  pools_handed_out : int;
  chunk_free_pools_committed : int;
  chunk_free_pools_decommitted : int;
}

external stats : unit -> stats option = "boxroot__ml_stats"
external print_stats : unit -> unit = "boxroot__ml_print_stats"
