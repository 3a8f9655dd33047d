#!/bin/bash
# The window explorer at length (part of make test-soak, OCaml 5): the
# library's test build over SOAK_SEEDS seeds, which must lose nothing;
# then every broken build under boxroot/test/broken/ that builds the
# explorer, each over the same seeds until one run catches it. A broken
# build the explorer never caught is reported, not a failure: each has a
# targeted test in make test that always catches it.
set -u
seeds=${SOAK_SEEDS:-$(seq 1 12)}
build=${BUILD_DIR:-_build}
dune build --build-dir "$build" ./boxroot/test/window/test_explore.exe \
  $(ls -d boxroot/test/broken/*/ | while read -r d; do
      grep -q test_explore "$d/dune" && echo "./${d}test_explore.exe"; done) || exit 1
echo "== soak: window explorer, test build, seeds" $seeds
BOXROOT_EXPLORE_SEEDS="$seeds" ./$build/default/boxroot/test/window/test_explore.exe \
  > /tmp/soak-explore.$$ 2>&1
rc=$?
grep -E "^seed [0-9]+: [0-9]+ rounds|LOST|FAIL" /tmp/soak-explore.$$
[ $rc -eq 0 ] || { echo "test build: exit code $rc (full log: /tmp/soak-explore.$$)"; exit 1; }
summary=""
for d in boxroot/test/broken/*/; do
  grep -q test_explore "$d/dune" || continue
  b=$(basename "$d"); caught=no; start=$(date +%s)
  for s in $seeds; do
    echo "== soak: window explorer, broken build $b, seed $s"
    # Expecting a loss, the explorer stops a run at its first and passes.
    if BOXROOT_HAZARD_EXPECT_LOSS=1 BOXROOT_EXPLORE_SEEDS=$s \
         ./$build/default/${d}test_explore.exe > /tmp/soak-explore.$$ 2>&1
    then caught="seed $s: $(grep -m1 -E 'LOST|abort|Assert|exit code' /tmp/soak-explore.$$ | cut -c1-100)"; break; fi
  done
  summary+=$(printf '\n%-20s %5ss  caught: %s' "$b" $(( $(date +%s) - start )) "$caught")
done
rm -f /tmp/soak-explore.$$
echo "== soak: window explorer against the broken builds (seconds, first catch)$summary"
