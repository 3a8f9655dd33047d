//! Roots (the Boxroot paper, §4.5): an owned boxroot, a smart pointer to a cell that
//! the OCaml GC treats as a root.
//!
//! Invariants:
//! - a `Root` owns exactly one live boxroot, deleted exactly once, by
//!   `Drop` (or handed over by `into_raw`);
//! - creating and modifying need the domain lock (`&Runtime`); deleting
//!   needs nothing, so `Drop` is correct on any thread, with or without
//!   the lock, including during unwinding; this is why `Root` is `Send`
//!   and `Sync`;
//! - the cell address (`get_ref`) changes only in `modify`, which takes
//!   `&mut self` so that no reference to the old cell survives it.
use crate::cell::ValueCell;
use crate::{Error, Runtime, Value};
use ocaml_boxroot_sys as sys;
use std::fmt;

/// A rooted OCaml value: it stays alive, and the root keeps track of it
/// when the GC moves it, for as long as the `Root` exists.
///
/// A `Root` has no lifetime: it survives allocations and collections, can
/// be stored anywhere, returned, and sent or shared across threads. Reading
/// it needs the runtime ([`Root::get`]); dropping it does not.
///
/// `&Root` converts to a [`ValueRef`](crate::ValueRef) by `Deref`
/// (`boxroot_get_ref`), which is the way to pass it to functions.
#[repr(transparent)]
pub struct Root {
    raw: sys::BoxRoot,
}

// SAFETY: the boxroot can be deleted from any thread (invariant above), and
// reading it needs a Runtime of the reading thread.
unsafe impl Send for Root {}
unsafe impl Sync for Root {}

impl Root {
    /// Roots `v`. Panics if the C library fails (out of memory for a new
    /// pool; boxroot torn down), with its explanation.
    #[track_caller]
    pub fn create(gc: &Runtime, v: Value<'_>) -> Root {
        Root::try_create(gc, v).unwrap_or_else(|e| panic!("{}", e))
    }

    /// The same as [`Root::create`], under Rust's usual constructor name.
    #[track_caller]
    pub fn new(gc: &Runtime, v: Value<'_>) -> Root {
        Root::create(gc, v)
    }

    /// Roots `v`, or says why the C library could not.
    #[track_caller]
    pub fn try_create(_gc: &Runtime, v: Value<'_>) -> Result<Root, Error> {
        // SAFETY: the domain lock is held (invariant of Runtime), `v` is valid.
        match unsafe { sys::ext::boxroot_create_tracked(v.raw()) } {
            Some(raw) => Ok(Root { raw }),
            None => Err(Error::last("boxroot_create")),
        }
    }

    /// The rooted value, as a non-rooted value that borrows the runtime
    /// (valid until the next allocation, unlike the root).
    pub fn get<'a>(&self, gc: &'a Runtime) -> Value<'a> {
        self.get_ref().get(gc)
    }

    /// The root's cell (`boxroot_get_ref`): a reference that stays valid
    /// across allocations, for as long as the root is borrowed.
    pub fn get_ref(&self) -> &ValueCell {
        // SAFETY: the cell of a live boxroot holds a valid value, updated by
        // the GC, until the root is modified (needs &mut self) or dropped.
        unsafe { ValueCell::from_ptr(sys::boxroot_get_ref(self.raw) as *const isize) }
    }

    /// Makes the root hold `v`. Panics if the C library fails (it may need
    /// a new pool), with its explanation; the root then still holds its
    /// previous value.
    pub fn modify(&mut self, gc: &Runtime, v: Value<'_>) {
        self.try_modify(gc, v).unwrap_or_else(|e| panic!("{}", e))
    }

    /// Makes the root hold `v`, or says why the C library could not (the
    /// root is then unchanged).
    pub fn try_modify(&mut self, _gc: &Runtime, v: Value<'_>) -> Result<(), Error> {
        // SAFETY: the domain lock is held; the root is live and ours.
        if unsafe { sys::boxroot_modify(&mut self.raw, v.raw()) } {
            Ok(())
        } else {
            Err(Error::last("boxroot_modify"))
        }
    }

    /// Gives up ownership of the boxroot, for the C API. It must be deleted
    /// eventually (`boxroot_delete`, or [`Root::from_raw`] then drop).
    pub fn into_raw(self) -> sys::BoxRoot {
        let raw = self.raw;
        std::mem::forget(self);
        raw
    }

    /// Takes ownership of a boxroot of the C API.
    ///
    /// # Safety
    /// `raw` is a live boxroot that nothing else deletes.
    pub unsafe fn from_raw(raw: sys::BoxRoot) -> Root {
        Root { raw }
    }
}

impl Drop for Root {
    /// Deletes the boxroot (`boxroot_delete`): on any thread, with or
    /// without the domain lock.
    fn drop(&mut self) {
        // SAFETY: owned and live (invariant); deletion needs no lock.
        unsafe { sys::boxroot_delete(self.raw) }
    }
}

impl std::ops::Deref for Root {
    type Target = ValueCell;

    /// `&Root` as a [`ValueRef`](crate::ValueRef): see [`Root::get_ref`].
    fn deref(&self) -> &ValueCell {
        self.get_ref()
    }
}

impl fmt::Debug for Root {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Root({:p})", self.get_ref().as_ptr())
    }
}
