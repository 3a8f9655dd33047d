//! Safe OCaml GC roots for Rust, after the caller-roots discipline of the
//! Boxroot paper (§4), on this repository's boxroot C library.
//!
//! The OCaml GC may move or free any heap value whenever it runs, that is,
//! at any allocation. This crate turns that rule into Rust borrows:
//!
//! - [`Runtime`] is the capability of holding the domain lock (§4.3). It
//!   never leaves its thread. `&Runtime` lets one read the OCaml heap;
//!   `&mut Runtime` lets one allocate or collect.
//! - [`Value<'a>`](Value) is a non-rooted value (§4.4): `Copy`, with a
//!   lifetime that borrows the runtime, so the compiler rejects its use
//!   after an allocation, as it rejects a vector iterator used after a push.
//! - [`Root`] owns a boxroot (§4.5): no lifetime, survives collections,
//!   `Send` and `Sync`, deleted by `Drop` on any thread, lock or not.
//! - [`Weak`] owns a weak boxroot: like a `Root`, but it does not keep
//!   its value alive; [`Weak::get`] and [`Weak::upgrade`] return `None`
//!   once the GC has found the value dead (OCaml's `Weak`, JNI's weak
//!   global references).
//! - [`ValueRef<'a>`](ValueRef) `= &'a ValueCell` is a value with
//!   reference semantics (§4.6): `&Root` and `&Value` both convert to it,
//!   so a function taking `ValueRef`s accepts roots, immediates, static and
//!   non-rooted values alike, within what the borrow checker allows.
//!
//! Functions come in three kinds (§4.7): no runtime access (`fn f(...)`),
//! read-only access (`fn g(gc: &Runtime, ...)`: may read `ValueRef`s, may
//! not allocate), read-write access (`fn h(gc: &mut Runtime, ...)`: may
//! allocate; its `ValueRef` arguments must then be rooted, immediate or
//! static, which the borrow checker enforces).
//!
//! # Example (§4.8)
//!
//! ```
//! use boxroot::{alloc_tuple, caml_alloc, shared, val_long, Root, Runtime, Value, ValueRef};
//!
//! // ∅: reads the heap only through its arguments.
//! fn f<'a>(x: Value<'a>, y: Value<'a>) -> Value<'a> {
//!     if y.is_block() { y.field(0) } else { x }
//! }
//! // R: reads references, does not allocate.
//! fn g2<'a>(gc: &'a Runtime, x: ValueRef<'_>, y: ValueRef<'_>) -> Value<'a> {
//!     let y = y.get(gc);
//!     if y.is_block() { y.field(0) } else { x.get(gc) }
//! }
//! // RW: allocates, so its arguments must survive an allocation.
//! fn h3<'a>(gc: &'a mut Runtime, x: ValueRef<'_>, y: ValueRef<'_>) -> Value<'a> {
//!     alloc_tuple(gc, &[x, y])
//! }
//!
//! fn example(gc: &mut Runtime) {
//!     // Immediates can be passed to an allocating function.
//!     let val: Value<'static> = val_long(42);
//!     h3(gc, &val, &val);
//!     // Non-rooted values can be passed to non-allocating functions.
//!     // (`shared!` re-borrows the runtime immutably for the result of an
//!     // allocation: see its documentation and §4.9.1.)
//!     let val2 = shared!(gc, caml_alloc(gc, 1, 0));
//!     assert_eq!(f(val, val2), Value::unit()); // by value
//!     assert_eq!(g2(gc, &val, &val2), Value::unit()); // by reference
//!     // h3(gc, &val, &val2); // Compilation error: good
//!     // Rooting makes them acceptable to allocating functions.
//!     let val2_root = Root::create(gc, val2);
//!     let val3 = shared!(gc, h3(gc, &val, &val2_root));
//!     assert_eq!(g2(gc, &val3, &val2_root), Value::unit());
//!     assert_eq!(val3.field(0), val_long(42));
//!     // g2(gc, &val, &val2); // Compilation error: good (val2 is stale)
//!     gc.full_major();
//!     assert_eq!(val2_root.get(gc).field(0), Value::unit());
//! }
//!
//! let mut gc = Runtime::init().expect("OCaml runtime");
//! example(&mut gc);
//! ```
//!
//! # What is checked when
//!
//! At compile time: a non-rooted `Value` (or a `ValueRef` into the heap)
//! cannot be used after an allocation or collection, nor passed to a
//! function that allocates; reading OCaml memory needs `&Runtime`, running
//! the GC needs `&mut Runtime`; a `Runtime`, and so a `Value`, cannot go to
//! another thread, and cannot be used while the lock is released; a
//! root's cell cannot be referenced across `modify`. At run time: failures
//! of the C library (no memory for a pool; boxroot torn down; lock not
//! held) become [`Error`]s or panics carrying `boxroot_error_string`;
//! field access checks block layout and bounds (panics); [`Runtime::init`]
//! hands out one capability per process, never to a thread that already
//! holds a lock. Deleting a root needs nothing, so `Drop` is safe anywhere.
//!
//! # Linking
//!
//! The C library is compiled by the `ocaml-boxroot-sys` crate of this
//! repository. A program whose `main` is in Rust, like the tests, also links
//! the OCaml runtime (feature `link-ocaml-runtime-and-dummy-program` of
//! `ocaml-boxroot-sys`) and starts it with [`Runtime::init`]; Rust code
//! called from OCaml uses [`Runtime::assume_locked`] instead.
#![warn(missing_docs)]

mod alloc;
mod cell;
mod error;
mod ffi;
mod root;
mod runtime;
mod value;
mod weak;

pub use alloc::{alloc_block, alloc_string, alloc_tuple, caml_alloc};
pub use cell::{as_val, ValueCell, ValueRef};
pub use error::{Error, ErrorKind};
pub use ocaml_boxroot_sys as sys;
pub use ocaml_boxroot_sys::Stats;
pub use root::Root;
pub use runtime::Runtime;
pub use value::{val_long, Value};
pub use weak::{emptied, Emptied, Weak, WeakId};

/// Prints on stderr the roots still alive, grouped by the `file:line`
/// that created them (the callers of [`Root::new`], [`Weak::new`] and
/// their variants), largest group first, then the weak roots
/// (`boxroot_debug_report_leaks`, boxroot.h). With feature `debug` only,
/// which records the sites; otherwise a one-line note.
/// Call it at two points of a program and compare, to see what a phase
/// left behind. With feature `debug` and `BOXROOT_DEBUG_LEAKS=1` in the
/// environment, the same report is printed at exit.
pub fn report_leaks() {
    // SAFETY: any thread, at any time; null is stderr.
    unsafe { sys::ext::boxroot_debug_report_leaks(core::ptr::null_mut()) }
}

/// Evaluates an allocating expression, then returns its [`Value`] as
/// borrowing the runtime immutably.
///
/// `shared!(gc, h(gc, ...))`, where `gc: &mut Runtime` (or anything that
/// dereferences to a `Runtime`) and `h(gc, ...)` returns a `Value`.
///
/// Why: a function `h<'a>(gc: &'a mut Runtime, ...) -> Value<'a>` returns a
/// value that Rust sees as borrowing `gc` *mutably*, so `gc` cannot even be
/// read while the value is alive, e.g. to root the value or to pass it to a
/// read-only function (the Boxroot paper, §4.9.1, "return-value pollution"). This
/// macro ends the mutable borrow and re-borrows `gc` immutably for the
/// result, as §4.9.1 suggests. The result is still invalidated by the next
/// allocation, which needs `&mut Runtime` again.
///
/// This is sound because there is one runtime per thread: whatever the
/// expression did, its result is valid now, and stays valid until the
/// runtime is next borrowed mutably.
#[macro_export]
macro_rules! shared {
    ($gc:expr, $alloc:expr) => {{
        let raw: isize = $crate::Value::raw($alloc);
        // SAFETY: see the macro's documentation.
        unsafe { $crate::__rebind(&*$gc, raw) }
    }};
}

/// The macro `shared!`'s step: a raw value, valid now, re-tagged with a
/// shared borrow of the runtime. Not API.
///
/// # Safety
/// `raw` is a valid value now, and `gc` is this thread's runtime.
#[doc(hidden)]
pub unsafe fn __rebind(gc: &Runtime, raw: isize) -> Value<'_> {
    let _ = gc;
    Value::from_raw(raw)
}
