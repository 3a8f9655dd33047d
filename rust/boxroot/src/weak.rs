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

/// Notifying weak roots (`boxroot_weak_create_notifying`, boxroot.h): a
/// weak root that, when the GC empties it, is queued with a word chosen
/// at its creation, for [`emptied`] to report. The GC runs no Rust code:
/// the program collects the notices when it likes, at a cost that grows
/// with the roots that emptied, not with those alive.
impl Weak {
    /// A notifying weak root holding `v`, that reports its emptying with
    /// `word` (e.g. the index of its entry in a table). Panics if the C
    /// library fails.
    #[track_caller]
    pub fn create_notifying(gc: &Runtime, v: Value<'_>, word: usize) -> Weak {
        Weak::try_create_notifying(gc, v, word).unwrap_or_else(|e| panic!("{}", e))
    }

    /// [`Weak::create_notifying`], with the C library's failure as an
    /// `Error`.
    pub fn try_create_notifying(_gc: &Runtime, v: Value<'_>, word: usize) -> Result<Weak, Error> {
        // SAFETY: the domain lock is held (invariant of Runtime), `v` is valid.
        match unsafe { sys::ext::boxroot_weak_create_notifying(v.raw(), word) } {
            Some(raw) => Ok(Weak { raw }),
            None => Err(Error::last("boxroot_weak_create_notifying")),
        }
    }

    /// The word given to [`Weak::create_notifying`]; 0 for a weak root
    /// made otherwise (with feature `debug`, the C library aborts).
    pub fn notifying_word(&self) -> usize {
        // SAFETY: the weak root is live and ours; the word needs no lock.
        unsafe { sys::ext::boxroot_weak_notifying_word(self.raw) }
    }

    /// This weak root's identity, to compare with a reported one
    /// ([`emptied`]).
    pub fn id(&self) -> WeakId {
        WeakId(self.raw)
    }
}

/// Which weak root a notice names: its identity only, not an owner (the
/// root stays owned by its [`Weak`], which the program drops). Equal to
/// [`Weak::id`] of that root.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WeakId(BoxRootWeak);

impl WeakId {
    /// The C library's handle, e.g. for a table kept in C.
    pub fn raw(self) -> BoxRootWeak {
        self.0
    }
}

/// The notifying weak roots of this domain that the GC emptied, each with
/// its word, in no particular order: an iterator that asks the C library for the
/// next one at each step (`boxroot_weak_next_emptied`). Each emptying is
/// reported once; a root dropped, or refilled by [`Weak::modify`], before
/// its notice comes is not reported. The roots stay the program's: drop
/// their `Weak` (which the iterator does not own) to delete them.
///
/// ```ignore
/// for (id, i) in boxroot::emptied(gc) {
///     let entry = table.remove(i);          // the Weak of entry i
///     debug_assert_eq!(entry.id(), id);
/// }
/// ```
pub fn emptied(gc: &Runtime) -> Emptied<'_> {
    Emptied { _gc: gc }
}

/// The iterator of [`emptied`]; it borrows the [`Runtime`], hence the
/// domain lock.
pub struct Emptied<'a> {
    _gc: &'a Runtime,
}

impl Iterator for Emptied<'_> {
    type Item = (WeakId, usize);

    fn next(&mut self) -> Option<(WeakId, usize)> {
        let mut raw = std::mem::MaybeUninit::<BoxRootWeak>::uninit();
        let mut word = 0usize;
        // SAFETY: the domain lock is held (the Runtime borrowed); on true
        // the C library has written `raw`.
        if unsafe { sys::ext::boxroot_weak_next_emptied(raw.as_mut_ptr(), &mut word) } {
            Some((WeakId(unsafe { raw.assume_init() }), word))
        } else {
            None
        }
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
