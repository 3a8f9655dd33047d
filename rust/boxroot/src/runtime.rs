//! The runtime capability (the Boxroot paper, §4.3): a token that stands for holding
//! the OCaml domain lock on the current thread.
//!
//! Invariants:
//! - a `Runtime` exists only on a thread that holds a domain lock, and
//!   there is at most one usable `Runtime` per thread: `init` hands out one
//!   per process, `assume_locked` one per (unsafe) promise, scoped to a
//!   closure;
//! - it is neither `Send` nor `Sync`, so it never leaves its thread;
//! - everything that can run the GC (allocation, collections, releasing
//!   the lock) takes `&mut Runtime`; reading the heap takes `&Runtime`.
use crate::ffi;
use crate::Error;
use ocaml_boxroot_sys as sys;
use std::marker::PhantomData;
use std::os::raw::c_char;
use std::sync::atomic::{AtomicBool, Ordering};

/// Permission to use the OCaml runtime: this thread holds the domain lock.
///
/// Borrow it immutably (`&Runtime`) to read OCaml values (for instance
/// [`Root::get`](crate::Root::get), [`ValueCell::get`](crate::ValueCell::get)),
/// and mutably (`&mut Runtime`) to allocate or collect, which invalidates
/// every [`Value`](crate::Value) that borrows it.
///
/// A `Runtime` cannot be sent or shared with another thread, since the lock
/// it stands for belongs to this one.
pub struct Runtime {
    // A raw pointer makes the type neither Send nor Sync.
    _not_send_sync: PhantomData<*mut ()>,
}

/// Whether `init` was called in this process.
static STARTED: AtomicBool = AtomicBool::new(false);

/// Reacquires the domain lock when dropped, also during unwinding.
struct Reacquire;

impl Drop for Reacquire {
    fn drop(&mut self) {
        // SAFETY: paired with the caml_enter_blocking_section of release_lock.
        unsafe { ffi::caml_leave_blocking_section() }
    }
}

impl Runtime {
    fn token() -> Runtime {
        Runtime {
            _not_send_sync: PhantomData,
        }
    }

    /// Starts the OCaml runtime (`caml_startup`) on this thread, which then
    /// holds the domain lock, and sets up boxroot. For programs whose `main`
    /// is in Rust; the OCaml program must be linked in (see the
    /// `link-ocaml-runtime-and-dummy-program` feature of `ocaml-boxroot-sys`).
    ///
    /// Fails if this thread already holds a domain lock (OCaml was started
    /// otherwise, e.g. Rust code called from OCaml: use
    /// [`Runtime::assume_locked`] there), and after the first call in the
    /// process.
    pub fn init() -> Result<Runtime, Error> {
        if Runtime::thread_holds_lock() {
            return Err(Error::other(
                "Runtime::init: this thread already holds an OCaml domain lock".to_string(),
            ));
        }
        if STARTED.swap(true, Ordering::SeqCst) {
            return Err(Error::other(
                "Runtime::init: the OCaml runtime was already started".to_string(),
            ));
        }
        let argv: [*const c_char; 2] = [c"ocaml".as_ptr(), std::ptr::null()];
        // SAFETY: first start in this process; argv is NULL-terminated and
        // outlives the call (OCaml copies what it keeps).
        unsafe { ffi::caml_startup(argv.as_ptr()) };
        // boxroot_setup checks that this thread holds the domain lock.
        if unsafe { sys::boxroot_setup() } {
            Ok(Runtime::token())
        } else {
            Err(Error::last("boxroot_setup"))
        }
    }

    /// Whether this thread holds a domain lock, asked of the C library
    /// (the test its own creation and modification make). Not by trying
    /// `boxroot_create`: the debug build (feature `debug` of
    /// `ocaml-boxroot-sys`) aborts on a creation without the lock.
    fn thread_holds_lock() -> bool {
        // SAFETY: callable from any thread, before OCaml starts too.
        unsafe { sys::ext::thread_holds_domain_lock() }
    }

    /// Runs `f` with the capability of a thread that already holds the
    /// domain lock, typically a function called from OCaml (an `external`).
    /// Values borrowed from the capability cannot escape `f`.
    ///
    /// # Safety
    /// This thread holds the domain lock during the whole call, and no other
    /// `Runtime` is in use on this thread meanwhile (do not nest calls).
    pub unsafe fn assume_locked<T>(f: impl FnOnce(&mut Runtime) -> T) -> T {
        let mut gc = Runtime::token();
        f(&mut gc)
    }

    /// Releases the domain lock while `f` runs (a blocking section, for
    /// long computations or blocking calls), then reacquires it, also if `f`
    /// panics. Other threads and domains may run OCaml code and collections
    /// meanwhile: this takes `&mut self` since non-rooted values do not
    /// survive it. [`Root`](crate::Root)s do, and may be dropped inside `f`.
    pub fn release_lock<T>(&mut self, f: impl FnOnce() -> T) -> T {
        // SAFETY: this thread holds the lock (invariant of Runtime).
        unsafe { ffi::caml_enter_blocking_section() };
        let _reacquire = Reacquire;
        f()
    }

    /// Forces a minor collection: every young value moves to the major heap.
    pub fn minor_collection(&mut self) {
        // SAFETY: the lock is held; &mut self invalidates non-rooted values.
        unsafe { ffi::caml_minor_collection() }
    }

    /// Forces a full major collection (`Gc.full_major`).
    pub fn full_major(&mut self) {
        // SAFETY: as for minor_collection; the primitive takes unit.
        unsafe { ffi::caml_gc_full_major(crate::value::UNIT_RAW) };
    }

    /// Forces a compaction (`Gc.compact`), which moves major-heap values.
    pub fn compact(&mut self) {
        // SAFETY: as for minor_collection; the primitive takes unit.
        unsafe { ffi::caml_gc_compaction(crate::value::UNIT_RAW) };
    }

    /// The C library's statistics (roots alive, pools, scanning work), or
    /// `None` if boxroot is not running. Takes the runtime mutably: on
    /// OCaml 5 the read stops every domain, and may first let a pending
    /// collection run, which moves values.
    pub fn stats(&mut self) -> Option<crate::Stats> {
        // Guards the FFI: the C library writes a whole `struct boxroot_stats`.
        assert_eq!(
            unsafe { sys::boxroot_stats_size },
            core::mem::size_of::<crate::Stats>(),
            "Stats does not mirror struct boxroot_stats"
        );
        let mut stats = crate::Stats::default();
        // SAFETY: the lock is held, as boxroot_get_stats requires.
        if unsafe { sys::boxroot_get_stats(&mut stats) } {
            Some(stats)
        } else {
            None
        }
    }
}
