//! ocaml-interop 0.12's `BoxRoot` on our C library. The OCaml runtime is
//! started once, on the main thread, hence harness = false.
//!
//! That the roots really are ours is checked through `boxroot_get_stats`,
//! which only our C library defines (with crates.io's ocaml-boxroot-sys this
//! test would not link): its counts must follow the roots ocaml-interop
//! creates and drops.
use ocaml_boxroot_sys::{boxroot_get_stats, boxroot_status, Stats, Status};
use ocaml_interop::{BoxRoot, OCaml, OCamlInt, OCamlList, OCamlRuntime, ToOCaml};

extern "C" {
    fn caml_minor_collection();
    fn caml_gc_full_major(unit: isize) -> isize;
    fn caml_gc_compaction(unit: isize) -> isize;
}

const UNIT: isize = 1;
const ROOTS: usize = 10_000;

fn stats() -> Stats {
    let mut s = Stats::default();
    assert!(
        unsafe { boxroot_get_stats(&mut s) },
        "boxroot is not running"
    );
    s
}

fn collect_all() {
    unsafe {
        caml_minor_collection();
        caml_gc_full_major(UNIT);
        caml_gc_compaction(UNIT);
    }
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

fn expected_list(i: usize) -> Vec<i64> {
    (0..(i % 7) as i64).map(|k| k * i as i64).collect()
}

/// The contents of string root `i` once every third root was modified.
fn expected_string(i: usize) -> String {
    if i.is_multiple_of(3) {
        format!("kept {}", i)
    } else {
        format!("string {}", i)
    }
}

fn main() {
    let mut c = Checks {
        passed: 0,
        failed: 0,
    };
    let guard = OCamlRuntime::init().expect("OCaml runtime");
    c.check(
        "running after init",
        unsafe { boxroot_status() } == Status::Running,
    );

    OCamlRuntime::with_domain_lock(|cr| {
        let base = stats();

        // Young strings rooted through ocaml-interop, then collected.
        let mut strings: Vec<BoxRoot<String>> = Vec::new();
        let mut young_addresses = Vec::new();
        for i in 0..ROOTS {
            let s: OCaml<String> = format!("string {}", i).to_ocaml(cr);
            young_addresses.push(unsafe { s.raw() });
            strings.push(BoxRoot::new(s));
        }
        let lists: Vec<BoxRoot<OCamlList<OCamlInt>>> = (0..ROOTS)
            .map(|i| expected_list(i).to_ocaml(cr).root())
            .collect();
        c.check(
            "our library counts ocaml-interop's roots",
            stats().roots_alive - base.roots_alive == 2 * ROOTS as i64,
        );

        unsafe { caml_minor_collection() };
        let moved = strings
            .iter()
            .zip(&young_addresses)
            .all(|(r, &young)| unsafe { r.get(cr).raw() } != young);
        c.check("minor GC promoted every rooted string", moved);
        let strings_ok = strings
            .iter()
            .enumerate()
            .all(|(i, r)| r.get(cr).as_str() == format!("string {}", i));
        c.check("strings intact after minor GC", strings_ok);

        collect_all();
        let strings_ok = strings
            .iter()
            .enumerate()
            .all(|(i, r)| r.get(cr).to_rust::<String>() == format!("string {}", i));
        c.check("strings intact after major GC + compaction", strings_ok);
        let lists_ok = lists
            .iter()
            .enumerate()
            .all(|(i, r)| r.get(cr).to_rust::<Vec<i64>>() == expected_list(i));
        c.check("lists intact after major GC + compaction", lists_ok);

        // `keep` (boxroot_modify) on old roots with young values.
        for (i, r) in strings.iter_mut().enumerate().step_by(3) {
            let fresh = format!("kept {}", i).to_ocaml(cr);
            let _ = r.keep(fresh);
        }
        unsafe { caml_minor_collection() };
        collect_all();
        let kept_ok = strings
            .iter()
            .enumerate()
            .all(|(i, r)| r.get(cr).as_str() == expected_string(i));
        c.check("modified roots hold their new values after GCs", kept_ok);

        // Dropping roots with the lock held, and without (releasing_runtime).
        let before = stats();
        drop(lists);
        let without_lock: Vec<BoxRoot<String>> = strings.drain(..ROOTS / 2).collect();
        cr.releasing_runtime(move || drop(without_lock));
        let after = stats();
        c.check(
            "drops without the lock are purely remote",
            after.deleted_purely_remote - before.deleted_purely_remote == (ROOTS / 2) as i64,
        );
        collect_all();
        let rest_ok = strings.iter().enumerate().all(|(k, r)| {
            let i = k + ROOTS / 2;
            r.get(cr).as_str() == expected_string(i)
        });
        c.check("remaining roots intact after remote drops + GCs", rest_ok);
        drop(strings);
        c.check(
            "every root deleted",
            stats().roots_alive == base.roots_alive,
        );
    });

    drop(guard); // boxroot_teardown + caml_shutdown
    c.check(
        "torn down with the runtime",
        unsafe { boxroot_status() } == Status::ToreDown,
    );
    println!("interop: {} passed, {} failed", c.passed, c.failed);
    if c.failed > 0 {
        std::process::exit(1);
    }
}
