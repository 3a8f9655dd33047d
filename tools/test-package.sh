#!/usr/bin/env bash
# The Rust crates as a user gets them: `cargo package` for ocaml-boxroot-sys
# and the safe `boxroot` crate, the two .crate files unpacked into a fresh
# directory under /tmp, and a small program there, outside the repository,
# that builds against the unpacked crates alone and runs:
#   - creates 10000 roots of strings through the safe crate, compacts the
#     heap (which moves them), reads each back, and drops them all; then
#     the same through the raw -sys API (create, get, modify, delete);
#   - both again with the -sys crate's feature `debug` (the checked C
#     library): a Rust `main` that starts OCaml through `Runtime::init`,
#     which must not trip the debug build's checks before OCaml runs (it
#     asks whether the thread holds a domain lock); and deleting a root
#     twice must abort with the debug build's message.
# The safe crate names its dependency by registry version (^0.4.1); the
# program's workspace points it at the unpacked -sys crate with
# `[patch.crates-io]`, as a user of a private copy would.
# The C sources of the packaged -sys crate must be the crate's own: the
# build script's `include` metadata must point inside the unpacked crate.
# Last, the -sys crate's own tests run in the unpacked crate.
#
# Usage (OCaml toolchain on PATH): tools/test-package.sh
# Leaves nothing behind unless BOXROOT_KEEP_TMP=1.
set -euo pipefail
. "$(dirname "$0")/test-lib.sh" package

say "cargo package (into $work/target)"
# --allow-dirty: test the working tree as it is, committed or not.
# --no-verify: the build below, outside the repository, is the verification.
CARGO_TARGET_DIR="$work/target" cargo package --quiet --workspace --allow-dirty \
  --no-verify --manifest-path "$repo/rust/Cargo.toml"
mkdir "$work/crates"
for crate in "$work"/target/package/*.crate; do
  tar xzf "$crate" -C "$work/crates"
done
sys="$work/crates/ocaml-boxroot-sys-0.4.1"
safe="$work/crates/boxroot-0.1.0"
[ -d "$sys" ] && [ -d "$safe" ] || fail "unexpected packages: $(ls "$work/crates")"
[ -z "$(find "$work/crates" -type l)" ] || fail "the packages hold symbolic links"
for f in boxroot.h c_flags.sexp extern.c; do
  [ -f "$sys/boxroot/$f" ] || fail "ocaml-boxroot-sys lacks boxroot/$f"
done
[ -f "$sys/LICENSE" ] && [ -f "$safe/LICENSE" ] || fail "a package lacks its LICENSE"

mkdir -p "$work/user/src"
cat >"$work/user/Cargo.toml" <<EOF
[package]
name = "boxroot-package-user"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
boxroot = { path = "$safe" }
ocaml-boxroot-sys = { version = "0.4.1", features = ["link-ocaml-runtime-and-dummy-program"] }

[features]
debug = ["ocaml-boxroot-sys/debug"]

[patch.crates-io]
ocaml-boxroot-sys = { path = "$sys" }

[workspace]
EOF
cat >"$work/user/src/main.rs" <<'EOF'
use boxroot::{alloc_string, shared, Root, Runtime};
use ocaml_boxroot_sys as sys;
use std::ffi::{c_char, CStr, CString};

// The OCaml runtime's C API, for the raw part.
extern "C" {
    fn caml_startup(argv: *const *const c_char);
    fn caml_copy_string(s: *const c_char) -> isize;
    fn caml_string_length(v: isize) -> usize;
    fn caml_gc_compaction(unit: isize) -> isize;
}
const UNIT: isize = 1;

unsafe fn string_of(v: isize) -> Vec<u8> {
    std::slice::from_raw_parts(v as *const u8, caml_string_length(v)).to_vec()
}

/// Through the safe crate: roots of strings, moved by a compaction, read
/// back, dropped.
fn safe(n: usize) {
    let mut runtime = Runtime::init().expect("Runtime::init");
    let gc = &mut runtime;
    let roots: Vec<Root> = (0..n)
        .map(|i| {
            let s = shared!(gc, alloc_string(gc, i.to_string().as_bytes()));
            Root::create(gc, s)
        })
        .collect();
    gc.compact();
    for (i, r) in roots.iter().enumerate() {
        assert_eq!(r.get(gc).bytes().unwrap(), i.to_string().into_bytes());
    }
    drop(roots);
}

/// Through the raw -sys API, OCaml started by hand.
unsafe fn start_raw() {
    let argv: [*const c_char; 2] = [c"ocaml".as_ptr(), std::ptr::null()];
    caml_startup(argv.as_ptr());
    assert!(sys::boxroot_setup(), "boxroot_setup");
}

unsafe fn raw(n: usize) {
    let mut roots: Vec<sys::BoxRoot> = (0..n)
        .map(|i| {
            let s = CString::new(i.to_string()).unwrap();
            sys::boxroot_create(caml_copy_string(s.as_ptr())).expect("boxroot_create")
        })
        .collect();
    caml_gc_compaction(UNIT);
    for (i, r) in roots.iter_mut().enumerate() {
        assert_eq!(string_of(sys::boxroot_get(*r)), i.to_string().into_bytes());
        let s = CString::new(format!("m{}", i)).unwrap();
        assert!(sys::boxroot_modify(r, caml_copy_string(s.as_ptr())), "boxroot_modify");
    }
    caml_gc_compaction(UNIT);
    for (i, r) in roots.iter().enumerate() {
        assert_eq!(string_of(sys::boxroot_get(*r)), format!("m{}", i).into_bytes());
        sys::boxroot_delete(*r);
    }
    let e = CStr::from_ptr(sys::boxroot_error_string());
    assert!(!e.to_bytes().is_empty());
}

fn main() {
    let n = 10_000;
    match std::env::args().nth(1).as_deref() {
        Some("safe") => safe(n),
        Some("raw") => unsafe {
            start_raw();
            raw(n)
        },
        Some("delete-twice") => unsafe {
            start_raw();
            let r = sys::boxroot_create(caml_copy_string(c"once".as_ptr())).unwrap();
            sys::boxroot_delete(r);
            sys::boxroot_delete(r);
            println!("second delete returned");
            return;
        },
        _ => panic!("usage: safe | raw | delete-twice"),
    }
    println!("ok: {} roots created, read after compaction and deleted", n);
}
EOF

build_and_run() { # $1 = label (release or debug), $2... = the program's modes
  local label="$1"; shift
  local features=""
  [ "$label" = debug ] && features="--features debug"
  say "build and run ($label)"
  ( cd "$work/user" && CARGO_TARGET_DIR="$work/user/target-$label" \
      cargo build --quiet $features )
  local exe="$work/user/target-$label/debug/boxroot-package-user"
  local include
  include="$(grep -h '^cargo:include=' "$work/user/target-$label"/debug/build/ocaml-boxroot-sys-*/output)"
  [ "$include" = "cargo:include=$sys/boxroot" ] \
    || fail "$label: the C library was not built from the packaged crate ($include)"
  local mode
  for mode in "$@"; do
    "$exe" "$mode" | grep -q '^ok:' || fail "$label: $mode: the program failed"
    echo "  $label: $mode: ok"
  done
  if [ "$label" = debug ]; then
    local out status=0
    out="$("$exe" delete-twice 2>&1)" || status=$?
    echo "  $label: deleting a root twice: exit status $status: $(echo "$out" | grep 'boxroot debug' | head -1)"
    [ "$status" -ne 0 ] && echo "$out" | grep -q '^boxroot debug: .*delete' \
      || fail "debug: a double delete was not reported"
  fi
}
build_and_run release safe raw
build_and_run debug safe raw

# The -sys crate's own tests, from the unpacked crate alone.
say "cargo test in the unpacked ocaml-boxroot-sys"
( cd "$sys" && CARGO_TARGET_DIR="$work/target-sys" \
    cargo test --quiet --features link-ocaml-runtime-and-dummy-program ) >"$work/sys-tests" 2>&1 \
  || { tail -30 "$work/sys-tests" >&2; fail "the unpacked crate's tests failed"; }
grep -E '^sys: ' "$work/sys-tests" | sed 's/^/  /' || fail "no test summary"
say "ok"
