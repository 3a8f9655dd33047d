//! Build script: compiles the boxroot C library and, for tests, links the
//! OCaml runtime.
//!
//! OCaml is found through `OCAML_WHERE_PATH` (the directory printed by
//! `ocamlopt -where`, holding `caml/*.h` and `libasmrun.a`), or else by
//! running `$OCAMLOPT -where` (`OCAMLOPT` defaults to `ocamlopt`).
//!
//! Feature `bundle-boxroot` (default): compiles the C library into
//! `libocaml-boxroot.a`. Its sources are the crate's `boxroot/` directory:
//! in the repository a symbolic link to the library's one copy
//! (`../../boxroot`), in the packaged crate (`cargo package`) a plain
//! directory holding copies of its files. The same rule as dune's
//! (boxroot/dune): every C file of that directory, except `debug.c` (only
//! with feature `debug`) and the OCaml module's stubs (`ocaml_stubs.c`).
//! The same flags as dune's: OCaml's C flags (`ocamlopt -config-var
//! ocamlc_cflags` and `ocamlc_cppflags`, dune's `:standard`) then
//! `boxroot/c_flags.sexp`, warnings on.
//!
//! Feature `debug`: the debug build instead (dune's `boxroot.debug`):
//! every operation checked, a misuse aborts with a message (boxroot/debug.c).
//! Feature `testing`: the test build (dune's `boxroot_testing`).
//!
//! Feature `link-ocaml-runtime-and-dummy-program`: a Rust program that
//! starts OCaml itself (`caml_startup`) needs, besides the runtime
//! (`libasmrun.a`), the code of an OCaml program: `caml_startup` runs the
//! program's module initialisers, whose table (`caml_program`,
//! `caml_globals`, the frametables...) the OCaml linker generates. What
//! works with OCaml 5.3 (and 4.14):
//!   ocamlopt -output-obj -I +unix -I +threads unix.cmxa threads.cmxa \
//!            -o dummy_program.o dummy_main.ml
//! then linking `dummy_program.o`, `libthreadsnat.a`, `libunixnat.a`,
//! `libasmrun.a` and `ocamlopt -config-var native_c_libraries` (-lm
//! -lpthread), in that order. The program links the threads library
//! and references `Thread` so that systhreads are initialised at startup:
//! `caml_c_thread_register` (used by ocaml-interop's `with_domain_lock`)
//! then works from any thread. `-output-obj` leaves the C libraries out,
//! hence the explicit list; `-output-complete-obj` would include them, but
//! then the runtime could not be replaced (e.g. by `libasmrund.a`).
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The C library's directory, relative to this crate.
const BOXROOT_C_DIR: &str = "boxroot";
/// Its flags, on top of OCaml's.
const C_FLAGS_FILE: &str = "c_flags.sexp";
/// C files of that directory that are not part of the C library.
const NOT_LIBRARY: &[&str] = &["ocaml_stubs.c"];
/// C files only in the debug build.
const DEBUG_ONLY: &[&str] = &["debug.c"];

fn ocamlopt() -> String {
    env::var("OCAMLOPT").unwrap_or_else(|_| "ocamlopt".to_string())
}

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("could not run {:?}: {}", cmd, e));
    if !out.status.success() {
        panic!(
            "{:?} failed: {}\n{}",
            cmd,
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Found once: `cell_offset` and the bundling both need it.
fn ocaml_where() -> PathBuf {
    static WHERE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    WHERE
        .get_or_init(|| {
            println!("cargo:rerun-if-env-changed=OCAML_WHERE_PATH");
            println!("cargo:rerun-if-env-changed=OCAMLOPT");
            println!("cargo:rerun-if-env-changed=OPAM_SWITCH_PREFIX");
            match env::var("OCAML_WHERE_PATH") {
                Ok(path) if !path.is_empty() => PathBuf::from(path),
                _ => PathBuf::from(run(Command::new(ocamlopt()).arg("-where"))),
            }
        })
        .clone()
}

/// The flags of `c_flags.sexp`: one list, `;` comments, one atom per flag.
fn read_c_flags(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {}", path.display(), e));
    let text: String = text
        .lines()
        .map(|line| line.split(';').next().unwrap())
        .collect::<Vec<_>>()
        .join(" ");
    let text = text.trim();
    let inner = text
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{}: expected one list (...)", path.display()));
    inner.split_whitespace().map(str::to_string).collect()
}

/// OCaml's C flags, which dune puts first (its `:standard`) for C stubs.
fn ocaml_c_flags() -> Vec<String> {
    let mut flags = Vec::new();
    for var in ["ocamlc_cflags", "ocamlc_cppflags"] {
        match Command::new(ocamlopt()).args(["-config-var", var]).output() {
            Ok(out) if out.status.success() => flags.extend(
                String::from_utf8_lossy(&out.stdout)
                    .split_whitespace()
                    .map(str::to_string),
            ),
            _ => println!(
                "cargo:warning=could not run `{} -config-var {}`: the C library is built without OCaml's C flags",
                ocamlopt(),
                var
            ),
        }
    }
    flags
}

fn bundle_boxroot(ocaml_where: &Path, debug: bool) {
    let dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join(BOXROOT_C_DIR);
    let dir = dir
        .canonicalize()
        .unwrap_or_else(|e| panic!("boxroot C sources not found at {}: {}", dir.display(), e));
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut build = cc::Build::new();
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    sources.sort();
    for path in sources {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if name.ends_with(".h") {
            println!("cargo:rerun-if-changed={}", path.display());
        }
        let in_build = !NOT_LIBRARY.contains(&name.as_str())
            && (debug || !DEBUG_ONLY.contains(&name.as_str()));
        if name.ends_with(".c") && in_build {
            println!("cargo:rerun-if-changed={}", path.display());
            build.file(&path);
        }
    }
    let flags_file = dir.join(C_FLAGS_FILE);
    println!("cargo:rerun-if-changed={}", flags_file.display());
    build.include(ocaml_where).include(&dir).warnings(true);
    // cc's own optimisation level comes first: the flags below override it.
    for flag in ocaml_c_flags().into_iter().chain(read_c_flags(&flags_file)) {
        build.flag(&flag);
    }
    if debug {
        build.flag("-g").define("BOXROOT_DEBUG", None);
    }
    // Feature `testing`: the test build of the library (invariant checks
    // and test-only entry points, boxroot/testing.h).
    if env::var_os("CARGO_FEATURE_TESTING").is_some() {
        build.define("BOXROOT_TESTING", None);
    }
    build.compile("ocaml-boxroot");
    println!("cargo:rustc-link-lib=pthread");
    if debug {
        // dladdr, for the leak report (in libc itself from glibc 2.34).
        println!("cargo:rustc-link-lib=dl");
    }
    // For dependents' build scripts: DEP_OCAML_BOXROOT_INCLUDE.
    println!("cargo:include={}", dir.display());
}

fn link_runtime_and_dummy_program(ocaml_where: &Path) {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let ml = out.join("dummy_main.ml");
    // Referencing Thread links and initialises systhreads.
    std::fs::write(&ml, "let () = ignore (Thread.self ())\n").unwrap();
    let obj = out.join("dummy_program.o");
    run(Command::new(ocamlopt())
        .current_dir(&out)
        .args(["-output-obj", "-I", "+unix", "-I", "+threads"])
        .args(["unix.cmxa", "threads.cmxa", "-o"])
        .arg(&obj)
        .arg(&ml));
    let ar = env::var("AR").unwrap_or_else(|_| "ar".to_string());
    let lib = out.join("libboxroot_dummy_program.a");
    let _ = std::fs::remove_file(&lib);
    run(Command::new(ar).arg("rcs").arg(&lib).arg(&obj));
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-search=native={}", ocaml_where.display());
    println!("cargo:rustc-link-lib=static=boxroot_dummy_program");
    println!("cargo:rustc-link-lib=static=threadsnat");
    // OCaml 5's native unix stubs; OCaml 4.14 has one library, libunix.a.
    let unix = if ocaml_where.join("libunixnat.a").exists() { "unixnat" } else { "unix" };
    println!("cargo:rustc-link-lib=static={}", unix);
    println!("cargo:rustc-link-lib=static=asmrun");
    let c_libs = run(Command::new(ocamlopt()).args(["-config-var", "native_c_libraries"]));
    for flag in c_libs.split_whitespace() {
        if let Some(name) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib={}", name);
        }
    }
}

/// Writes `$OUT_DIR/stats.rs`, the `Stats` struct, from the counter list
/// of `boxroot_stats.h` (`BOXROOT_STATS_FIELDS`: lines `X(name, "doc")`),
/// the one definition of the statistics.
fn generate_stats() {
    let header = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap())
        .join(BOXROOT_C_DIR)
        .join("boxroot_stats.h");
    println!("cargo:rerun-if-changed={}", header.display());
    let text = std::fs::read_to_string(&header)
        .unwrap_or_else(|e| panic!("cannot read {}: {}", header.display(), e));
    let mut out = String::from(
        "/// Statistics of the C library (`struct boxroot_stats` of\n\
         /// `boxroot_stats.h`, from which this struct is generated), read by\n\
         /// [`boxroot_get_stats`].\n///\n\
         /// Not part of crates.io's `ocaml-boxroot-sys` 0.4: an extension of this\n\
         /// implementation, only available when linked with this repository's C\n\
         /// library.\n\
         #[repr(C)]\n#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]\n\
         pub struct Stats {\n",
    );
    let mut count = 0;
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("X(") {
            let (name, rest) = rest.split_once(',').expect("X(name, \"doc\")");
            let doc = rest.split('"').nth(1).expect("X(name, \"doc\")");
            out.push_str(&format!(
                "    /// {}.\n    pub {}: core::ffi::c_long,\n",
                doc,
                name.trim()
            ));
            count += 1;
        }
    }
    assert!(count > 0, "no statistics field found in {}", header.display());
    out.push_str("}\n");
    let dest = PathBuf::from(env::var("OUT_DIR").unwrap()).join("stats.rs");
    std::fs::write(dest, out).unwrap();
}

/// Where a root's cell lies, which depends on the OCaml version (src/lib.rs,
/// `CELL_OFFSET`): cfg `boxroot_cell_offset_1` on OCaml 4, none on OCaml
/// 5. Read from the headers of the OCaml found as above, also without
/// `bundle-boxroot`: the C library linked some other way was built
/// against an OCaml too, and a mismatch fails to link. docs.rs, which has
/// no OCaml, documents the OCaml 5 build.
fn cell_offset() {
    println!("cargo:rustc-check-cfg=cfg(boxroot_cell_offset_1)");
    println!("cargo:rerun-if-env-changed=DOCS_RS");
    if env::var_os("DOCS_RS").is_some() {
        return;
    }
    let header = ocaml_where().join("caml").join("version.h");
    println!("cargo:rerun-if-changed={}", header.display());
    let text = std::fs::read_to_string(&header).unwrap_or_else(|e| {
        panic!(
            "cannot read {} ({}): ocaml-boxroot-sys needs the OCaml that the C library is built against (set OCAML_WHERE_PATH, or OCAMLOPT, or put ocamlopt on PATH)",
            header.display(),
            e
        )
    });
    let major: u32 = text
        .lines()
        .find_map(|line| line.strip_prefix("#define OCAML_VERSION_MAJOR "))
        .and_then(|rest| rest.trim().parse().ok())
        .unwrap_or_else(|| panic!("{}: no OCAML_VERSION_MAJOR", header.display()));
    if major < 5 {
        println!("cargo:rustc-cfg=boxroot_cell_offset_1");
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    generate_stats();
    cell_offset();
    let bundle = env::var_os("CARGO_FEATURE_BUNDLE_BOXROOT").is_some();
    let link_runtime = env::var_os("CARGO_FEATURE_LINK_OCAML_RUNTIME_AND_DUMMY_PROGRAM").is_some();
    if !bundle && !link_runtime {
        return;
    }
    // The one message a Windows build gets, as boxroot.h's #error says.
    if env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("windows") {
        panic!("boxroot does not support Windows (only Linux and macOS): see boxroot's README.md, Platforms");
    }
    let ocaml_where = ocaml_where();
    if bundle {
        bundle_boxroot(&ocaml_where, env::var_os("CARGO_FEATURE_DEBUG").is_some());
    }
    if link_runtime {
        link_runtime_and_dummy_program(&ocaml_where);
    }
}
