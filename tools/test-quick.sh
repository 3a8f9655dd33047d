#!/usr/bin/env bash
# The C library's test suites (those of `make test-c`) at smaller sizes,
# for the builds that run them a second time: compiled by clang
# (make test-clang) and for ARM64, run under QEMU (make test-aarch64).
# Every test program of boxroot/test runs, with the sizes below, except
# the window explorer's longer seeds and the deliberately broken builds
# (make test-c runs them), of which two run here, to show that the tests
# can fail on this build: the build without deletion barrier must lose
# values in the hazard test, and the build that gives back single pools
# must be caught by the page-size check.
#
#   tools/test-quick.sh [--core] [--no-children] BUILD_ROOT [RUNNER...]
#   tools/test-quick.sh [--core] [--no-children] --list
#
# BUILD_ROOT: the dune context directory that holds the programs, built
# beforehand (`tools/test-quick.sh --list` prints their paths below it),
# e.g. _build-clang/default or _build-aarch64/default.aarch64. RUNNER: a
# command that runs each program, e.g. an emulator. Prints each test's
# time and a closing line; exits 1 if any failed.
set -uo pipefail

# path below BUILD_ROOT | tags | environment (VAR=value ...)
# Tags: core, the programs of --core; children, programs that start
# children of their own (skipped by --no-children: an emulator started
# by hand runs the program, not the children it execs).
tests='
boxroot/test/test_model.exe|core|BOXROOT_TEST_OPS=50000
boxroot/test/test_failures.exe|core|
boxroot/test/test_stats.exe||
boxroot/test/test_locks.exe|core|
boxroot/test/test_churn.exe||BOXROOT_CHURN_DOMAINS=200
boxroot/test/test_stress.exe|core|BOXROOT_STRESS_SECONDS=2
boxroot/test/test_hazard.exe|core|BOXROOT_HAZARD_N=5000 BOXROOT_HAZARD_BALLAST=100000
boxroot/test/test_stats_race.exe||BOXROOT_STATS_RACE_SECONDS=1
boxroot/test/test_marking_rules.exe|core|
boxroot/test/test_marking_rules.exe||BOXROOT_RULES=orphans
boxroot/test/test_marking_rules.exe||BOXROOT_RULES=adopt_compaction
boxroot/test/weak/test_weak_orphans.exe||
boxroot/test/weak/test_weak_model.exe|core|BOXROOT_WEAK_MODEL_STEPS=5000
boxroot/test/weak/test_weak_marking.exe|core|
boxroot/test/weak/test_weak_window.exe|core|
boxroot/test/weak/test_weak_domains.exe|core|BOXROOT_WEAK_DOMAINS_ROUNDS=5
boxroot/test/window/test_window.exe|core|BOXROOT_WINDOW_N=5000
boxroot/test/window/test_teardown.exe|children|
boxroot/test/window/test_stale_marker.exe|children|
boxroot/test/window/test_hook_chain.exe|core|
boxroot/test/window/test_explore.exe|children|BOXROOT_EXPLORE_SEEDS=1 BOXROOT_EXPLORE_ROUNDS=3
boxroot/test/hazard_domains/test_hazard_domains.exe||BOXROOT_HAZARD_N=5000 BOXROOT_HAZARD_BALLAST=100000
boxroot/test/late_deletion/test_late_deletion.exe||
boxroot/test/stats_domains/test_stats_domains.exe||
boxroot/test/many_pools/test_many_pools.exe|children|BOXROOT_MANY_POOLS_SMALL=2000 BOXROOT_MANY_POOLS_LARGE=20000 BOXROOT_MANY_POOLS_GROWTH=1000
boxroot/test/early/test_locks_early.exe||
boxroot/test/page_size/test_page_size.exe||
boxroot/test/page_size/page64/test_page_size.exe|core|
boxroot/test/debug/test_debug.exe|children|
boxroot/test/debug/test_leaks.exe|children|
boxroot/test/debug/test_model.exe||BOXROOT_TEST_OPS=100000
boxroot/test/broken/test_hazard.exe|core|BOXROOT_HAZARD_EXPECT_LOSS=1 BOXROOT_HAZARD_N=5000
boxroot/test/broken/decommit_pools/test_page_size.exe|core|BOXROOT_PAGE_EXPECT_VIOLATIONS=1
'

core=""; no_children=""; list=""
while :; do
  case "${1:-}" in
    --list) list=1; shift ;;
    --core) core=1; shift ;;
    --no-children) no_children=1; shift ;;
    *) break ;;
  esac
done
selected() { # $1 = tags
  { [ -z "$core" ] || [[ " $1 " == *" core "* ]]; } \
    && { [ -z "$no_children" ] || [[ " $1 " != *" children "* ]]; }
}
if [ -n "$list" ]; then
  while IFS='|' read -r exe tags envs; do
    [ -n "$exe" ] && selected "$tags" && echo "$exe"
  done <<<"$tests" | sort -u
  exit 0
fi
root="${1:?usage: tools/test-quick.sh BUILD_ROOT [RUNNER...] | --list}"
shift
passed=0; failed=0; failures=""
log="$(mktemp)"
start_all=$(date +%s)
skipped=0
while IFS='|' read -r exe tags envs; do
  [ -n "$exe" ] || continue
  selected "$tags" || { skipped=$((skipped + 1)); continue; }
  start=$(date +%s.%N)
  # Each program runs in its directory, as dune's runtest rules run it.
  ( cd "$root/$(dirname "$exe")" && env $envs "$@" "./$(basename "$exe")" ) >"$log" 2>&1
  rc=$?
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1)); status=ok
  else
    failed=$((failed + 1)); status="FAILED (exit $rc)"
    failures+=" $exe${envs:+ ($envs)}"
    tail -20 "$log"
  fi
  printf '%-55s %6.1fs %s %s\n' "$exe" "$secs" "$status" "$envs"
done <<<"$tests"
rm -f "$log"
echo "test-quick: $(( $(date +%s) - start_all ))s in all${failures:+; failed:$failures}"
echo "test-quick: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
