//! Raw bindings to the boxroot C library: fast, movable GC roots for OCaml.
//!
//! A drop-in replacement for crates.io's `ocaml-boxroot-sys` 0.4: the same
//! items, with the same types and meaning, but linked against this
//! repository's C library (`boxroot/*.c`, compiled by `build.rs`). Point
//! an existing dependency at it with
//!
//! ```toml
//! [patch.crates-io]
//! ocaml-boxroot-sys = { path = "path/to/rust/ocaml-boxroot-sys" }
//! ```
//!
//! The rules of use (which calls need the OCaml domain lock, what fails and
//! how) are those of `boxroot/boxroot.h`. In short: `boxroot_create`,
//! `boxroot_modify`, `boxroot_get` and reading through `boxroot_get_ref`
//! need the domain lock; `boxroot_delete` can be called from any thread at
//! any time. For a safe interface, see the `boxroot` crate.
//!
//! Invariant relied on by these declarations: a `boxroot` of the C API is
//! a non-null pointer to the cell holding the value (NULL only as the
//! failure result of `boxroot_create`), so `Option<BoxRoot>` has the C
//! type's layout, with `None` for NULL.
#![no_std]

/// An OCaml value, as the C type `value`.
pub type Value = isize;

/// The cell that a root points to. The GC rewrites it when it moves the
/// value, hence the `UnsafeCell`.
pub type ValueCell = core::cell::UnsafeCell<Value>;

/// A root: the C type `boxroot`, a non-null pointer to its cell.
#[repr(transparent)]
#[derive(Copy, Clone, Debug, PartialEq, PartialOrd, Eq)]
pub struct BoxRoot {
    contents: core::ptr::NonNull<ValueCell>,
}

/// The address of the cell that holds the root's value (`boxroot_get_ref`).
/// It stays valid until the root is deleted or modified; reading through it
/// needs the domain lock.
#[inline]
pub fn boxroot_get_ref(br: BoxRoot) -> *const ValueCell {
    br.contents.as_ptr()
}

/// The value held by the root (`boxroot_get`).
///
/// # Safety
/// The root must be alive, and this thread must hold the domain lock.
#[inline]
pub unsafe fn boxroot_get(br: BoxRoot) -> Value {
    *core::cell::UnsafeCell::raw_get(boxroot_get_ref(br))
}

// `bool` is C's `_Bool`, and `Option<BoxRoot>` is a nullable pointer.
extern "C" {
    /// Creates a root holding `v`; `None` on failure (see
    /// [`boxroot_error_string`]). Needs the domain lock.
    pub fn boxroot_create(v: Value) -> Option<BoxRoot>;
    /// Deletes a root. Any thread, with or without a domain lock.
    pub fn boxroot_delete(br: BoxRoot);
    /// Makes `*br` hold `v`, possibly moving the root (hence `*mut`).
    /// Returns `false` on failure, leaving the root unchanged. Needs the
    /// domain lock.
    pub fn boxroot_modify(br: *mut BoxRoot, v: Value) -> bool;
    /// Installs the GC hooks (optional: the first creation does it).
    /// Needs the domain lock. Returns whether boxroot is running.
    pub fn boxroot_setup() -> bool;
    /// Why the last failing call of this thread failed (or the status if
    /// none did). A static, NUL-terminated string; never null.
    pub fn boxroot_error_string() -> *const core::ffi::c_char;
}

/// The state of the library (`boxroot_status`); the order is that of the
/// C enumeration.
#[repr(C)]
#[non_exhaustive]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// No root created and `boxroot_setup` not called yet.
    NotSetup,
    /// Set up; roots can be created.
    Running,
    /// `boxroot_teardown` was called; creation fails from now on.
    ToreDown,
    /// Setup failed.
    Invalid,
}

extern "C" {
    /// Uninstalls the hooks and frees every pool: all roots must have been
    /// deleted. Needs the domain lock.
    pub fn boxroot_teardown();
    /// The state of the library.
    pub fn boxroot_status() -> Status;
    /// Prints statistics on standard output.
    pub fn boxroot_print_stats();
}

/// Statistics of the C library (`struct boxroot_stats` of
/// `boxroot_stats.h`), read by [`boxroot_get_stats`].
///
/// Not part of crates.io's `ocaml-boxroot-sys` 0.4: an extension of this
/// implementation, only available when linked with this repository's C
/// library.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Created minus deleted.
    pub roots_alive: core::ffi::c_long,
    /// Roots created since setup.
    pub created: core::ffi::c_long,
    /// Deleted by the domain that owns the root's pool.
    pub deleted_local: core::ffi::c_long,
    /// Deleted by another domain.
    pub deleted_remote_domain: core::ffi::c_long,
    /// Deleted by a thread that held no domain lock.
    pub deleted_purely_remote: core::ffi::c_long,
    /// Roots moved by boxroot_modify.
    pub modify_moves: core::ffi::c_long,
    /// Includes remote deletions not yet collected.
    pub slots_in_use: core::ffi::c_long,
    /// Remote deletions applied by the owner.
    pub delayed_frees_collected: core::ffi::c_long,
    /// Pools scanned at every minor collection.
    pub pools_young: core::ffi::c_long,
    /// Pools scanned at major collections only.
    pub pools_old: core::ffi::c_long,
    /// Empty pools kept by domains.
    pub pools_free: core::ffi::c_long,
    /// Pools of terminated domains, not adopted yet.
    pub pools_orphaned: core::ffi::c_long,
    /// Old pools below the low mark, made young again to allocate from.
    pub pools_demoted: core::ffi::c_long,
    /// Orphan pools taken over by a domain.
    pub pools_adopted: core::ffi::c_long,
    /// Minor collections scanned (summed over domains).
    pub minor_scans: core::ffi::c_long,
    /// Major cycles scanned (summed over domains).
    pub major_scans: core::ffi::c_long,
    /// Slots visited by minor scans.
    pub minor_slots_scanned: core::ffi::c_long,
    /// Slots visited by major scans.
    pub major_slots_scanned: core::ffi::c_long,
    /// Time spent in minor scans, in nanoseconds.
    pub minor_scan_ns: core::ffi::c_long,
    /// Time spent in major scans, in nanoseconds.
    pub major_scan_ns: core::ffi::c_long,
    /// Chunks of pools reserved from the system.
    pub chunks: core::ffi::c_long,
    /// Address space reserved for pools.
    pub reserved_bytes: core::ffi::c_long,
    /// See `boxroot_stats.h`.
    pub huge_page_chunks: core::ffi::c_long,
    /// Pools in use by domains.
    pub pools_handed_out: core::ffi::c_long,
    /// Free pools kept with their memory.
    pub chunk_free_pools_committed: core::ffi::c_long,
    /// Free pools whose memory went back to the system.
    pub chunk_free_pools_decommitted: core::ffi::c_long,
}

extern "C" {
    /// Fills `*out` (extension, see [`Stats`]). Needs the domain lock.
    /// Returns `false` if boxroot is not running.
    pub fn boxroot_get_stats(out: *mut Stats) -> bool;
    /// `sizeof(struct boxroot_stats)` in the C library this crate links,
    /// to check that [`Stats`] has the same layout.
    pub static boxroot_stats_size: usize;
}
