#!/usr/bin/env python3
"""Sweeps one of boxroot's compile-time tunables over a few values and
compares them on the benchmark programs.

    bench/tune.py SWEEP [--values 13,14,15] [--reps 5] [--only perm_count,ops]
                        [--callgrind] [--no-time] [--out FILE.md]
    bench/tune.py --list            # the sweeps and their cases
    make bench-tune TUNE_ARGS="pool-size --reps 5 --callgrind"

SWEEP is one of SWEEPS below (pool-size, fresh-batch, free-pools-kept,
chunk-size, committed-max, scan-prefetch), each one of the tunables of
boxroot/tunables.h, where the current defaults are read from (one
`#define BOXROOT_<NAME> <value>` per line); --macro NAME --values a,b,c
sweeps any other #ifndef-overridable constant over the default case list.

How: for each value, the sources (this tree's boxroot/ and bench/ as
they are, committed or not) are copied to /tmp/boxroot-tune/<MACRO>=<v>/
and built there with the release profile, the value passed as -D through
a dune `env` stanza for that profile. The env stanza sets the C flags of
every foreign stub below it, so the library and the benchmark stubs (which
inline boxroot.h's fast paths, and so depend on the pool size) see the
same value; the script checks that in dune's log. Only the `boxroot`
implementation is built.

Then every case runs once per variant, variants back to back in an order
rotated at each repetition, for --reps repetitions: a change of load on a
shared machine hits every variant alike. Each cell reports the median,
the min and the spread ((max - min) / median) of the repetitions, and the
ratio of the medians to the current default's. With --callgrind, each
case that has a small form is also run once per variant under valgrind
--tool=callgrind: instruction counts are repeatable, unlike times. Both
the whole program's and those in boxroot's own code are reported; the
profiles stay in /tmp/boxroot-tune/callgrind/ for callgrind_annotate.

Every program runs with BENCH_STATS=1, so that it also prints boxroot's
statistics at exit as the fields of a RESULT line (case=exit): reserved
memory, slots scanned, etc. can be reported too. Progress goes to
stderr, the Markdown tables to stdout and to --out (default
/tmp/boxroot-tune/<sweep>.md; raw measurements beside it as .json).

Not part of `make test`: a sweep builds one tree per value (~1-2 minutes
each the first time) and runs for minutes.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import harness

REPO = harness.ROOT
TUNABLES_H = os.path.join(REPO, "boxroot", "tunables.h")
WORK = os.environ.get("BOXROOT_TUNE_DIR", "/tmp/boxroot-tune")
JOB_TIMEOUT_S = 600

# ---------------------------------------------------------------- cases

# A case: one program run. `metrics` are (column label, case filter, key):
# the value of `key` on the RESULT line whose case= contains the filter
# (None: the first RESULT line that has it), or one of STATS below,
# computed from the statistics at exit. `cg` is a smaller form for
# callgrind, or None. Every metric is a cost (lower is better) except
# roots_per_s.


def case(name, prog, args, metrics, cg=None):
    return dict(name=name, prog=prog, args=args, metrics=metrics, cg=cg)


def local(variant, depth):
    return case(f"local_roots {variant} depth={depth}", "local_roots",
                [f"variant={variant}", f"depths={depth}", "calls=3000000"],
                [(f"local {variant} d={depth} ns/call", None, "ns_per_call")],
                cg=[f"variant={variant}", f"depths={depth}", "calls=1000000"])


CASES = {
    "perm_count": case("perm_count n=9", "perm_count", ["n=9"],
                       [("perm_count n=9 cpu s", None, "cpu_s")], cg=["n=8"]),
    "synthetic": case("synthetic n=8", "synthetic", ["n=8"],
                      [("synthetic n=8 cpu s", None, "cpu_s")], cg=["n=4"]),
    "globroots": case("globroots 1.35M steps", "globroots", ["steps=1350000"],
                      [("globroots cpu s", None, "cpu_s"),
                       ("globroots minor slots scanned", None, "stat_minor_slots"),
                       ("globroots minor scan total ms", None, "stat_minor_scan_ms")],
                      cg=["steps=100000"]),
    "local_caller_1": local("caller", 1),
    "local_caller_10": local("caller", 10),
    "local_caller_1000": local("caller", 1000),
    "local_callee_1": local("callee", 1),
    "local_callee_10": local("callee", 10),
    "local_callee_1000": local("callee", 1000),
    # create+delete and modify with many roots alive (one process, two k).
    "ops": case("ops k=10^5,10^6", "ops", ["ks=100000,1000000", "iters=1000000"],
                [("ops create_delete k=1e5 ns", "op=create_delete,k=100000", "ns_per_op"),
                 ("ops create_delete k=1e6 ns", "op=create_delete,k=1000000", "ns_per_op"),
                 ("ops modify_young k=1e6 ns", "op=modify_young,k=1000000", "ns_per_op")],
                cg=["ks=100000", "iters=200000"]),
    # ops with few roots alive: pools are emptied and refilled (churn).
    "ops_small": case("ops k=1,100", "ops", ["ks=1,100", "iters=2000000"],
                      [("ops create_delete k=1 ns", "op=create_delete,k=1,", "ns_per_op"),
                       ("ops create_delete k=100 ns", "op=create_delete,k=100,", "ns_per_op")],
                      cg=["ks=1,100", "iters=200000"]),
    "latency_1e6": case("latency n=10^6", "latency",
                        ["n=1000000", "minors=200", "majors=7", "recreate=1"],
                        [("latency 1e6 major med ms", None, "major_med_ns"),
                         ("latency 1e6 minor after burst ms", None, "minor_burst_ns"),
                         ("latency 1e6 major scan ns/slot", None, "stat_major_ns_per_slot"),
                         ("latency 1e6 pools", None, "pools"),
                         ("latency 1e6 reserved MiB", None, "stat_reserved_mib"),
                         ("latency 1e6 create 10^6 roots ms", None, "create_s"),
                         ("latency 1e6 re-create burst ms", None, "recreate_s"),
                         ("latency 1e6 free pools committed at exit", None, "stat_free_committed")],
                        cg=["n=1000000", "minors=20", "majors=3"]),
    "latency_1e7": case("latency n=10^7", "latency",
                        ["n=10000000", "minors=20", "majors=3", "recreate=1"],
                        [("latency 1e7 major med ms", None, "major_med_ns"),
                         ("latency 1e7 minor after burst ms", None, "minor_burst_ns"),
                         ("latency 1e7 major scan ns/slot", None, "stat_major_ns_per_slot"),
                         ("latency 1e7 reserved MiB", None, "stat_reserved_mib"),
                         ("latency 1e7 create 10^7 roots ms", None, "create_s"),
                         ("latency 1e7 re-create burst ms", None, "recreate_s")]),
    "latency_1e4": case("latency n=10^4", "latency", ["n=10000", "minors=1000", "majors=20"],
                        [("latency 1e4 minor med us", None, "minor_med_ns"),
                         ("latency 1e4 minor after burst us", None, "minor_burst_ns")],
                        cg=["n=10000", "minors=1000", "majors=20"]),
    "parallel": case("parallel prodcons 2 domains", "parallel",
                     ["mode=prodcons", "domains=2", "roots=3000000"],
                     [("parallel prodcons 2d M roots/s", None, "roots_per_s")]),
}

LOCAL_ALL = [f"local_{v}_{d}" for v in ("caller", "callee") for d in (1, 10, 1000)]

# Sweeps: a tunable of boxroot/tunables.h, the values tried and the cases.
SWEEPS = {
    "pool-size": dict(macro="BOXROOT_POOL_LOG_SIZE", values=[13, 14, 15, 16],
                      cases=["perm_count", "synthetic", "globroots"] + LOCAL_ALL
                      + ["ops", "latency_1e6", "latency_1e7"]),
    "fresh-batch": dict(macro="BOXROOT_FRESH_BATCH", values=[32, 64, 128, 256],
                        cases=["globroots", "local_caller_1", "local_callee_1", "ops",
                               "ops_small", "latency_1e4", "latency_1e6"]),
    "free-pools-kept": dict(macro="BOXROOT_FREE_POOLS_KEPT", values=[0, 2, 8, 32],
                            cases=["ops", "ops_small", "synthetic", "latency_1e6", "parallel"]),
    "chunk-size": dict(macro="BOXROOT_CHUNK_LOG_SIZE", values=[21, 22, 24],
                       cases=["ops", "latency_1e6", "latency_1e7"]),
    "committed-max": dict(macro="BOXROOT_FREE_POOLS_COMMITTED_MAX", values=[16, 64, 256],
                          cases=["ops", "latency_1e6", "latency_1e7"]),
    "scan-prefetch": dict(macro="BOXROOT_SCAN_PREFETCH_SLOTS", values=[0, 64, 256, 512],
                          cases=["latency_1e6", "latency_1e7"]),
}


def tunable_defaults(path=TUNABLES_H):
    """{BOXROOT_<NAME>: value} from the tunables header: one
    `#define BOXROOT_<NAME> <value>` per tunable."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        sys.exit(f"tune: cannot read the tunables' defaults from {path} ({e.strerror}); "
                 "every tunable is defined there, one `#define BOXROOT_<NAME> <value>` per line")
    return dict(re.findall(r"^[ \t]*#[ \t]*define[ \t]+(BOXROOT_[A-Z0-9_]+)[ \t]+(\S+)", text, re.M))


# Units: RESULT keys in ns shown in ms or us as the label says.
SCALE = {" ms": 1e-6, " us": 1e-3, "M roots/s": 1e-6, " MiB": 1.0}

# ---------------------------------------------------------------- build


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def copy_tree(dst):
    """This tree's sources (not its build directories nor results) into dst."""
    os.makedirs(dst, exist_ok=True)
    excludes = ["--exclude=_build", "--exclude=_build-*", "--exclude=bench/results"]
    src = subprocess.run(["tar", "-C", REPO, "-cf", "-"] + excludes
                         + ["dune", "dune-project", "boxroot.opam", "boxroot", "bench"],
                         check=True, capture_output=True).stdout
    subprocess.run(["tar", "-C", dst, "-xf", "-"], input=src, check=True)


def set_flag(dst, macro, value):
    """Adds -Dmacro=value to the release profile's C flags in dst/dune."""
    path = os.path.join(dst, "dune")
    with open(path) as f:
        text = f.read()
    clause = f"(release (c_flags (:standard -D{macro}={value})))"
    # One env stanza per directory: add a clause to the existing one.
    if re.search(r"^\(env\b", text, re.M):
        text = re.sub(r"^\(env\b", "(env\n " + clause, text, count=1, flags=re.M)
    else:
        text += f"\n(env {clause})\n"
    with open(path, "w") as f:
        f.write(text)


def build_variant(macro, value, progs):
    dst = os.path.join(WORK, f"{macro}={value}")
    copy_tree(dst)
    set_flag(dst, macro, value)
    targets = [f"./bench/build/boxroot/{p}.exe" for p in sorted(set(progs))]
    t0 = time.time()
    p = subprocess.run(["dune", "build", "--root", ".", "--profile", "release"] + targets,
                       cwd=dst, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"tune: build of {macro}={value} failed:\n{p.stderr[-3000:]}")
    # The library and the stubs must both have seen the flag: every C
    # compilation that this build ran (dune's log) must carry it.
    flag = f"-D{macro}={value}"
    with open(os.path.join(dst, "_build", "log")) as f:
        cc = [l for l in f if re.search(r"\s-c\s\S*\.c\b", l) and " -o " in l]
    missing = [l for l in cc if flag not in l]
    if missing:
        sys.exit(f"tune: {flag} missing from C compilations:\n{missing[0]}")
    # No C compilation: up to date with the same dune file, thus the flag.
    log(f"  built {macro}={value} in {time.time() - t0:.0f}s "
        + (f"({len(cc)} C files compiled with {flag})" if cc else "(up to date)"))
    return os.path.join(dst, "_build", "default", "bench", "build", "boxroot")


# ---------------------------------------------------------------- runs

# Metrics computed from the statistics at exit (stat_<counter> fields).
MIB = 1 << 20
STATS = {
    "stat_reserved_mib": lambda s: s["stat_reserved_bytes"] / MIB,
    "stat_minor_slots": lambda s: s["stat_minor_slots_scanned"],
    "stat_major_slots": lambda s: s["stat_major_slots_scanned"],
    # Time in the scan hook (TSC), per slot scanned: the roots' own cost,
    # without the collector's marking that a collection's duration includes.
    "stat_major_ns_per_slot": lambda s: s["stat_major_scan_ns"] / max(1, s["stat_major_slots_scanned"]),
    "stat_minor_scan_ms": lambda s: s["stat_minor_scan_ns"] / 1e6,
    # Free pools whose memory is still committed at exit (after the burst
    # and every root are deleted): what BOXROOT_FREE_POOLS_COMMITTED_MAX bounds.
    "stat_free_committed": lambda s: s["stat_chunk_free_pools_committed"],
}


def parse(stdout, metrics):
    recs = harness.parse_results(stdout)
    at_exit = next((r for r in recs if r.get("case") == "exit"), None)
    out = {}
    for label, filt, key in metrics:
        if key in STATS:
            if at_exit and "stat_reserved_bytes" in at_exit:
                out[label] = STATS[key](at_exit)
            continue
        for r in recs:
            if r.get("case") == "exit":
                continue
            if (filt is None or filt in str(r["case"]) + ",") and key in r:
                v = float(r[key])
                if key.endswith("_s") and label.endswith(" ms"):
                    v *= 1e3  # seconds shown in ms
                else:
                    for suffix, s in SCALE.items():
                        if label.endswith(suffix):
                            v *= s
                out[label] = v
                break
    return out


def run_once(exe_dir, c):
    exe = os.path.join(exe_dir, c["prog"] + ".exe")
    p = subprocess.run([exe] + c["args"], capture_output=True, text=True,
                       env=dict(os.environ, BENCH_STATS="1"), timeout=JOB_TIMEOUT_S)
    if p.returncode != 0:
        raise RuntimeError(f"{exe} {' '.join(c['args'])}: exit {p.returncode}: {p.stderr[-500:]}")
    return parse(p.stdout, c["metrics"])


# A function's instructions count as the library's when its source line is
# in boxroot/*.[ch], including boxroot.h's fast paths inlined in the stubs.
LIB_FILE_RE = re.compile(r"^\s*([\d,]+) \([ \d.]+%\)\s+(\S*?)(?:^|/)boxroot/[^/: ]+\.[ch]:")


def callgrind_once(exe_dir, c, profile):
    """Instructions of the whole run, and those in the library's code."""
    exe = os.path.join(exe_dir, c["prog"] + ".exe")
    p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}",
                        exe] + c["cg"], capture_output=True, text=True, timeout=3600)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if p.returncode != 0 or not m:
        raise RuntimeError(f"callgrind {exe}: exit {p.returncode}: {p.stderr[-500:]}")
    ann = subprocess.run(["callgrind_annotate", "--threshold=100", profile],
                         capture_output=True, text=True).stdout
    lib = sum(int(l.group(1).replace(",", "")) for l in map(LIB_FILE_RE.match, ann.splitlines()) if l)
    return int(m.group(1)), lib


# ---------------------------------------------------------------- report


def fmt(v):
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:.2f}M"
    if a >= 10 and float(v).is_integer():
        return f"{v:.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def table(sweep_name, macro, values, default, cases, samples, cg):
    lines = [f"### {sweep_name}: {macro} in {', '.join(map(str, values))} "
             f"(default {default})", ""]
    reps = max((len(v) for v in samples.values()), default=0)
    if samples:
        lines += [f"Median of {reps} interleaved runs; (min, spread = (max-min)/median); "
                  f"×: median / default's median.", ""]
        lines.append("| benchmark | " + " | ".join(f"{macro}={v}" for v in values) + " |")
        lines.append("|---|" + "---|" * len(values))
        for c in cases:
            for label, _, _ in c["metrics"]:
                meds = {}
                cells = []
                sums = {v: harness.summarise(samples.get(f"{v}|{label}", [])) for v in values}
                for v in values:
                    meds[v] = sums[v]["median"] if sums[v] else None
                base = meds.get(default)
                for v in values:
                    s = sums[v]
                    if s is None:
                        cells.append("n/a")
                        continue
                    xs, med, lo = s["values"], s["median"], s["min"]
                    cell = f"{fmt(med)} ({fmt(lo)}, {harness.spread(s) or 0:.0f}%)"
                    if base and v != default:
                        cell += f" ×{med / base:.2f}"
                    if len(set(xs)) == 1:  # deterministic (counts): no spread to show
                        cell = fmt(med) + (f" ×{med / base:.2f}" if base and v != default else "")
                    cells.append(cell)
                lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    if cg:
        lines += ["Callgrind (one run each: repeatable): instructions of the whole program; "
                  "in brackets, those in boxroot's code (boxroot/*.[ch], inlined fast paths "
                  "included); ×: ratio to the default's.", ""]
        lines.append("| benchmark (small form) | " + " | ".join(f"{macro}={v}" for v in values) + " |")
        lines.append("|---|" + "---|" * len(values))
        for c in cases:
            if not c["cg"]:
                continue
            base = cg.get(f"{default}|{c['name']}")
            cells = []
            for v in values:
                got = cg.get(f"{v}|{c['name']}")
                if got is None:
                    cells.append("n/a")
                    continue
                (ir, lib), cell = got, ""
                cell = f"{ir / 1e6:.1f}M ({lib / 1e6:.2f}M)"
                if base and v != default:
                    cell += f" ×{ir / base[0]:.4f} (×{lib / max(1, base[1]):.3f})"
                cells.append(cell)
            lines.append(f"| {c['prog']} {' '.join(c['cg'])} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("sweep", nargs="?", help="one of: " + ", ".join(SWEEPS))
    ap.add_argument("--macro", help="any other overridable constant (with --values)")
    ap.add_argument("--values", help="comma-separated values (default: the sweep's)")
    ap.add_argument("--default", help="the current default, the base of ratios")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", help="comma-separated case names (see --list)")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions")
    ap.add_argument("--no-time", action="store_true", help="callgrind only: no timed runs")
    ap.add_argument("--out", help="Markdown output (default /tmp/boxroot-tune/<sweep>.md)")
    ap.add_argument("--list", action="store_true", help="list the sweeps and cases")
    a = ap.parse_args()

    defaults = tunable_defaults() if (a.list or a.sweep) else {}
    if a.list:
        for name, s in SWEEPS.items():
            print(f"{name}: {s['macro']} {s['values']} (default {defaults.get(s['macro'], '?')}): "
                  + ", ".join(s["cases"]))
        print("\ncases:")
        for k, c in CASES.items():
            print(f"  {k}: {c['prog']} {' '.join(c['args'])}"
                  + (f"  [callgrind: {' '.join(c['cg'])}]" if c["cg"] else ""))
        return
    if a.sweep:
        if a.sweep not in SWEEPS:
            ap.error(f"unknown sweep {a.sweep}; see --list")
        s = dict(SWEEPS[a.sweep])
        if s["macro"] not in defaults:
            sys.exit(f"tune: {s['macro']} is not defined in {TUNABLES_H}")
        s["default"] = defaults[s["macro"]]
    elif a.macro:
        s = dict(macro=a.macro, values=[], default=None, cases=list(CASES))
    else:
        ap.error("give a sweep or --macro (see --list)")
    name = a.sweep or a.macro
    macro = a.macro or s["macro"]
    values = a.values.split(",") if a.values else [str(v) for v in s["values"]]
    default = a.default or (str(s["default"]) if s["default"] is not None else values[0])
    if not values:
        ap.error("--values is needed with --macro")
    case_keys = a.only.split(",") if a.only else s["cases"]
    for k in case_keys:
        if k not in CASES:
            ap.error(f"unknown case {k}; see --list")
    cases = [CASES[k] for k in case_keys]
    out = a.out or os.path.join(WORK, f"{name}.md")

    log(f"tune: {name}: {macro} in {values}; cases: {', '.join(case_keys)}")
    dirs = {}
    for v in values:
        log(f"tune: building {macro}={v} in {WORK}/{macro}={v}")
        dirs[v] = build_variant(macro, v, [c["prog"] for c in cases])

    samples, cg = {}, {}
    if not a.no_time:
        # Each case is a point whose variants are the values, interleaved.
        def run(job, rep):
            c, v = job
            res = run_once(dirs[v], c)
            for label, x in res.items():
                samples.setdefault(f"{v}|{label}", []).append(x)
            return [res], None

        harness.interleave([[(c, v) for v in values] for c in cases], a.reps, run,
                           describe=lambda job: f"{macro}={job[1]} {job[0]['name']}",
                           summary=lambda job, recs: ", ".join(
                               f"{k}={fmt(x)}" for k, x in list(recs[0].items())[:3] if k != "rep"),
                           log=log)
    if a.callgrind:
        cgcases = [c for c in cases if c["cg"]]
        total = len(cgcases) * len(values)
        done = 0
        for c in cgcases:
            for v in values:
                t = time.time()
                profile = os.path.join(WORK, "callgrind", f"{macro}={v}-{c['prog']}-"
                                       + "-".join(c["cg"]).replace("=", "") + ".out")
                os.makedirs(os.path.dirname(profile), exist_ok=True)
                ir, lib = callgrind_once(dirs[v], c, profile)
                cg[f"{v}|{c['name']}"] = [ir, lib]
                done += 1
                log(f"[callgrind {done}/{total}] {macro}={v} {c['prog']} {' '.join(c['cg'])}: "
                    f"{ir / 1e6:.1f}M instructions, {lib / 1e6:.1f}M in boxroot "
                    f"({time.time() - t:.0f}s)")

    # What was measured: HEAD, marked dirty if tracked files differ from it.
    git = ["git", "-C", REPO]
    commit = subprocess.run(git + ["rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    if subprocess.run(git + ["diff", "--quiet", "HEAD"]).returncode != 0:
        commit += "-dirty"
    date = time.strftime("%Y-%m-%d %H:%M:%S")
    md = (f"Run: `bench/tune.py {' '.join(sys.argv[1:])}` at {commit}, {date}.\n\n"
          + table(name, macro, values, default, cases, samples, cg))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write(md + "\n")
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump(dict(sweep=name, macro=macro, values=values, default=default,
                       cases=case_keys, reps=a.reps, samples=samples, callgrind=cg,
                       argv=sys.argv[1:], commit=commit, date=date), f, indent=1)
    print(md)
    log(f"tune: written {out}")


if __name__ == "__main__":
    main()
