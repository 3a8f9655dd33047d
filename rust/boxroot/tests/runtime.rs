//! The safe API with the OCaml runtime running: roots across collections,
//! across threads, and through panics, checked against the C library's
//! statistics. The runtime is started once, on the main thread, so this
//! test has its own `main` (harness = false); each case runs under
//! `catch_unwind` and the last line reads `runtime: N passed, N failed`.
use boxroot::{
    alloc_string, alloc_tuple, emptied, shared, val_long, ErrorKind, Root, Runtime, Value, Weak,
};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Barrier};
use std::thread;

extern "C" {
    // boxroot/testing.h: makes the C library's allocations fail (sites 1:
    // pools; after < 0: none).
    fn boxroot__testing_fail_allocations(
        sites: std::os::raw::c_uint,
        after: std::os::raw::c_long,
        persistent: std::os::raw::c_int,
    );
}

const MANY: usize = 20_000;
const MINOR_HEAP: &str = "s=4k";
/// Strings that fit in that minor heap (about 5 words each).
const YOUNG_BATCH: usize = 500;

fn text(i: usize) -> Vec<u8> {
    format!("value number {}", i).into_bytes()
}

fn alive(gc: &mut Runtime) -> i64 {
    gc.stats().expect("boxroot running").roots_alive
}

/// A young string per index, each rooted as soon as it is allocated.
fn rooted_strings(gc: &mut Runtime, n: usize) -> Vec<Root> {
    (0..n)
        .map(|i| {
            let s = shared!(gc, alloc_string(gc, &text(i)));
            Root::create(gc, s)
        })
        .collect()
}

fn check_strings(gc: &Runtime, roots: &[Root], first: usize) {
    for (k, r) in roots.iter().enumerate() {
        assert_eq!(
            r.get(gc).bytes().as_deref(),
            Some(&text(first + k)[..]),
            "root {}",
            first + k
        );
    }
}

fn values_survive_collections(gc: &mut Runtime) {
    let base = alive(gc);
    let roots = rooted_strings(gc, MANY);
    assert_eq!(alive(gc) - base, MANY as i64);
    // Minor collections happened while creating them (small minor heap).
    // A batch that fits in the minor heap, right after a collection, is
    // young: the next minor collection moves each string, and its root
    // follows it.
    gc.minor_collection();
    let batch = rooted_strings(gc, YOUNG_BATCH);
    let young: Vec<isize> = batch.iter().map(|r| r.get(gc).raw()).collect();
    gc.minor_collection();
    for (r, &before) in batch.iter().zip(&young) {
        assert_ne!(r.get(gc).raw(), before, "not moved by the minor GC");
    }
    check_strings(gc, &batch, 0);
    check_strings(gc, &roots, 0);
    gc.full_major();
    gc.compact();
    check_strings(gc, &roots, 0);
    drop((roots, batch));
    assert_eq!(alive(gc), base);
}

fn structures_survive_collections(gc: &mut Runtime) {
    // Tuples (i, string i) built from rooted young strings. With a small
    // minor heap, minor collections happen inside alloc_tuple, between its
    // allocation and its reading of the arguments: each pair is checked
    // at once, and again after a major collection.
    let before = gc.stats().unwrap().minor_scans;
    let pairs: Vec<Root> = (0..MANY)
        .map(|i| {
            let s = shared!(gc, alloc_string(gc, &text(i)));
            let s = Root::create(gc, s);
            let pair = shared!(gc, alloc_tuple(gc, &[&val_long(i as isize), &s]));
            assert_eq!(pair.field(1).bytes(), Some(text(i)), "pair {}", i);
            Root::create(gc, pair)
        })
        .collect();
    let minor_gcs = gc.stats().unwrap().minor_scans - before;
    assert!(minor_gcs >= 10, "only {} minor GCs", minor_gcs);
    gc.full_major();
    for (i, p) in pairs.iter().enumerate() {
        let pair = p.get(gc);
        assert_eq!(pair.size(), Some(2));
        assert_eq!(pair.field(0).as_long(), Some(i as isize));
        assert_eq!(pair.field(1).bytes(), Some(text(i)));
    }
}

fn modify_keeps_new_values(gc: &mut Runtime) {
    let base = alive(gc);
    let mut roots = rooted_strings(gc, 5000);
    gc.minor_collection(); // the roots' pools are now old
    for (i, r) in roots.iter_mut().enumerate() {
        let fresh = shared!(gc, alloc_string(gc, &text(10_000 + i)));
        r.modify(gc, fresh); // a young value into an old pool
    }
    gc.minor_collection();
    gc.full_major();
    check_strings(gc, &roots, 10_000);
    for r in roots.iter_mut() {
        r.modify(gc, val_long(7));
    }
    gc.full_major();
    assert!(roots.iter().all(|r| r.get(gc).as_long() == Some(7)));
    drop(roots);
    assert_eq!(alive(gc), base);
}

fn value_refs_of_roots_survive_allocation(gc: &mut Runtime) {
    let s = shared!(gc, alloc_string(gc, b"kept by reference"));
    let root = Root::create(gc, s);
    let cell = root.get_ref(); // no lifetime tie to gc
    let before = cell.get(gc).raw();
    gc.minor_collection();
    let _garbage = alloc_string(gc, b"allocate after the collection");
    let after = cell.get(gc);
    assert_ne!(after.raw(), before);
    assert_eq!(after.bytes().as_deref(), Some(&b"kept by reference"[..]));
}

fn roots_dropped_on_other_threads(gc: &mut Runtime) {
    const THREADS: usize = 4;
    let base = gc.stats().unwrap();
    let mut roots = rooted_strings(gc, MANY);
    let kept = roots.split_off(MANY / 2);
    // Half the roots go to other threads, which drop them while this one
    // collects (scanning concurrently with their remote deletions).
    let start = Arc::new(Barrier::new(THREADS + 1));
    let mut handles = Vec::new();
    let chunk = roots.len() / THREADS;
    for _ in 0..THREADS {
        let mine: Vec<Root> = roots.drain(..chunk).collect();
        let start = Arc::clone(&start);
        handles.push(thread::spawn(move || {
            start.wait();
            for r in mine {
                drop(r);
            }
        }));
    }
    start.wait();
    for _ in 0..20 {
        gc.minor_collection();
        let _ = alloc_string(gc, b"some garbage");
    }
    for h in handles {
        h.join().unwrap();
    }
    let after = gc.stats().unwrap();
    assert_eq!(
        after.deleted_purely_remote - base.deleted_purely_remote,
        (MANY / 2) as i64
    );
    assert_eq!(after.roots_alive - base.roots_alive, (MANY / 2) as i64);
    gc.full_major();
    check_strings(gc, &kept, MANY / 2);
    drop(kept);
    assert_eq!(alive(gc), base.roots_alive);
}

fn shared_roots_across_threads(gc: &mut Runtime) {
    let base = alive(gc);
    let s = shared!(gc, alloc_string(gc, b"shared"));
    let root = Arc::new(Root::create(gc, s));
    let address = root.get_ref().as_ptr() as usize;
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let mine = Arc::clone(&root);
            thread::spawn(move || {
                // Sync: references to the cell are usable anywhere (reading
                // it needs a Runtime, which this thread does not have).
                assert_eq!(mine.get_ref().as_ptr() as usize, address);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    gc.full_major();
    assert_eq!(root.get(gc).bytes().as_deref(), Some(&b"shared"[..]));
    // The last owner deletes it, here on another thread.
    thread::spawn(move || drop(root)).join().unwrap();
    assert_eq!(alive(gc), base);
}

fn drop_while_lock_released(gc: &mut Runtime) {
    let base = gc.stats().unwrap();
    let roots = rooted_strings(gc, 1000);
    gc.release_lock(move || drop(roots));
    let after = gc.stats().unwrap();
    assert_eq!(
        after.deleted_purely_remote - base.deleted_purely_remote,
        1000
    );
    assert_eq!(after.roots_alive, base.roots_alive);
}

struct Holder {
    _first: Root,
    _rest: Vec<Root>,
    _boxed: Box<Root>,
}

fn panics_leak_no_root(gc: &mut Runtime) {
    let base = alive(gc);
    let outside = Root::create(gc, val_long(1));
    let result = catch_unwind(AssertUnwindSafe(|| {
        let s = shared!(gc, alloc_string(gc, b"in a panic"));
        let first = Root::create(gc, s);
        let rest = rooted_strings(gc, 3000);
        let boxed = Box::new(Root::create(gc, val_long(3)));
        let _holder = Holder {
            _first: first,
            _rest: rest,
            _boxed: boxed,
        };
        assert_eq!(alive(gc) - base, 3003);
        panic!("unwinding through 3002 roots");
    }));
    assert!(result.is_err());
    assert_eq!(alive(gc) - base, 1, "roots leaked by the panic");
    // A panic inside release_lock: the lock is taken back during unwinding,
    // so creating a root (which needs it) works afterwards.
    let roots = rooted_strings(gc, 100);
    let result = catch_unwind(AssertUnwindSafe(|| {
        gc.release_lock(move || {
            let _roots = roots;
            panic!("unwinding without the lock");
        })
    }));
    assert!(result.is_err());
    let r = Root::try_create(gc, val_long(2)).expect("lock held again");
    drop((r, outside));
    assert_eq!(alive(gc), base);
}

fn allocation_failure_is_an_error(gc: &mut Runtime) {
    let base = alive(gc);
    let mut roots = Vec::new();
    unsafe { boxroot__testing_fail_allocations(1, 0, 1) };
    let failure = loop {
        match Root::try_create(gc, val_long(roots.len() as isize)) {
            Ok(r) => roots.push(r),
            Err(e) => break e,
        }
        assert!(roots.len() < 10_000_000, "pool allocation never failed");
    };
    assert_eq!(failure.kind(), ErrorKind::OutOfMemory);
    assert!(
        failure.message().contains("out of memory"),
        "{}",
        failure.message()
    );
    // The panicking variant carries the same explanation.
    let panic = catch_unwind(AssertUnwindSafe(|| Root::create(gc, val_long(0))))
        .expect_err("create should have panicked");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("out of memory"),
        "panic message: {}",
        message
    );
    unsafe { boxroot__testing_fail_allocations(1, -1, 1) };
    // Nothing was lost on the way.
    gc.full_major();
    for (i, r) in roots.iter().enumerate() {
        assert_eq!(r.get(gc).as_long(), Some(i as isize));
    }
    roots.push(Root::create(gc, val_long(0)));
    drop(roots);
    assert_eq!(alive(gc), base);
}

fn field_access_is_checked(gc: &mut Runtime) {
    let s = shared!(gc, alloc_string(gc, b"not a block of values"));
    let s = Root::create(gc, s);
    let pair = shared!(gc, alloc_tuple(gc, &[&val_long(1), &s]));
    assert_eq!(pair.field(1), s.get(gc));
    assert_eq!(pair.field_ref(0).get(gc), val_long(1));
    let out_of_bounds = catch_unwind(|| pair.field(2));
    assert!(out_of_bounds.is_err());
    let string = s.get(gc);
    assert!(catch_unwind(|| string.field(0)).is_err());
    assert!(catch_unwind(|| val_long(3).field(0)).is_err());
    assert_eq!(Value::unit().as_long(), Some(0));
}

type Case = (&'static str, fn(&mut Runtime));

fn weak_alive(gc: &mut Runtime) -> i64 {
    gc.stats().expect("boxroot running").weak_roots_alive
}

/// Weak roots: values held only weakly go after full major cycles, values
/// also held by a root stay and upgrade to roots; immediates stay; weak
/// roots dropped on other threads, full or empty, are counted gone.
fn weak_roots_follow_the_gc(gc: &mut Runtime) {
    let base = weak_alive(gc);
    let roots = rooted_strings(gc, 1000);
    let held: Vec<Weak> = roots.iter().map(|r| r.downgrade(gc)).collect();
    let lone: Vec<Weak> = (0..1000)
        .map(|i| {
            let s = shared!(gc, alloc_string(gc, &text(i)));
            Weak::create(gc, s)
        })
        .collect();
    let mut imm = Weak::create(gc, val_long(42));
    assert_eq!(weak_alive(gc) - base, 2001);
    // Young values are promoted (not cleared) by the minor collection.
    gc.minor_collection();
    gc.full_major();
    gc.full_major();
    for (k, w) in held.iter().enumerate() {
        assert_eq!(w.get(gc).and_then(|v| v.bytes()).as_deref(), Some(&text(k)[..]));
        let up = w.upgrade(gc).expect("held value upgrades");
        assert_eq!(up.get(gc).raw(), roots[k].get(gc).raw());
    }
    for w in &lone {
        assert!(w.is_empty(gc), "a value held only weakly survived two full cycles");
        assert!(w.upgrade(gc).is_none());
    }
    assert_eq!(imm.get(gc), Some(val_long(42)));
    imm.modify(gc, val_long(43));
    assert_eq!(imm.get(gc), Some(val_long(43)));
    gc.compact();
    check_strings(gc, &roots, 0);
    for (k, w) in held.iter().enumerate() {
        assert_eq!(w.get(gc).and_then(|v| v.bytes()).as_deref(), Some(&text(k)[..]));
    }
    // Dropped on another thread, without the lock.
    thread::spawn(move || drop((held, lone))).join().unwrap();
    drop((roots, imm));
    assert_eq!(weak_alive(gc), base);
}

/// Notifying weak roots: a table of entries held weakly learns which died
/// from `emptied`, each once, with its word; entries kept, dropped before
/// the notice, or refilled before it are not reported.
fn notifying_weak_roots_report_once(gc: &mut Runtime) {
    let base = weak_alive(gc);
    let n = 1000;
    let roots = rooted_strings(gc, n / 2);
    // Entry i holds text(i): kept by roots[i / 2] when i is even.
    let mut table: Vec<Option<Weak>> = (0..n)
        .map(|i| {
            let w = if i % 2 == 0 {
                Weak::create_notifying(gc, roots[i / 2].get(gc), i)
            } else {
                let s = shared!(gc, alloc_string(gc, &text(i)));
                Weak::create_notifying(gc, s, i)
            };
            assert_eq!(w.notifying_word(), i);
            Some(w)
        })
        .collect();
    assert_eq!(emptied(gc).count(), 0, "nothing emptied yet");
    gc.minor_collection();
    gc.full_major();
    gc.full_major();
    // Entries 1 mod 4 dropped, 3 mod 8 refilled, before the notices.
    for i in (1..n).step_by(4) {
        table[i] = None;
    }
    for i in (3..n).step_by(8) {
        let w = table[i].as_mut().unwrap();
        w.modify(gc, roots[0].get(gc));
    }
    let mut seen = vec![false; n];
    for (id, i) in emptied(gc) {
        assert!(!seen[i], "entry {} reported twice", i);
        seen[i] = true;
        let w = table[i].take().expect("a reported entry is in the table");
        assert_eq!(w.id(), id);
        assert!(w.is_empty(gc));
    }
    for i in 0..n {
        let expect = i % 4 == 3 && i % 8 != 3;
        assert_eq!(seen[i], expect, "entry {}: reported {}", i, seen[i]);
    }
    // The kept ones die with their roots, and report then.
    drop(roots);
    gc.full_major();
    gc.full_major();
    let late: Vec<usize> = emptied(gc).map(|(_, i)| i).collect();
    for i in &late {
        table[*i] = None;
    }
    let mut expect: Vec<usize> = (0..n).filter(|i| i % 2 == 0 || i % 8 == 3).collect();
    let mut got = late.clone();
    got.sort();
    expect.sort();
    assert_eq!(got, expect);
    assert_eq!(emptied(gc).count(), 0);
    drop(table);
    assert_eq!(weak_alive(gc), base);
}

fn main() {
    // A small minor heap (32 KiB), for frequent minor collections.
    std::env::set_var("OCAMLRUNPARAM", MINOR_HEAP);
    let mut gc = Runtime::init().expect("OCaml runtime");
    // A second capability, on this thread or another, is refused.
    let again = Runtime::init()
        .err()
        .expect("second Runtime::init on this thread");
    assert!(again.message().contains("already holds"), "{}", again);
    let elsewhere = thread::spawn(|| Runtime::init().err().map(|e| e.to_string()))
        .join()
        .unwrap()
        .expect("Runtime::init on another thread");
    assert!(elsewhere.contains("already started"), "{}", elsewhere);
    let cases: &[Case] = &[
        ("values_survive_collections", values_survive_collections),
        (
            "structures_survive_collections",
            structures_survive_collections,
        ),
        ("modify_keeps_new_values", modify_keeps_new_values),
        (
            "value_refs_of_roots_survive_allocation",
            value_refs_of_roots_survive_allocation,
        ),
        (
            "roots_dropped_on_other_threads",
            roots_dropped_on_other_threads,
        ),
        ("shared_roots_across_threads", shared_roots_across_threads),
        ("drop_while_lock_released", drop_while_lock_released),
        ("panics_leak_no_root", panics_leak_no_root),
        (
            "allocation_failure_is_an_error",
            allocation_failure_is_an_error,
        ),
        ("field_access_is_checked", field_access_is_checked),
        ("weak_roots_follow_the_gc", weak_roots_follow_the_gc),
        (
            "notifying_weak_roots_report_once",
            notifying_weak_roots_report_once,
        ),
    ];
    // Expected panics (inside the cases) would clutter the output.
    std::panic::set_hook(Box::new(|_| {}));
    let (mut passed, mut failed) = (0, 0);
    for (name, case) in cases {
        match catch_unwind(AssertUnwindSafe(|| case(&mut gc))) {
            Ok(()) => {
                passed += 1;
                println!("ok   {}", name);
            }
            Err(e) => {
                failed += 1;
                let why = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                println!("FAIL {}: {}", name, why);
            }
        }
    }
    println!("runtime: {} passed, {} failed", passed, failed);
    if failed > 0 {
        std::process::exit(1);
    }
}
