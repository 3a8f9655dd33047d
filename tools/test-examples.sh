#!/usr/bin/env bash
# The README's quick starts, as a new user runs them. README.md shows the
# files of examples/ verbatim (tools/check-readme-examples.py checks it
# first); each example is then copied outside the repository and built
# against what a user gets:
#   - the OCaml library installed by `dune install --prefix` into a fresh
#     directory, found through OCAMLPATH as the README says;
#   - the Rust crates made by `cargo package`, unpacked into the project's
#     vendor/ directory as the README says;
# and its program's output must be the one the README shows.
# OCaml calling Rust must also link one copy of the C library: the Rust
# archive must define none of its symbols (the OCaml side's `boxroot`
# library provides them).
#
# Usage (OCaml toolchain, dune and cargo on PATH): tools/test-examples.sh
# Leaves nothing behind unless BOXROOT_KEEP_TMP=1.
set -euo pipefail
. "$(dirname "$0")/test-lib.sh" examples

python3 "$repo/tools/check-readme-examples.py" || fail "README.md does not show examples/ as they are"

say "dune install --prefix $work/prefix"
( cd "$repo" && dune build -p boxroot --build-dir "$work/build" @install \
  && dune install --root . --build-dir "$work/build" --prefix "$work/prefix" boxroot \
       2>"$work/install.log" ) || { cat "$work/install.log" >&2; fail "install"; }
export OCAMLPATH="$work/prefix/lib${OCAMLPATH:+:$OCAMLPATH}"

say "cargo package"
CARGO_TARGET_DIR="$work/target" cargo package --quiet --workspace --allow-dirty \
  --no-verify --manifest-path "$repo/rust/Cargo.toml"
mkdir "$work/vendor"
for crate in "$work"/target/package/*.crate; do
  tar xzf "$crate" -C "$work/vendor"
done

# $1 = example (a directory of examples/), $2 = its build command, $3 = its
# program, relative to the example's directory.
build_and_run() {
  local example="$1" build="$2" program="$3" dir="$work/$1" want out
  cp -r "$repo/examples/$example" "$dir"
  if grep -rq 'vendor/' "$dir"; then cp -r "$work/vendor" "$dir/vendor"; fi
  say "$example: $build"
  ( cd "$dir" && $build ) >"$dir.log" 2>&1 || { cat "$dir.log" >&2; fail "$example does not build"; }
  want="$(python3 "$repo/tools/check-readme-examples.py" --output "examples/$example")"
  out="$(cd "$dir" && "$program")" || fail "$example: $program failed: $out"
  echo "$out" | sed 's/^/  /'
  [ "$out" = "$want" ] || fail "$example: printed other than the README shows: $want"
}

build_and_run c "dune build ./main.exe" ./_build/default/main.exe
build_and_run c-weak-table "dune build ./main.exe" ./_build/default/main.exe
build_and_run cpp "dune build ./main.exe" ./_build/default/main.exe
build_and_run finalizers "dune build ./main.exe" ./_build/default/main.exe
build_and_run rust "cargo build --quiet" ./target/debug/hello-boxroot
build_and_run ocaml-calls-rust "dune build ./main.exe" ./_build/default/main.exe
archive="$work/ocaml-calls-rust/_build/default/libregistry.a"
if nm --defined-only "$archive" 2>/dev/null | grep -qE ' T boxroot_(create|setup)$'; then
  fail "ocaml-calls-rust: the Rust archive carries a second copy of the C library"
fi
say "ok"
