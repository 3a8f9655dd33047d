//! What the types reject (compile-fail/, each with the compiler's expected
//! error in a .stderr file) and what they accept (compile-pass/, which are
//! also run, with the OCaml runtime). See the Boxroot paper, §4.8.
//!
//! To regenerate the expected errors after a compiler upgrade:
//! `TRYBUILD=overwrite cargo test --test compile`, then review the diff.
#[test]
fn borrow_discipline() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile-fail/*.rs");
    t.pass("tests/compile-pass/*.rs");
}
