//! The few functions of the OCaml runtime that this crate calls (declared
//! here rather than through a bindings crate; their C prototypes are in
//! `caml/*.h`, identical in OCaml 4.14 and 5.x).
use std::os::raw::{c_char, c_uint};

/// The C type `value`.
pub(crate) type RawValue = isize;

extern "C" {
    pub(crate) fn caml_startup(argv: *const *const c_char);
    pub(crate) fn caml_alloc(wosize: usize, tag: c_uint) -> RawValue;
    pub(crate) fn caml_alloc_initialized_string(len: usize, contents: *const c_char) -> RawValue;
    pub(crate) fn caml_modify(field: *mut RawValue, v: RawValue);
    pub(crate) fn caml_string_length(v: RawValue) -> usize;
    pub(crate) fn caml_minor_collection();
    pub(crate) fn caml_gc_full_major(unit: RawValue) -> RawValue;
    pub(crate) fn caml_gc_compaction(unit: RawValue) -> RawValue;
    pub(crate) fn caml_enter_blocking_section();
    pub(crate) fn caml_leave_blocking_section();
}
