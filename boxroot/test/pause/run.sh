#!/usr/bin/env bash
# The root-marking pause and Gc.full_major (pause.ml) for each holder,
# values and number of roots, one line each, interleaving the builds
# given (e.g. this branch and a baseline built the same way), REPS times:
#
#   boxroot/test/pause/run.sh [REPS] EXE...
#
# e.g. after `dune build --profile release ./boxroot/test/pause/pause.exe`:
#   boxroot/test/pause/run.sh 3 _build/default/boxroot/test/pause/pause.exe
# NS (default "1000 10000 100000 1000000 5000000 10000000") and CASES
# (default "boxroot:distinct array:distinct boxroot:shared array:shared")
# select the runs.
set -euo pipefail
reps="${1:-3}"; shift
ns="${NS:-1000 10000 100000 1000000 5000000 10000000}"
cases="${CASES:-boxroot:distinct array:distinct boxroot:shared array:shared}"
for n in $ns; do
  for c in $cases; do
    for r in $(seq "$reps"); do
      for exe in "$@"; do
        echo "exe=$exe rep=$r $("$exe" "${c%%:*}" "${c##*:}" "$n")"
      done
    done
  done
done
