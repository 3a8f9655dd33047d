//! OCaml values with reference semantics (the Boxroot paper, §4.6): `ValueCell`, a
//! memory cell holding a value, and `ValueRef<'a> = &'a ValueCell`.
//!
//! Invariants:
//! - a `&'a ValueCell` points to a cell that holds a valid value for as
//!   long as `'a`: a root's cell (kept up to date by the GC), a field of a
//!   block valid for `'a`, or a `Value` itself (immediate, static or
//!   non-rooted: then `'a` is at most the value's own lifetime);
//! - the cell may be rewritten by the GC (or by OCaml code of another
//!   domain, for heap fields), never through a `&ValueCell`: it is atomic,
//!   which tells Rust that it changes behind shared references, and which
//!   OCaml 5's memory model asks for;
//! - it is read only with a `&Runtime`, since reading while the GC may be
//!   moving the value is not safe.
use crate::{Runtime, Value};
use std::fmt;
use std::sync::atomic::{AtomicIsize, Ordering};

/// A memory cell holding an OCaml value: what a [`ValueRef`] points to.
///
/// A `&ValueCell` can denote a rooted value (from a [`Root`](crate::Root),
/// by `Deref`), or an immediate, static or non-rooted value (from a
/// [`Value`], by `Deref`). Functions that take `&ValueCell` arguments
/// therefore accept all of them; if they also take `&mut Runtime` (they
/// allocate), the borrow checker only lets through the references that
/// survive an allocation: roots, immediates and static values.
#[repr(transparent)]
pub struct ValueCell {
    atomic: AtomicIsize,
}

/// An OCaml value with reference semantics: valid as long as the reference,
/// whether or not an allocation happens meanwhile if the cell is a root.
pub type ValueRef<'a> = &'a ValueCell;

impl ValueCell {
    /// The cell at `p`.
    ///
    /// # Safety
    /// `p` points to a cell holding a valid OCaml value, for as long as
    /// `'a`, and the cell is kept up to date if the GC moves the value.
    pub unsafe fn from_ptr<'a>(p: *const isize) -> &'a ValueCell {
        &*(p as *const ValueCell)
    }

    /// The address of the cell.
    pub fn as_ptr(&self) -> *const isize {
        self.atomic.as_ptr()
    }

    /// The value in the cell now, as a non-rooted value (§4.6's `as_val`):
    /// its lifetime is that of the runtime borrow, not that of the cell.
    pub fn get<'a>(&self, _gc: &'a Runtime) -> Value<'a> {
        let raw = self.atomic.load(Ordering::Relaxed);
        // SAFETY: the cell holds a valid value (invariant), read while the
        // domain lock is held, so valid until the next allocation, which
        // needs &mut Runtime.
        unsafe { Value::from_raw(raw) }
    }
}

/// The value of a reference, as a non-rooted value (§4.6): the same as
/// [`ValueCell::get`].
pub fn as_val<'a>(gc: &'a Runtime, val: ValueRef<'_>) -> Value<'a> {
    val.get(gc)
}

impl fmt::Debug for ValueCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Without the runtime, only the address can be shown.
        write!(f, "ValueCell({:p})", self.as_ptr())
    }
}
