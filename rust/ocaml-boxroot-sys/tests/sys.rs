//! The raw bindings against the C library, with the OCaml runtime linked
//! (feature `link-ocaml-runtime-and-dummy-program`). One process, one
//! thread: the OCaml runtime is started once, on the main thread, so this
//! test has its own `main` (harness = false).
use ocaml_boxroot_sys::*;
use std::ffi::CStr;
use std::os::raw::c_char;

extern "C" {
    fn caml_startup(argv: *const *const c_char);
    fn caml_alloc_initialized_string(len: usize, contents: *const c_char) -> Value;
    fn caml_string_length(v: Value) -> usize;
    fn caml_minor_collection();
    fn caml_gc_full_major(unit: Value) -> Value;
    fn caml_enter_blocking_section();
    fn caml_leave_blocking_section();
}

const UNIT: Value = 1;

fn val_long(n: isize) -> Value {
    (n << 1) | 1
}

fn string_of(v: Value) -> Vec<u8> {
    unsafe { std::slice::from_raw_parts(v as *const u8, caml_string_length(v)).to_vec() }
}

fn error_string() -> String {
    unsafe { CStr::from_ptr(boxroot_error_string()) }
        .to_string_lossy()
        .into_owned()
}

fn stats() -> Stats {
    // A layout mismatch would let the C library write past `s`.
    assert_eq!(
        unsafe { boxroot_stats_size },
        std::mem::size_of::<Stats>(),
        "Stats does not mirror struct boxroot_stats"
    );
    let mut s = Stats::default();
    assert!(unsafe { boxroot_get_stats(&mut s) });
    s
}

struct Checks {
    passed: usize,
    failed: usize,
}

impl Checks {
    fn check(&mut self, what: &str, ok: bool) {
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
            eprintln!("FAILED: {}", what);
        }
    }
}

fn main() {
    let mut c = Checks {
        passed: 0,
        failed: 0,
    };
    unsafe {
        // Before the runtime starts no thread holds a lock: creation fails
        // cleanly (OCaml 4.14 once read a Caml_state not yet allocated).
        c.check(
            "no lock before the runtime starts",
            !ext::thread_holds_domain_lock(),
        );
        c.check(
            "create before the runtime starts fails",
            boxroot_create(val_long(1)).is_none() && error_string().contains("lock"),
        );

        let argv = [b"sys-test\0".as_ptr() as *const c_char, std::ptr::null()];
        caml_startup(argv.as_ptr());

        c.check("status before setup", boxroot_status() == Status::NotSetup);
        c.check("setup", boxroot_setup());
        c.check("status after setup", boxroot_status() == Status::Running);

        // Layout: Option<BoxRoot> is a nullable pointer.
        c.check(
            "Option<BoxRoot> is pointer-sized",
            std::mem::size_of::<Option<BoxRoot>>() == std::mem::size_of::<usize>(),
        );

        // create / get / get_ref / modify / delete on immediates.
        let mut r = boxroot_create(val_long(1)).expect("create");
        c.check("get", boxroot_get(r) == val_long(1));
        c.check("get_ref", *(*boxroot_get_ref(r)).get() == val_long(1));
        c.check("modify", boxroot_modify(&mut r, val_long(2)));
        c.check("get after modify", boxroot_get(r) == val_long(2));
        boxroot_delete(r);

        // A young string, rooted, survives a minor collection and moves.
        let text = b"a young string";
        let s = caml_alloc_initialized_string(text.len(), text.as_ptr() as *const c_char);
        let mut r = boxroot_create(s).expect("create string");
        caml_minor_collection();
        let moved = boxroot_get(r);
        c.check("promoted by the minor GC", moved != s);
        c.check("contents after minor GC", string_of(moved) == text);
        // An old root modified to hold a young value (the slow path).
        let text2 = b"another young string";
        let s2 = caml_alloc_initialized_string(text2.len(), text2.as_ptr() as *const c_char);
        c.check("modify to young", boxroot_modify(&mut r, s2));
        caml_minor_collection();
        caml_gc_full_major(UNIT);
        c.check(
            "contents after modify + GCs",
            string_of(boxroot_get(r)) == text2,
        );

        // Many roots, with collections in between.
        let n = 20_000;
        let mut roots = Vec::with_capacity(n);
        for i in 0..n {
            let t = format!("root {}", i);
            let v = caml_alloc_initialized_string(t.len(), t.as_ptr() as *const c_char);
            roots.push(boxroot_create(v).expect("create many"));
            if i % 5000 == 0 {
                caml_minor_collection();
            }
        }
        caml_gc_full_major(UNIT);
        let all_ok = roots
            .iter()
            .enumerate()
            .all(|(i, r)| string_of(boxroot_get(*r)) == format!("root {}", i).as_bytes());
        c.check("20000 roots survive collections", all_ok);
        c.check("stats count them", stats().roots_alive == n as i64 + 1);
        // Deleting without the lock (the purely remote path).
        let before = stats();
        caml_enter_blocking_section();
        for r in roots.drain(..n / 2) {
            boxroot_delete(r);
        }
        // Creating without the lock fails cleanly.
        let unlocked = boxroot_create(UNIT);
        let unlocked_error = error_string();
        caml_leave_blocking_section();
        c.check("create without the lock fails", unlocked.is_none());
        c.check(
            "... and says why",
            unlocked_error.contains("does not hold the OCaml domain lock"),
        );
        let after = stats();
        c.check(
            "unlocked deletions counted as purely remote",
            after.deleted_purely_remote - before.deleted_purely_remote == (n / 2) as i64,
        );
        for r in roots.drain(..) {
            boxroot_delete(r);
        }
        boxroot_delete(r);
        c.check("no root left", stats().roots_alive == 0);

        // Weak roots (module `ext`): a string held only weakly empties
        // after a full major cycle; one also held by a root stays, and is
        // upgraded to a root; immediates never empty.
        use ocaml_boxroot_sys::ext::*;
        c.check(
            "Option<BoxRootWeak> is pointer-sized",
            std::mem::size_of::<Option<BoxRootWeak>>() == std::mem::size_of::<usize>(),
        );
        let held = caml_alloc_initialized_string(4, b"held".as_ptr() as *const c_char);
        let strong = boxroot_create(held).expect("create");
        let w_held = boxroot_weak_of_boxroot(strong).expect("weak of boxroot");
        let lone = caml_alloc_initialized_string(4, b"lone".as_ptr() as *const c_char);
        let w_lone = boxroot_weak_create(lone).expect("weak create");
        let mut w_imm = boxroot_weak_create(val_long(7)).expect("weak create immediate");
        let mut out: Value = 0;
        c.check("weak get while alive", boxroot_weak_get(w_lone, &mut out) && out == lone);
        caml_gc_full_major(UNIT);
        caml_gc_full_major(UNIT);
        c.check("weak root of a dead value empties", !boxroot_weak_get(w_lone, &mut out));
        c.check(
            "weak root of a rooted value stays full",
            boxroot_weak_get(w_held, &mut out) && string_of(out) == b"held",
        );
        c.check("immediate stays", boxroot_weak_get(w_imm, &mut out) && out == val_long(7));
        let mut up: Option<BoxRoot> = None;
        c.check("upgrade a full weak root", boxroot_weak_upgrade(w_held, &mut up));
        c.check(
            "upgraded root holds the value",
            up.map_or(false, |r| string_of(boxroot_get(r)) == b"held"),
        );
        if let Some(r) = up {
            boxroot_delete(r);
        }
        c.check("upgrade an empty weak root", !boxroot_weak_upgrade(w_lone, &mut up));
        c.check("weak modify", boxroot_weak_modify(&mut w_imm, val_long(8)));
        c.check("weak get after modify", boxroot_weak_get(w_imm, &mut out) && out == val_long(8));
        c.check("weak roots counted", stats().weak_roots_alive == 3);
        boxroot_delete(strong);
        boxroot_weak_delete(w_held);
        boxroot_weak_delete(w_lone);
        boxroot_weak_delete(w_imm);
        c.check("no weak root left", stats().weak_roots_alive == 0);

        boxroot_teardown();
        c.check(
            "status after teardown",
            boxroot_status() == Status::ToreDown,
        );
        c.check(
            "create after teardown fails",
            boxroot_create(UNIT).is_none(),
        );
        c.check(
            "error string after teardown",
            error_string().contains("torn down"),
        );
    }
    println!("sys: {} passed, {} failed", c.passed, c.failed);
    if c.failed > 0 {
        std::process::exit(1);
    }
}
