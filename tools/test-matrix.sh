#!/usr/bin/env bash
# The C library's tests (`dune build @boxroot/test/runtest`) against each
# OCaml version that tools/toolchain.sh can build: 4.14.0, 4.14.1, 5.1.0,
# 5.3.0 (the npm registry's source packages), 5.4 and 5.5 (the newest 5.4.x
# and 5.5.x of Debian's ocaml-source). Each compiler is built on first use
# (~4-6 minutes each on an idle machine) and cached under
# ~/.cache/boxroot/ocaml-<version>; each version has its own build
# directory (_build-ocaml-<version>), so that reruns rebuild nothing.
# Prints one line per version and fails if any version fails.
# First, the version gate of boxroot/ocaml_compat.h, with a stand-in
# <caml/version.h> in front of OCaml 5.3's headers: 4.13 must stop the
# build with its #error, 5.6 must warn, 4.14, 5.3, 5.4 and 5.5 must do
# neither.
#
# Usage: tools/test-matrix.sh [VERSION...]
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(4.14.0 4.14.1 5.1.0 5.3.0 5.4 5.5)
results=()
failed=0

gate() { # $1 = major, $2 = minor: prints the gate's diagnostic, if any
  local dir
  dir="$(mktemp -d /tmp/boxroot-gate.XXXXXX)"
  mkdir "$dir/caml"
  printf '#define OCAML_VERSION_MAJOR %s\n#define OCAML_VERSION_MINOR %s\n#define OCAML_VERSION_PATCHLEVEL 0\n' \
    "$1" "$2" >"$dir/caml/version.h"
  echo '#include "ocaml_compat.h"' \
    | gcc -fsyntax-only -I "$dir" -I boxroot -I "$(ocamlopt -where)" -x c - 2>&1 \
    | grep -oE '(#error|#warning) "[^"]*"' | head -1
  rm -rf "$dir"
}
if ( unset OCAMLPATH; export OCAML_VERSION=5.3.0 && eval "$(tools/toolchain.sh)" \
     && gate 4 13 | grep -q '^#error "boxroot needs OCaml 4.14' \
     && gate 5 6 | grep -q '^#warning "boxroot is untested' \
     && [ -z "$(gate 4 14)" ] && [ -z "$(gate 5 3)" ] && [ -z "$(gate 5 4)" ] \
     && [ -z "$(gate 5 5)" ] ); then
  results+=("version gate (4.13: error, 5.6: warning, 4.14 to 5.5: silent): ok")
else
  results+=("version gate (4.13: error, 5.6: warning, 4.14 to 5.5: silent): FAILED"); failed=1
fi
for v in "${versions[@]}"; do
  echo "== test-matrix: OCaml $v"
  start=$(date +%s)
  # OCAMLPATH is reset: another version's META files on it would shadow
  # this one's libraries (threads).
  if ( unset OCAMLPATH; export OCAML_VERSION="$v" \
       && eval "$(tools/toolchain.sh)" \
       && case "$(ocamlopt -version)" in "$v"|"$v".*) ;; *) false ;; esac \
       && dune build --build-dir "_build-ocaml-$v" @boxroot/test/runtest --force ); then
    status=ok
  else
    status=FAILED; failed=1
  fi
  results+=("OCaml $v: $status ($(( $(date +%s) - start )) s)")
done
echo "== test-matrix results"
printf '  %s\n' "${results[@]}"
exit "$failed"
