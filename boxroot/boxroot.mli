(** Boxroot, seen from OCaml: monitoring numbers.

    Boxroot itself is a C library (see [boxroot.h]); this module lets an
    OCaml program that links it (directly or through C, C++ or Rust
    bindings) read its statistics. The numbers are those of
    [boxroot_stats.h]; they are exact in a program with one domain, and a
    close snapshot while other domains use boxroot. *)

type stats = {
  roots_alive : int;  (** live roots: created minus deleted *)
  created : int;  (** roots created, including moves by modify *)
  deleted_local : int;  (** deleted by the domain owning the root *)
  deleted_remote_domain : int;  (** deleted by another domain *)
  deleted_purely_remote : int;  (** deleted by a thread holding no domain lock *)
  modify_moves : int;
      (** roots that [boxroot_modify] moved to a young pool (each counts
          as one creation and one deletion) *)
  slots_in_use : int;  (** includes remote deletions not yet collected *)
  delayed_frees_collected : int;  (** remote deletions collected so far *)
  pools_young : int;  (** pools scanned at every minor collection *)
  pools_old : int;  (** pools scanned at major collections only *)
  pools_free : int;  (** empty pools kept by the domains *)
  pools_orphaned : int;  (** left by terminated domains, not yet adopted *)
  pools_demoted : int;  (** old pools reused for allocation *)
  pools_adopted : int;  (** orphan pools taken over by a domain *)
  minor_scans : int;  (** scans for minor collections, summed over domains *)
  major_scans : int;  (** other scans: major cycles, compactions *)
  minor_slots_scanned : int;
  major_slots_scanned : int;
  minor_scan_ns : int;  (** time spent scanning roots in minor collections *)
  major_scan_ns : int;
  chunks : int;  (** chunks of address space reserved for pools *)
  reserved_bytes : int;
  huge_page_chunks : int;  (** chunks advised to use huge pages *)
  pools_handed_out : int;  (** pools in use by the domains *)
  chunk_free_pools_committed : int;  (** free pools ready for reuse *)
  chunk_free_pools_decommitted : int;  (** free pools given back to the OS *)
}

val stats : unit -> stats option
(** [None] until the first root is created (or after teardown). *)

val print_stats : unit -> unit
(** Prints a summary on standard output. *)
