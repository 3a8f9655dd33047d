#!/usr/bin/env bash
# Zig's C and C++ compilers (clang, with the system headers and libraries
# of many targets: PyPI's package `ziglang`), installed on first use in a
# venv under $BOXROOT_CACHE, used to compile boxroot for systems that this
# machine is not: macOS on x86-64 and ARM64, Windows. Prints the directory
# of the wrappers it writes there, one per target (zig's names):
#   cc-TARGET, c++-TARGET   for TARGET in x86_64-macos aarch64-macos
#                           x86_64-windows-gnu
#   ar, ranlib              zig's own
# ZIGLANG_VERSION: the version of `ziglang` to install (the one tested).
set -euo pipefail
cache="${BOXROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/boxroot}"
version="${ZIGLANG_VERSION:-0.17.1}"
venv="$cache/zig-$version"
bin="$venv/wrappers"
log() { echo "zig: $*" >&2; }

if [ ! -x "$venv/bin/python3" ] || ! "$venv/bin/python3" -m ziglang version >/dev/null 2>&1; then
  log "installing ziglang $version from PyPI into $venv (first use only)"
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q "ziglang==$version" >&2
fi

mkdir -p "$bin"
zig="$venv/bin/python3 -m ziglang"
for target in x86_64-macos aarch64-macos x86_64-windows-gnu; do
  printf '#!/bin/sh\nexec %s cc -target %s "$@"\n' "$zig" "$target" >"$bin/cc-$target"
  printf '#!/bin/sh\nexec %s c++ -target %s "$@"\n' "$zig" "$target" >"$bin/c++-$target"
done
printf '#!/bin/sh\nexec %s ar "$@"\n' "$zig" >"$bin/ar"
printf '#!/bin/sh\nexec %s ranlib "$@"\n' "$zig" >"$bin/ranlib"
chmod +x "$bin"/*
echo "$bin"
