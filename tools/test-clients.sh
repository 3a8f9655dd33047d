#!/usr/bin/env bash
# Real clients of ocaml-boxroot-sys run their own tests on this repository's
# -sys crate (rust/ocaml-boxroot-sys) in place of the crates.io one:
#   - ocaml-interop 0.12.0: `cargo test` (its unit tests and doctests);
#   - ocaml (ocaml-rs) 1.3.0: `cargo run --example rust --features=link`
#     (what its Makefile's test-rust runs) and `cargo test`.
# Their published crates are fetched from crates.io at test time (a
# throw-away Cargo project under /tmp depends on them; cargo fetches them
# into ~/.cargo/registry), copied under /tmp, and made workspace roots with
# `[patch.crates-io] ocaml-boxroot-sys = { path = <this repository> }`.
# Their own Cargo.lock is kept, but for ocaml-boxroot-sys, and the patch
# must be in use (checked with `cargo tree`). Nothing of theirs is kept,
# but build products in rust/target/clients.
#
# What the published crates ship, hence what runs: ocaml-interop's
# testing/rust-caller crate (Rust calling OCaml) is not in its .crate, and
# its OCaml-side suites (testing/ocaml-caller, docs/examples) are shipped
# without the Rust libraries they link and need opam packages (alcotest,
# base); ocaml-rs's OCaml-side suite (test/) is not in its .crate. Those
# are not run.
#
# Usage (OCaml toolchain on PATH): tools/test-clients.sh
# Leaves nothing behind unless BOXROOT_KEEP_TMP=1.
set -euo pipefail
. "$(dirname "$0")/test-lib.sh" clients
ours="$repo/rust/ocaml-boxroot-sys"
# Kept between runs (the clients' dependencies are built once).
target="${CARGO_TARGET_DIR:-$repo/rust/target}/clients"

# The clients, exact versions: crate name and version.
clients=("ocaml-interop 0.12.0" "ocaml 1.3.0")

say "fetching the clients from crates.io"
mkdir -p "$work/fetch/src"
touch "$work/fetch/src/lib.rs"
{
  printf '[package]\nname = "fetch-clients"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\n'
  for c in "${clients[@]}"; do set -- $c; printf '%s = "=%s"\n' "$1" "$2"; done
  printf '\n[workspace]\n'
} >"$work/fetch/Cargo.toml"
( cd "$work/fetch" && cargo fetch --quiet )
manifests="$(cd "$work/fetch" && cargo metadata --format-version 1 | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    print(p["name"], p["version"], p["manifest_path"])')"

prepare() { # $1 = crate, $2 = version: prints the directory of its copy
  local src
  src="$(echo "$manifests" | awk -v n="$1" -v v="$2" '$1 == n && $2 == v { print $3 }')"
  [ -n "$src" ] || fail "$1 $2 was not fetched"
  local dir="$work/$1-$2"
  cp -r "$(dirname "$src")" "$dir"
  chmod -R u+w "$dir"
  cat >>"$dir/Cargo.toml" <<EOF

[patch.crates-io]
ocaml-boxroot-sys = { path = "$ours" }

[workspace]
EOF
  ( cd "$dir" && cargo update --quiet -p ocaml-boxroot-sys )
  local used
  used="$(cd "$dir" && cargo tree --quiet -i ocaml-boxroot-sys --depth 0 --edges normal)"
  case "$used" in
    "ocaml-boxroot-sys v0.4.1 ($ours)"*) ;;
    *) fail "$1: the patch is not in use: $used" ;;
  esac
  echo "$dir"
}

# Runs a cargo command in a client's copy; prints its test summaries.
run() { # $1 = directory, $2... = cargo arguments
  local dir="$1"; shift
  say "$(basename "$dir"): cargo $*"
  ( cd "$dir" && CARGO_TARGET_DIR="$target" cargo "$@" --locked ) >"$work/out" 2>&1 \
    || { tail -40 "$work/out" >&2; fail "$(basename "$dir"): cargo $*"; }
  grep -E '^test result:|^     Running|^   Doc-tests' "$work/out" | sed 's/^ */  /' || true
}

dir="$(prepare ocaml-interop 0.12.0)"
run "$dir" test

dir="$(prepare ocaml 1.3.0)"
run "$dir" run --example rust --features=link
run "$dir" test
say "ok"
