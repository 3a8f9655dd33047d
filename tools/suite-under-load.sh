#!/bin/bash
# The timing-sensitive suites under load: tools/suite-under-load.sh N K
# runs them N times each beside K busy loops (processes that spin on a
# core), then prints, per test, its passes and failures and, for each
# control (a deliberately broken build that must lose values), the
# values it lost in each run. A control that lost nothing in some run is
# marked: it proves nothing in that run.
#
# The suites: every control of boxroot/test/broken and boxroot/test/weak
# (the rules of their dune files, with the same environment), the window
# tests, the explorer's three seeds, the tests that drive the runtime
# into a GC phase (marking, the window, a cycle's end), and those run on
# OCaml's debug runtime. Run from the repository's root with the OCaml
# toolchain on PATH (`make test-under-load N=5 K=2` sets it up), for the
# OCaml version there (OCAML_VERSION=5.3 for 5.3.0, built into
# _build-ocaml-5.3 as make test-c-53 does; BUILD_DIR overrides).
# ONLY="regexp" keeps the tests whose name matches; TIMEOUT (seconds, 900)
# bounds each run; LOGS keeps the logs (default: a temporary directory,
# removed unless a run failed).
set -u
runs=${1:-5}
loops=${2:-2}
timeout_s=${TIMEOUT:-900}
version=$(ocamlfind ocamlopt -version 2>/dev/null || ocamlopt -version) \
  || { echo "suite-under-load: no OCaml on PATH (eval \"\$(tools/toolchain.sh)\")"; exit 2; }
case "$version" in
  5.5*|5.6*) minor=5; build=${BUILD_DIR:-_build} ;;
  5.*) minor=${version#5.}; minor=${minor%%.*}; build=${BUILD_DIR:-_build-ocaml-${version%.*}} ;;
  *) minor=-1; build=${BUILD_DIR:-_build-ocaml-${version%.*}} ;;
esac
t=boxroot/test

# name | executable under $build/default | environment | kind | needs
# kind: control (must lose values or fail), crash-control (the same, or
# die by a signal, as its dune rule allows: a wrong read may darken a
# freed block) or test (must pass);
# needs: 5 (OCaml 5), 5.5, 5.2-5.4, or any.
entries=(
  "no_barrier/test_hazard|$t/broken/test_hazard.exe|BOXROOT_HAZARD_EXPECT_LOSS=1|control|5"
  "no_barrier/test_hazard_domains|$t/broken/domains/test_hazard_domains.exe|BOXROOT_HAZARD_EXPECT_LOSS=1|control|5"
  "no_barrier/test_explore|$t/broken/domains/test_explore.exe|BOXROOT_HAZARD_EXPECT_LOSS=1|control|5.5"
  "stamp/test_hazard|$t/broken/stamp/test_hazard.exe|BOXROOT_HAZARD_EXPECT_LOSS=1|control|5"
  "stamp/test_explore|$t/broken/stamp/test_explore.exe|BOXROOT_HAZARD_EXPECT_LOSS=1|control|5.5"
  "adopt/test_hazard_domains|$t/broken/adopt/test_hazard_domains.exe|BOXROOT_HAZARD_SCENARIO=adopt BOXROOT_HAZARD_EXPECT_LOSS=1|control|5"
  "adopt/test_explore|$t/broken/adopt/test_explore.exe|BOXROOT_HAZARD_EXPECT_LOSS=1|control|5.5"
  "aging/test_marking_rules|$t/broken/aging/test_marking_rules.exe|BOXROOT_RULES=age BOXROOT_HAZARD_EXPECT_LOSS=1|control|5"
  "join_colour/test_marking_rules|$t/broken/join_colour/test_marking_rules.exe|BOXROOT_RULES=join BOXROOT_HAZARD_EXPECT_LOSS=1|control|5"
  "join_colour/test_explore|$t/broken/join_colour/test_explore.exe|BOXROOT_HAZARD_EXPECT_LOSS=1|control|5"
  "adopt_stamp_current/test_marking_rules|$t/broken/adopt_stamp_current/test_marking_rules.exe|BOXROOT_RULES=adopt_darkening BOXROOT_HAZARD_EXPECT_LOSS=1|control|5"
  "late_switch/test_window|$t/broken/late_switch/test_window.exe|BOXROOT_WINDOW_SCENARIOS=stateless BOXROOT_HAZARD_EXPECT_LOSS=1|control|5.5"
  "needs_flag/test_window|$t/broken/needs_flag/test_window.exe|BOXROOT_WINDOW_SCENARIOS=modify+snapshot BOXROOT_HAZARD_EXPECT_LOSS=1|control|5.5"
  "needs_flag/test_explore|$t/broken/needs_flag/test_explore.exe|BOXROOT_HAZARD_EXPECT_LOSS=1|control|5.5"
  "young_orphans/test_marking_rules|$t/broken/young_orphans/test_marking_rules.exe|BOXROOT_RULES=orphans BOXROOT_HAZARD_EXPECT_LOSS=1|control|5"
  "join_darkening/test_marking_rules|$t/broken/join_darkening/test_marking_rules.exe|BOXROOT_RULES=adopt_compaction BOXROOT_HAZARD_EXPECT_LOSS=1|control|5.2-5.4"
  "previous_hook_late/test_hook_chain|$t/broken/previous_hook_late/test_hook_chain.exe|BOXROOT_HAZARD_EXPECT_LOSS=1|control|5"
  "retired_keep_pools/test_stale_marker|$t/broken/retired_keep_pools/test_stale_marker.exe|BOXROOT_HAZARD_EXPECT_LOSS=1|control|5"
  "teardown/test_teardown|$t/broken/teardown/test_teardown.exe|BOXROOT_HAZARD_EXPECT_LOSS=1|control|5"
  "unlisted_stamps/test_window|$t/broken/unlisted_stamps/test_window.exe|BOXROOT_WINDOW_SCENARIOS=unlisted BOXROOT_HAZARD_EXPECT_LOSS=1|control|5.5"
  "unlisted_stamps/test_marking_rules|$t/broken/unlisted_stamps/test_marking_rules.exe|BOXROOT_RULES=relist BOXROOT_HAZARD_EXPECT_LOSS=1|control|5"
  "wrap/test_marking_rules|$t/broken/wrap/test_marking_rules.exe|BOXROOT_RULES=wrap BOXROOT_HAZARD_EXPECT_LOSS=1|control|5"
  "weak_no_darkening/test_weak_marking|$t/weak/broken_darkening/test_weak_marking.exe|BOXROOT_WEAK_EXPECT_LOSS=1|control|any"
  "weak_no_dead_check/test_weak_window|$t/weak/broken_window/test_weak_window.exe|BOXROOT_WEAK_EXPECT_LOSS=1|control|any"
  "weak_terminated_adopts/test_weak_orphans|$t/weak/broken_terminated_adopts/test_weak_orphans.exe|BOXROOT_WEAK_EXPECT_LOSS=1|crash-control|5"
  "weak_orphans_unadopted/test_weak_orphans|$t/weak/broken_orphans_unadopted/test_weak_orphans.exe|BOXROOT_WEAK_EXPECT_LOSS=1|crash-control|5"
  "notify_drop/test_weak_notify|$t/weak/broken_notify_drop/test_weak_notify.exe|BOXROOT_WEAK_EXPECT_LOSS=1 BOXROOT_WEAK_NOTIFY_STEPS=5000|control|any"
  "notify_repeat/test_weak_notify|$t/weak/broken_notify_repeat/test_weak_notify.exe|BOXROOT_WEAK_EXPECT_LOSS=1 BOXROOT_WEAK_NOTIFY_STEPS=5000|control|any"
  "test_hazard|$t/test_hazard.exe||test|any"
  "test_hazard_domains|$t/hazard_domains/test_hazard_domains.exe||test|5"
  "test_marking_rules|$t/test_marking_rules.exe||test|any"
  "test_marking_rules orphans|$t/test_marking_rules.exe|BOXROOT_RULES=orphans|test|5"
  "test_marking_rules adopt_compaction|$t/test_marking_rules.exe|BOXROOT_RULES=adopt_compaction|test|5.2-5.4"
  "test_weak_orphans|$t/weak/test_weak_orphans.exe||test|5"
  "test_window|$t/window/test_window.exe||test|5"
  "test_teardown|$t/window/test_teardown.exe||test|5"
  "test_stale_marker|$t/window/test_stale_marker.exe||test|5"
  "test_explore (seeds 1 2 3)|$t/window/test_explore.exe||test|5"
  "test_weak_marking|$t/weak/test_weak_marking.exe||test|any"
  "test_weak_window|$t/weak/test_weak_window.exe||test|any"
  "test_weak_notify|$t/weak/test_weak_notify.exe||test|any"
  "test_weak_notify_domains|$t/weak/test_weak_notify_domains.exe||test|any"
  "debug runtime: test_hazard|$t/debug_runtime/test_hazard.exe|OCAMLRUNPARAM=V=1,v=0|test|any"
  "debug runtime: test_marking_rules|$t/debug_runtime/test_marking_rules.exe|OCAMLRUNPARAM=v=0|test|5"
  "debug runtime: test_explore|$t/debug_runtime/test_explore.exe|OCAMLRUNPARAM=v=0 BOXROOT_EXPLORE_SEEDS=1 BOXROOT_EXPLORE_ROUNDS=8|test|5"
  "debug runtime: test_window|$t/debug_runtime/test_window.exe|OCAMLRUNPARAM=v=0|test|5"
  "debug runtime: test_weak_marking|$t/weak/debug_runtime/test_weak_marking.exe|OCAMLRUNPARAM=v=0|test|any"
  "debug runtime: test_weak_window|$t/weak/debug_runtime/test_weak_window.exe|OCAMLRUNPARAM=v=0|test|any"
)

applies() { # $1 = needs
  case "$1" in
    any) return 0 ;;
    5) [ "$minor" -ge 0 ] ;;
    5.5) [ "$minor" -ge 5 ] ;;
    5.2-5.4) [ "$minor" -ge 2 ] && [ "$minor" -le 4 ] ;;
  esac
}

# The controls that the dune files run, so that none is left out here:
# every directory with a rule that expects a loss.
for d in $(grep -l -E 'EXPECT_LOSS 1' $t/broken/dune $t/broken/*/dune $t/weak/*/dune | xargs -n1 dirname); do
  case "$d" in
    $t/broken) key=no_barrier ;;
    $t/broken/domains) key=no_barrier ;;
    $t/weak/broken_darkening) key=weak_no_darkening ;;
    $t/weak/broken_window) key=weak_no_dead_check ;;
    $t/weak/broken_terminated_adopts) key=weak_terminated_adopts ;;
    $t/weak/broken_orphans_unadopted) key=weak_orphans_unadopted ;;
    $t/weak/broken_notify_drop) key=notify_drop ;;
    $t/weak/broken_notify_repeat) key=notify_repeat ;;
    *) key=$(basename "$d") ;;
  esac
  printf '%s\n' "${entries[@]}" | grep -q "^$key/" \
    || echo "suite-under-load: the controls of $d are not in this script's list"
done

selected=()
targets=()
for e in "${entries[@]}"; do
  IFS='|' read -r name exe env kind needs <<<"$e"
  applies "$needs" || continue
  [[ "$name" =~ ${ONLY:-.} ]] || continue
  selected+=("$e")
  targets+=("./$exe")
done
[ ${#selected[@]} -gt 0 ] || { echo "suite-under-load: no test selected"; exit 2; }

echo "== suite-under-load: OCaml $version, $runs runs beside $loops busy loops, build $build"
# A test that this version does not build (its dune file leaves it out)
# is left out here too, and said so.
if ! nice dune build --build-dir "$build" "${targets[@]}" >/dev/null 2>&1; then
  kept=()
  for e in "${selected[@]}"; do
    IFS='|' read -r name exe env kind needs <<<"$e"
    if nice dune build --build-dir "$build" "./$exe" >/dev/null 2>&1; then kept+=("$e")
    else echo "suite-under-load: $exe does not build here: $name left out"; fi
  done
  selected=("${kept[@]}")
fi
logs=${LOGS:-$(mktemp -d /tmp/suite-under-load.XXXXXX)}
mkdir -p "$logs"
busy=()
stop_busy() { for p in "${busy[@]}"; do kill "$p" 2>/dev/null; done; busy=(); }
trap stop_busy EXIT
# The busy loops run niced as the tests do: they compete with the tests
# as equals, and leave the machine's other users their share.
for _ in $(seq 1 "$loops"); do
  nice bash -c 'while :; do :; done' &
  busy+=($!)
done
echo "uptime at start: $(uptime)"
start_all=$(date +%s)

# The values a control's run lost, as its output reports them: every
# "K of N ... lost", "K values lost" and ", K lost" (the sum; with a "+"
# when some round or attempt lost none, and needed another), each "LOST"
# line of the explorer, each child that failed ("exit code" not 0), each
# dead value read full, and the earlier hook's call that the hook chain's
# control skipped, each emptied weak root never reported and each report
# repeated.
lost_of() { # $1 = log
  awk '
    { line = $0 }
    match(line, /[0-9]+ of [0-9]+ (values )?lost/) { k = substr(line, RSTART) + 0; sum += k; n++; if (k == 0) zero = 1 }
    match(line, /: [0-9]+ values lost$/) { k = substr(line, RSTART + 2) + 0; sum += k; n++; if (k == 0) zero = 1 }
    match(line, /, [0-9]+ lost$/) { k = substr(line, RSTART + 2) + 0; sum += k; n++; if (k == 0) zero = 1 }
    match(line, /[0-9]+ of [0-9]+ dead values read full/) { k = substr(line, RSTART) + 0; sum += k; n++; if (k == 0) zero = 1 }
    match(line, /: [0-9]+ (dropped values read full|kept values not read back)/) { k = substr(line, RSTART + 2) + 0; sum += k; n++; if (k == 0) zero = 1 }
    match(line, /[0-9]+ roots emptied and never reported/) { k = substr(line, RSTART) + 0; sum += k; n++; if (k == 0) zero = 1 }
    /word [0-9]+ reported twice/ { sum++; n++ }
    /^LOST/ { sum++; n++ }
    /the earlier hook ran 0 time/ { sum++; n++ }
    /exit code [1-9]/ { sum++; n++ }
    END { if (n == 0) print "-"; else printf "%d%s", sum, (zero ? "+" : "") }' "$1"
}

declare -A passes fails lost times
for i in $(seq 1 "$runs"); do
  for e in "${selected[@]}"; do
    IFS='|' read -r name exe env kind needs <<<"$e"
    log="$logs/$(echo "$name" | tr ' /:()' '_____').$i.log"
    t0=$(date +%s)
    assigns=()
    for w in $env; do assigns+=("${w%%=*}=$(echo "${w#*=}" | tr + ' ')"); done
    timeout "$timeout_s" env "${assigns[@]}" nice "./$build/default/$exe" >"$log" 2>&1
    rc=$?
    signal=""
    if [ "$kind" = crash-control ] && [ $rc -gt 128 ] && [ $rc -ne 137 ]; then signal="signal$((rc - 128))"; rc=0; fi
    dt=$(( $(date +%s) - t0 ))
    times[$name]+=" ${dt}s"
    if [ $rc -eq 0 ]; then passes[$name]=$(( ${passes[$name]:-0} + 1 ))
    else fails[$name]=$(( ${fails[$name]:-0} + 1 )); echo "run $i: $name failed (exit code $rc): $log"
    fi
    case "$kind" in
      control) lost[$name]+=" $(lost_of "$log")" ;;
      crash-control) lost[$name]+=" ${signal:-$(lost_of "$log")}" ;;
    esac
  done
done
stop_busy
echo "uptime at end: $(uptime)"
echo "== $(( $(date +%s) - start_all )) s; OCaml $version; $runs runs beside $loops busy loops"
printf '%-40s %-13s %4s %4s  %s\n' test kind pass fail "values lost per run (controls) / seconds per run"
status=0
for e in "${selected[@]}"; do
  IFS='|' read -r name exe env kind needs <<<"$e"
  p=${passes[$name]:-0}; f=${fails[$name]:-0}
  [ "$f" -eq 0 ] || status=1
  detail=${times[$name]}
  if [ "$kind" != test ]; then
    detail="${lost[$name]} /${times[$name]}"
    for k in ${lost[$name]}; do case "$k" in 0|0+|-) status=1 ;; esac; done
  fi
  printf '%-40s %-13s %4d %4d  %s\n' "$name" "$kind" "$p" "$f" "$detail"
done
[ $status -eq 0 ] && [ -z "${LOGS:-}" ] && rm -rf "$logs"
[ $status -eq 0 ] || echo "logs: $logs"
exit $status
