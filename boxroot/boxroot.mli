(** Boxroot, seen from OCaml: monitoring numbers.

    Boxroot itself is a C library (see [boxroot.h]); this module lets an
    OCaml program that links it (directly or through C, C++ or Rust
    bindings) read its statistics. *)

type stats = {
  roots_alive : int;  (** created minus deleted *)
  created : int;
  deleted_local : int;  (** by the owning domain *)
  deleted_remote_domain : int;  (** by another domain *)
  deleted_purely_remote : int;  (** by a thread holding no domain lock *)
  slots_in_use : int;  (** includes remote deletions not yet collected *)
  pools_young : int;
  pools_old : int;
  pools_free : int;
  pools_orphaned : int;  (** left by terminated domains, not yet adopted *)
  minor_scans : int;
  major_scans : int;
  minor_slots_scanned : int;
  major_slots_scanned : int;
  minor_scan_ns : int;  (** time spent scanning roots in minor collections *)
  major_scan_ns : int;
  reserved_bytes : int;  (** address space reserved for pools *)
  pools_handed_out : int;
}

val stats : unit -> stats option
(** [None] until the first root is created (or after teardown). *)

val print_stats : unit -> unit
(** Prints a summary on standard output. *)
