//! The leak report with feature `debug`: roots made by `Root::new` and
//! `Weak::new` are reported at their caller's `file:line`.
//!
//! The test runs itself as a child process (`leaks child`) with
//! `BOXROOT_DEBUG_LEAKS=1`: the child leaks 1000 roots from one line and
//! 3 weak roots from another, creates and drops 10 roots at a third, and
//! exits; the report that the C library prints at exit must name the
//! first two lines with their counts, and never the third.
use boxroot::{val_long, Root, Runtime, Weak};
use std::process::Command;

const LEAKED_LINE: u32 = line!() + 3;
fn leak_a_thousand(gc: &Runtime) {
    for i in 0..1000 {
        std::mem::forget(Root::new(gc, val_long(i)));
    }
}

const WEAK_LINE: u32 = line!() + 3;
fn leak_three_weak(gc: &Runtime) {
    for i in 0..3 {
        std::mem::forget(Weak::new(gc, val_long(i)));
    }
}

const DROPPED_LINE: u32 = line!() + 3;
fn create_and_drop_ten(gc: &Runtime) {
    for i in 0..10 {
        drop(Root::new(gc, val_long(i)));
    }
}

fn child() {
    let gc = Runtime::init().expect("OCaml runtime");
    leak_a_thousand(&gc);
    create_and_drop_ten(&gc);
    leak_three_weak(&gc);
    std::mem::forget(gc);
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("child") {
        return child();
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .arg("child")
        .env("BOXROOT_DEBUG_LEAKS", "1")
        .output()
        .expect("run the child");
    let report = String::from_utf8_lossy(&out.stderr);
    print!("{}", report);
    let file = file!();
    let expected = [
        "boxroot: 1000 roots alive, created at 1 site (largest group first):".to_string(),
        format!("      1000  {}:{}", file, LEAKED_LINE),
        "boxroot: 3 weak roots alive, created at 1 site (largest group first):".to_string(),
        format!("         3  {}:{}", file, WEAK_LINE),
    ];
    let lines: Vec<&str> = report.lines().collect();
    let mut failed = 0;
    if !out.status.success() {
        println!("FAIL: the child failed: {}", out.status);
        failed += 1;
    }
    for e in &expected {
        if !lines.contains(&e.as_str()) {
            println!("FAIL: expected the line {:?}", e);
            failed += 1;
        }
    }
    let dropped = format!("{}:{}", file, DROPPED_LINE);
    if report.contains(&dropped) {
        println!("FAIL: the report names {}, whose roots were dropped", dropped);
        failed += 1;
    }
    println!("leaks: {} passed, {} failed", expected.len() + 2 - failed, failed);
    if failed > 0 {
        std::process::exit(1);
    }
}
