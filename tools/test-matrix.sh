#!/usr/bin/env bash
# The C library's tests (`dune build @boxroot/test/runtest`) against each
# OCaml version that tools/toolchain.sh can build (the npm registry's
# source packages): 4.14.0, 4.14.1, 5.1.0, 5.3.0. Each compiler is built on
# first use (~4 minutes each on an idle machine) and cached under
# ~/.cache/boxroot/ocaml-<version>; each version has its own build
# directory (_build-ocaml-<version>), so that reruns rebuild nothing.
# Prints one line per version and fails if any version fails.
#
# Usage: tools/test-matrix.sh [VERSION...]
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(4.14.0 4.14.1 5.1.0 5.3.0)
results=()
failed=0
for v in "${versions[@]}"; do
  echo "== test-matrix: OCaml $v"
  start=$(date +%s)
  # OCAMLPATH is reset: another version's META files on it would shadow
  # this one's libraries (threads).
  if ( unset OCAMLPATH; export OCAML_VERSION="$v" \
       && eval "$(tools/toolchain.sh)" \
       && [ "$(ocamlopt -version)" = "$v" ] \
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
