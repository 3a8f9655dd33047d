//! Weak roots: an owned weak boxroot (`boxroot_weak` of `boxroot/boxroot.h`),
//! which holds an OCaml value without keeping it alive, like a pointer of
//! OCaml's `Weak` module, or `std::sync::Weak` for an `Arc`.
//!
//! Invariants:
//! - a `Weak` owns exactly one live weak boxroot, deleted exactly once, by
//!   `Drop` (or handed over by `into_raw`); like [`Root`], it is `Send` and
//!   `Sync`, since deletion needs no lock;
//! - its value is read only through `boxroot_weak_get` (the read barrier:
//!   it darkens the value while the GC marks, and reports a value that the
//!   GC found dead as gone), never through the cell: so `Weak` has no
//!   `get_ref` and no `Deref`, and [`Weak::get`] returns a non-rooted
//!   [`Value`] that borrows the runtime, or `None`.
use crate::{Error, Root, Runtime, Value};
use ocaml_boxroot_sys as sys;
use sys::ext::BoxRootWeak;
use std::fmt;

/// A weak reference to an OCaml value: it does not keep the value alive,
/// and reads `None` once the GC has found the value dead (at the latest at
/// the end of the major cycle after the one in which it became
/// unreachable). Immediates never go. [`Weak::upgrade`] makes a [`Root`]
/// of a value that is still there.
#[repr(transparent)]
pub struct Weak {
    raw: BoxRootWeak,
}

// SAFETY: as for Root: deletion from any thread, reading needs a Runtime.
unsafe impl Send for Weak {}
unsafe impl Sync for Weak {}

impl Weak {
    /// A weak root holding `v`. Panics if the C library fails (out of
    /// memory for a new pool; boxroot torn down), with its explanation.
    #[track_caller]
    pub fn create(gc: &Runtime, v: Value<'_>) -> Weak {
        Weak::try_create(gc, v).unwrap_or_else(|e| panic!("{}", e))
    }

    /// The same as [`Weak::create`], under Rust's usual constructor name.
    #[track_caller]
    pub fn new(gc: &Runtime, v: Value<'_>) -> Weak {
        Weak::create(gc, v)
    }

    /// A weak root holding `v`, or why the C library could not make one.
    #[track_caller]
    pub fn try_create(_gc: &Runtime, v: Value<'_>) -> Result<Weak, Error> {
        // SAFETY: the domain lock is held (invariant of Runtime), `v` is valid.
        match unsafe { sys::ext::boxroot_weak_create_tracked(v.raw()) } {
            Some(raw) => Ok(Weak { raw }),
            None => Err(Error::last("boxroot_weak_create")),
        }
    }

    /// The value, as a non-rooted value that borrows the runtime (valid
    /// until the next allocation), or `None` if the GC found it dead.
    /// Storing the value somewhere keeps it alive again, as for any value.
    pub fn get<'a>(&self, _gc: &'a Runtime) -> Option<Value<'a>> {
        let mut v: isize = 0;
        // SAFETY: the domain lock is held; the weak root is live and ours.
        // The read barrier may darken the value: no allocation.
        if unsafe { sys::ext::boxroot_weak_get(self.raw, &mut v) } {
            // SAFETY: a full weak root holds a valid value now.
            Some(unsafe { Value::from_raw(v) })
        } else {
            None
        }
    }

    /// Whether the value is gone (`get` would return `None`).
    pub fn is_empty(&self, gc: &Runtime) -> bool {
        self.get(gc).is_none()
    }

    /// A [`Root`] of the value if it is still there, as
    /// `std::sync::Weak::upgrade` makes an `Arc`. Panics if the C library
    /// cannot create the root.
    pub fn upgrade(&self, gc: &Runtime) -> Option<Root> {
        self.try_upgrade(gc).unwrap_or_else(|e| panic!("{}", e))
    }

    /// [`Weak::upgrade`], with the C library's failure as an `Error`.
    pub fn try_upgrade(&self, gc: &Runtime) -> Result<Option<Root>, Error> {
        match self.get(gc) {
            None => Ok(None),
            Some(v) => Root::try_create(gc, v).map(Some),
        }
    }

    /// Makes the weak root hold `v` (full again if it was empty). Panics
    /// if the C library fails; the weak root is then unchanged.
    pub fn modify(&mut self, gc: &Runtime, v: Value<'_>) {
        self.try_modify(gc, v).unwrap_or_else(|e| panic!("{}", e))
    }

    /// Makes the weak root hold `v`, or says why the C library could not.
    pub fn try_modify(&mut self, _gc: &Runtime, v: Value<'_>) -> Result<(), Error> {
        // SAFETY: the domain lock is held; the weak root is live and ours.
        if unsafe { sys::ext::boxroot_weak_modify(&mut self.raw, v.raw()) } {
            Ok(())
        } else {
            Err(Error::last("boxroot_weak_modify"))
        }
    }

    /// Gives up ownership, for the C API: the weak root must be deleted
    /// eventually (`boxroot_weak_delete`, or [`Weak::from_raw`] then drop).
    pub fn into_raw(self) -> BoxRootWeak {
        let raw = self.raw;
        std::mem::forget(self);
        raw
    }

    /// Takes ownership of a weak boxroot of the C API.
    ///
    /// # Safety
    /// `raw` is a live weak boxroot that nothing else deletes.
    pub unsafe fn from_raw(raw: BoxRootWeak) -> Weak {
        Weak { raw }
    }
}

impl Root {
    /// A [`Weak`] of the rooted value, as `Arc::downgrade`. Panics if the
    /// C library cannot create it.
    pub fn downgrade(&self, gc: &Runtime) -> Weak {
        Weak::create(gc, self.get(gc))
    }
}

impl Drop for Weak {
    /// Deletes the weak root (`boxroot_weak_delete`): on any thread, with
    /// or without the domain lock.
    fn drop(&mut self) {
        // SAFETY: owned and live (invariant); deletion needs no lock.
        unsafe { sys::ext::boxroot_weak_delete(self.raw) }
    }
}

impl fmt::Debug for Weak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Weak({:?})", self.raw)
    }
}
