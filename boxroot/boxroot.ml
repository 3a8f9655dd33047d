type stats = {
  roots_alive : int;
  created : int;
  deleted_local : int;
  deleted_remote_domain : int;
  deleted_purely_remote : int;
  slots_in_use : int;
  pools_young : int;
  pools_old : int;
  pools_free : int;
  pools_orphaned : int;
  minor_scans : int;
  major_scans : int;
  minor_slots_scanned : int;
  major_slots_scanned : int;
  minor_scan_ns : int;
  major_scan_ns : int;
  reserved_bytes : int;
  pools_handed_out : int;
}

external stats : unit -> stats option = "boxroot_ml_stats"
external print_stats : unit -> unit = "boxroot_ml_print_stats"
