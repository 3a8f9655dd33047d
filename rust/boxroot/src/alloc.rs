//! Allocation on the OCaml heap: functions of kind RW (the Boxroot paper, §4.7).
//!
//! Each takes `&'a mut Runtime`, since allocating may run the GC, and
//! returns a `Value<'a>`. Values passed in are `ValueRef`s, read only after
//! the allocation: the borrow checker lets through only references that
//! survive it (roots, immediates, static values): the caller roots the
//! arguments (§4.5.1).
//!
//! OCaml's allocation functions raise `Out_of_memory` when the heap cannot
//! grow; as everywhere in the OCaml FFI, that exception would unwind
//! through these frames, which Rust does not support: such a failure is
//! out of this crate's scope.
use crate::ffi;
use crate::value::fields_are_values;
use crate::{Runtime, Value, ValueRef};

/// A new block of `size` fields with tag `tag`, each holding `()` (C's
/// `caml_alloc`, as in §4.4.1). Panics if the tag is not that of a block
/// whose fields are values (ordinary tags are 0 to 244).
pub fn caml_alloc(_gc: &mut Runtime, size: usize, tag: u8) -> Value<'_> {
    assert!(
        fields_are_values(tag),
        "caml_alloc: tag {} is not a tag of a block of values",
        tag
    );
    // SAFETY: the lock is held; caml_alloc fills scanned blocks with ().
    unsafe { Value::from_raw(ffi::caml_alloc(size, tag as u32)) }
}

/// A new block with tag `tag` holding the values of `fields`, read after
/// the allocation. Panics as [`caml_alloc`].
pub fn alloc_block<'a>(gc: &'a mut Runtime, tag: u8, fields: &[ValueRef<'_>]) -> Value<'a> {
    let block = caml_alloc(gc, fields.len(), tag).raw();
    let gc: &'a Runtime = gc;
    for (i, field) in fields.iter().enumerate() {
        // SAFETY: i is in bounds of a block of values. caml_modify does not
        // allocate, so `block` stays valid; it handles young and old blocks.
        unsafe { ffi::caml_modify((block as *mut isize).add(i), field.get(gc).raw()) };
    }
    // SAFETY: a fresh block, valid until the next use of &mut Runtime.
    unsafe { Value::from_raw(block) }
}

/// A new tuple (tag 0) of the values of `fields`.
pub fn alloc_tuple<'a>(gc: &'a mut Runtime, fields: &[ValueRef<'_>]) -> Value<'a> {
    alloc_block(gc, 0, fields)
}

/// A new OCaml string holding `bytes`.
pub fn alloc_string<'a>(_gc: &'a mut Runtime, bytes: &[u8]) -> Value<'a> {
    // SAFETY: the lock is held; the function copies `bytes`.
    unsafe {
        Value::from_raw(ffi::caml_alloc_initialized_string(
            bytes.len(),
            bytes.as_ptr() as *const std::os::raw::c_char,
        ))
    }
}
