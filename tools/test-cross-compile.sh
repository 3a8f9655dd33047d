#!/usr/bin/env bash
# boxroot compiled for systems that this machine is not, with zig's C and
# C++ compilers (clang, with each system's headers and libraries:
# tools/zig.sh).
#
#   tools/test-cross-compile.sh macos
#     For x86_64-macos and aarch64-macos: every file of the library, in
#     the release build and in the debug build (-DBOXROOT_DEBUG, with
#     debug.c), as dune and the Rust crate's build script compile them
#     (OCaml's C flags for that system, then boxroot/c_flags.sexp), and
#     the C++ wrapper's test stubs (cpp/test); against OCaml's runtime
#     headers configured for that system (tools/toolchain.sh,
#     OCAML_TARGET=<target>). Fails on any error or warning (-Werror).
#     Then links each build into a shared library as OCaml links C stubs
#     on macOS (Makefile.config's MKDLL: the runtime's symbols are found
#     when the program loads it).
#   tools/test-cross-compile.sh windows
#     For x86_64-windows-gnu (mingw-w64): every file of the library that
#     fails, and a C file that includes boxroot.h (a user's stubs), must
#     fail first with boxroot.h's #error, which names the platform (GCC
#     and clang go on after it; the Rust crate's build script stops with
#     the same message before compiling anything).
set -euo pipefail
cd "$(dirname "$0")/.."
zig="$(tools/zig.sh)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
library=(boxroot/*.c)
c_flags=($(sed 's/;.*//' boxroot/c_flags.sexp | tr -d '()'))

case "${1:-}" in
macos)
  for target in x86_64-macos aarch64-macos; do
    eval "$(OCAML_TARGET=$target tools/toolchain.sh)"
    where="$BOXROOT_CROSS_PREFIX/lib/ocaml"
    config() { sed -n "s/^$1=//p" "$where/Makefile.config"; }
    ocaml_flags=($(config OCAMLC_CFLAGS) $(config OCAMLC_CPPFLAGS))
    for build in release debug; do
      out="$work/$target-$build"; mkdir -p "$out"
      defines=(); files=()
      for f in "${library[@]}"; do
        [ "$build" = debug ] || [ "$(basename "$f")" != debug.c ] && files+=("$f")
      done
      [ "$build" = release ] || defines=(-DBOXROOT_DEBUG)
      printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -I{} sh -c \
        '"$0" "$@" -c {} -o "'"$out"'/$(basename {} .c).o"' "$zig/cc-$target" \
        "${ocaml_flags[@]}" "${c_flags[@]}" -Werror "${defines[@]}" -I "$where" -I boxroot
      echo "$target, $build build: ${#files[@]} files compiled, no warning"
      # Makefile.config's MKDLL: $(CC) -shared -undefined dynamic_lookup -Wl,-w
      "$zig/cc-$target" -shared -undefined dynamic_lookup -o "$out/dllboxroot_stubs.so" "$out"/*.o
      echo "$target, $build build: linked as OCaml links C stubs ($(stat -c %s "$out/dllboxroot_stubs.so") bytes)"
    done
    for stubs in stubs leaks_stubs; do
      defines=(); [ "$stubs" = stubs ] || defines=(-DBOXROOT_DEBUG)
      "$zig/c++-$target" -std=c++17 -O2 -Wall -Wextra -Werror "${defines[@]}" -I "$where" -I . -I cpp \
        -I boxroot -c "cpp/test/$stubs.cpp" -o "$work/$target-$stubs.o"
    done
    echo "$target: the C++ wrapper's test stubs compiled, no warning"
  done
  ;;
windows)
  target=x86_64-windows-gnu
  where="$(ocamlfind ocamlopt -where 2>/dev/null || ocamlopt -where)"
  message='boxroot does not support Windows'
  for f in "${library[@]}"; do
    if "$zig/cc-$target" -std=gnu11 -I "$where" -I boxroot -c "$f" -o "$work/x.o" 2>"$work/err"; then
      continue  # a file that includes nothing of boxroot's
    fi
    first="$(grep -m1 'error' "$work/err" || true)"
    case "$first" in
      *"$message"*) ;;
      *) echo "$f: the first error is not boxroot.h's: $first"; exit 1 ;;
    esac
  done
  printf '#include "boxroot.h"\nint main(void) { return 0; }\n' >"$work/user.c"
  if "$zig/cc-$target" -I "$where" -I boxroot -c "$work/user.c" -o "$work/user.o" 2>"$work/err"; then
    echo "a user's stubs compiled for $target"; exit 1
  fi
  case "$(grep -m1 'error' "$work/err")" in
    *"$message"*) ;;
    *) cat "$work/err"; echo "expected boxroot.h's #error first"; exit 1 ;;
  esac
  echo "$target: every file of the library, and a user's stubs, fail first with boxroot.h's #error:"
  grep -m1 'error:' "$work/err"
  ;;
*) echo "usage: tools/test-cross-compile.sh macos|windows" >&2; exit 2 ;;
esac
