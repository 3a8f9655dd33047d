#!/usr/bin/env bash
# Copies upstream ocaml-boxroot 0.4's C sources into the directory given
# as $1 (default: the current one), fetching them with cargo on first use
# from the crate ocaml-boxroot-sys 0.4.0, which vendors them.
# Upstream is a competitor we measure against: its files are compiled at
# bench time only and never committed.
set -euo pipefail
dest="${1:-.}"
version=0.4.0
files="boxroot.c boxroot.h ocaml_hooks.c ocaml_hooks.h platform.c platform.h"

find_vendor() {
  local cargo_home="${CARGO_HOME:-$HOME/.cargo}" d
  for d in "$cargo_home"/registry/src/*/ocaml-boxroot-sys-$version/vendor/boxroot; do
    [ -f "$d/boxroot.c" ] && { echo "$d"; return 0; }
  done
  return 1
}

if ! vendor="$(find_vendor)"; then
  command -v cargo >/dev/null || { echo "fetch.sh: cargo is needed to fetch upstream boxroot" >&2; exit 1; }
  proj="${BOXROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/boxroot}/upstream-fetch"
  mkdir -p "$proj"
  cat > "$proj/Cargo.toml" <<TOML
[package]
name = "fetch-upstream-boxroot"
version = "0.0.0"
edition = "2021"
publish = false

[lib]
path = "lib.rs"

[dependencies]
ocaml-boxroot-sys = "=$version"
TOML
  : > "$proj/lib.rs"
  echo "fetch.sh: fetching ocaml-boxroot-sys $version with cargo" >&2
  (cd "$proj" && cargo fetch -q)
  vendor="$(find_vendor)"
fi
for f in $files; do cp "$vendor/$f" "$dest/$f"; chmod u+w "$dest/$f"; done
