#!/usr/bin/env bash
# Builds bench/plain's program once per implementation the way a user
# without dune builds a program that uses the library: its stubs and the
# library's C files compiled together by `ocamlopt -ccopt -O2` (so with
# OCaml's own C flags, `ocamlopt -config-var ocamlc_cflags`, and nothing
# of the library's build), the library's fast paths inlined from its
# header. The other view of the same loops is bench/src/ops.c, built by
# dune's release profile (make bench-build).
#
#   bench/plain/build.sh OUT_DIR [impl...]
#
# writes OUT_DIR/<impl>/plain.exe for each implementation (default:
# boxroot upstream), with the ocamlopt on PATH (eval "$(tools/toolchain.sh)"
# first). boxroot: every C file of boxroot/ but debug.c (the debug
# build's) and ocaml_stubs.c (the OCaml module's stubs; boxroot/dune).
# upstream: ocaml-boxroot 0.4's C files, fetched by bench/upstream/fetch.sh
# into OUT_DIR/upstream/src (never committed).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$(dirname "$here")")"
out="${1:?usage: build.sh OUT_DIR [impl...]}"
shift
impls="${*:-boxroot upstream}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
for impl in $impls; do
  dir="$out/$impl"
  rm -rf "$dir"
  mkdir -p "$dir"
  case "$impl" in
    boxroot)
      src="$root/boxroot"
      lib=()
      for f in "$src"/*.c; do
        case "$(basename "$f")" in debug.c|ocaml_stubs.c) ;; *) lib+=("$f") ;; esac
      done ;;
    upstream)
      src="$dir/src"
      mkdir -p "$src"
      bash "$root/bench/upstream/fetch.sh" "$src"
      lib=("$src/boxroot.c" "$src/ocaml_hooks.c" "$src/platform.c") ;;
    *) echo "build.sh: unknown implementation $impl" >&2; exit 2 ;;
  esac
  cp "$here/plain.ml" "$here/plain_stubs.c" "$dir/"
  (cd "$dir" && ocamlopt -ccopt -O2 -ccopt "-I$src" "${lib[@]}" plain_stubs.c plain.ml \
                 -o plain.exe)
done
