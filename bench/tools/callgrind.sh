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
#   PER_OP=1 bench/tools/callgrind.sh [BUILD_DIR] [impl...]
#
# prints instead the instructions per operation of each single operation
# of bench ops (loop included), alone (ops=NAME), for k = 1 and 10^5
# roots alive: the difference between runs of 2.2M and 1.1M timed and
# warm-up iterations, over 1.1M, so that the program's fixed costs cancel;
# then the same for the plain C loops of bench ops (k does not apply).
set -euo pipefail
build="${1:-$(cd "$(dirname "$0")/.." && pwd)/_build/ocaml-${OCAML_VERSION:-default}}/default/bench/build"
shift || true
impls="${*:-boxroot upstream}"
out=/tmp/boxroot-callgrind
mkdir -p "$out"
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 \
            | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'; }
if [ -n "${PER_OP:-}" ]; then
  for op in create_delete modify_old modify_young loop_create_delete loop_batches loop_modify; do
    case "$op" in loop_*) kinds="1" ;; *) kinds="1 100000" ;; esac
    for k in $kinds; do
      for impl in $impls; do
        exe="$build/$impl/ops.exe"
        [ -x "$exe" ] || continue
        a=$(count "$exe" ks=$k iters=1000000 ops=$op)
        b=$(count "$exe" ks=$k iters=2000000 ops=$op)
        case "$op" in loop_*) label="$op" ;; *) label="$op k=$k" ;; esac
        awk -v a="$a" -v b="$b" -v c="$label" -v i="$impl" \
          'BEGIN { printf "%-26s %-9s %8.2f\n", c, i, (b - a) / 1100000 }'
      done
    done
  done
  exit 0
fi
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
