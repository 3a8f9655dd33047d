#!/usr/bin/env bash
# Instruction counts (valgrind --tool=callgrind; repeatable, unlike times on
# a shared machine) of small versions of the benchmarks, for boxroot and
# upstream side by side. Used to compare library changes before/after:
#
#   bench/tools/callgrind.sh [BUILD_DIR] [impl...]
#
# BUILD_DIR defaults to bench/_build/ocaml-${OCAML_VERSION:-default} (what
# `make bench-build` builds for that OCaml; run that first). Prints "benchmark impl instructions"; profiles are kept in
# /tmp/boxroot-callgrind/ for callgrind_annotate.
#
#   PER_OP=1 bench/tools/callgrind.sh
#
# prints instead the instructions per operation of each single operation
# of bench ops and of the plain C loops (bench ops' and bench/plain's),
# boxroot against upstream, on OCaml 5.5, 5.3 and 4.14 side by side
# (OCAML_VERSIONS="5.5 5.3" for some; each built first by
# `OCAML_VERSION=<v> make bench-build`), and writes the table to
# bench/results/per-op/results.md: bench/tools/per_op.py says how. Its
# second table counts only the sections that make bench times; the counts
# above are of whole programs, start-up and reports included (boxroot's
# statistics, which bench programs read after their timed section, take
# about a million instructions there).
set -euo pipefail
if [ -n "${PER_OP:-}" ]; then
  exec python3 "$(dirname "$0")/per_op.py" "$@"
fi
build="${1:-$(cd "$(dirname "$0")/.." && pwd)/_build/ocaml-${OCAML_VERSION:-default}}/default/bench/build"
shift || true
impls="${*:-boxroot upstream}"
out=/tmp/boxroot-callgrind
mkdir -p "$out"
cases=(
  "perm_count n=8"
  "synthetic n=4"
  "globroots steps=100000"
  "local_roots variant=caller depths=1 calls=200000"
  "local_roots variant=caller depths=1000 calls=200000"
  "local_roots variant=callee depths=1 calls=200000"
  "local_roots variant=callee depths=1000 calls=200000"
  "ops ks=1,100000 iters=200000"
  "latency n=0 minors=2000 majors=2"
)
for impl in $impls; do
  for c in "${cases[@]}"; do
    set -- $c
    prog=$1; shift
    exe="$build/$impl/$prog.exe"
    [ -x "$exe" ] || continue
    name="$prog-$(echo "$*" | tr ' =,' '_.-')-$impl"
    ir=$(valgrind --tool=callgrind --callgrind-out-file="$out/$name.out" "$exe" "$@" 2>&1 \
         | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    printf "%-60s %-9s %12s\n" "$prog $*" "$impl" "$ir"
  done
done
