#!/usr/bin/env python3
"""The benchmark driver: runs every benchmark program for every
implementation, interleaved, several times, and writes under
bench/results/<mode>/:

  results.json        every measurement, with the machine and toolchain
  results.md          the tables: medians, spreads, ratios to "OCaml ref via
                      C" and to upstream boxroot, the paper's figures beside
                      ours, and the issue's targets checked
  README-section.md   a short summary to paste into the top-level README
  *.svg               charts (matplotlib, installed on first use in a venv)

A copy of results.json also goes to bench/results/runs/ (one file per
run, not committed).

Interleaving: repetition r runs, for each benchmark and parameter point,
every implementation in turn, starting from a different one at each
repetition; so slow phases of a noisy machine spread over all of them.
Times are CPU seconds of the timed section (wall-clock for the parallel
benchmark), measured inside the program (bench/src/harness.ml).

Usage: run.py [--mode quick|full] [--reps N] [--only b1,b2] [--impls i1,i2]
       run.py --report-only path/to/results.json   (tables/charts again)
"""
import argparse
import csv
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_BUILD = os.path.join(HERE, "_build", "ocaml-default", "default", "bench", "build")
VENV = os.path.join(os.environ.get("BOXROOT_CACHE", os.path.expanduser("~/.cache/boxroot")),
                    "bench-venv")
PAPER_CSV = os.environ.get("BOXROOT_PAPER_FIGURES", "/work/shared/paper-figures.csv")
JOB_TIMEOUT_S = 1800

LABELS = {
    "ocaml": "OCaml (no boxing)",
    "gc": "OCaml ref via C",
    "global": "Global roots",
    "generational": "Generational roots",
    "dll": "Doubly-linked list",
    "boxroot": "Boxroot (ours)",
    "upstream": "Upstream boxroot 0.4",
    "local": "Local roots (CAMLparam)",
    "boxroot-callee": "Boxroot, callee-roots",
    "boxroot-caller": "Boxroot, caller-roots",
    "upstream-callee": "Upstream, callee-roots",
    "upstream-caller": "Upstream, caller-roots",
}
# Rows of the paper's tables (paper-figures.csv) for our implementations.
# The paper's "Boxroot" was upstream's library at the time (2022).
PAPER_ROWS = {"ocaml": "OCaml", "gc": "OCaml ref", "generational": "Generational roots",
              "dll": "Doubly-linked list", "boxroot": "Boxroot", "upstream": "Boxroot"}

GLOBAL_BENCHES = ["perm_count", "synthetic", "globroots"]
GLOBAL_IMPLS = ["ocaml", "gc", "global", "generational", "dll", "boxroot", "upstream"]
LOCAL_VARIANTS = [("boxroot", "ocaml"), ("boxroot", "local"), ("boxroot", "callee"),
                  ("boxroot", "caller"), ("upstream", "callee"), ("upstream", "caller"),
                  ("boxroot", "generational")]
OPS_IMPLS = ["gc", "global", "generational", "dll", "boxroot", "upstream"]
LATENCY_IMPLS = ["ocaml", "generational", "boxroot", "upstream"]
PARALLEL_IMPLS = ["gc", "generational", "boxroot", "upstream"]
ALL_BENCHES = GLOBAL_BENCHES + ["local_roots", "ops", "latency", "parallel"]

MODES = {
    # The quick form: `make bench`. Paper parameters except perm_count
    # (n=9: 10x less work) and fewer calls/iterations.
    "quick": dict(reps=5, perm_n=9, synth_n=8, glob_steps=1_350_000,
                  local_calls=3_000_000, local_depths=[1, 2, 3, 5, 10, 100, 1000],
                  ops_iters=1_000_000, ops_ks=[1, 10, 100, 1000, 10_000, 100_000, 1_000_000],
                  lat_ns=[0, 1000, 10_000, 100_000, 1_000_000], lat_minors=1000, lat_majors=7,
                  par_roots=10_000_000),
    # The paper's sizes: `make bench-full`.
    "full": dict(reps=5, perm_n=10, synth_n=8, glob_steps=1_350_000,
                 local_calls=10_000_000, local_depths=[1, 2, 3, 5, 10, 100, 1000],
                 ops_iters=5_000_000, ops_ks=[1, 10, 100, 1000, 10_000, 100_000, 1_000_000],
                 lat_ns=[0, 1000, 10_000, 100_000, 1_000_000, 10_000_000], lat_minors=2000,
                 lat_majors=15, par_roots=30_000_000),
}

# ---------------------------------------------------------------- jobs


def plan(cfg, only, impls_filter, cores):
    """Groups of jobs: each group is one benchmark at one parameter point,
    one job per implementation. Groups run in order; within a group the
    implementations are rotated at each repetition."""
    def keep(impl):
        return impls_filter is None or impl.split("-")[0] in impls_filter

    groups = []
    if "perm_count" in only:
        groups.append([("perm_count", i, "perm_count", [f"n={cfg['perm_n']}"])
                       for i in GLOBAL_IMPLS if keep(i)])
    if "synthetic" in only:
        groups.append([("synthetic", i, "synthetic", [f"n={cfg['synth_n']}"])
                       for i in GLOBAL_IMPLS if keep(i)])
    if "globroots" in only:
        groups.append([("globroots", i, "globroots", [f"steps={cfg['glob_steps']}"])
                       for i in GLOBAL_IMPLS if keep(i)])
    # One process per depth (per k): the finest interleaving, so that a
    # change of load during the run hits every implementation alike.
    if "local_roots" in only:
        for depth in cfg["local_depths"]:
            groups.append([("local_roots", lib, "local_roots",
                            [f"variant={v}", f"depths={depth}", f"calls={cfg['local_calls']}"])
                           for lib, v in LOCAL_VARIANTS
                           if keep(v if v in ("local", "ocaml", "generational") else lib)])
    if "ops" in only:
        for k in cfg["ops_ks"]:
            groups.append([("ops", i, "ops", [f"ks={k}", f"iters={cfg['ops_iters']}"])
                           for i in OPS_IMPLS if keep(i)])
    if "latency" in only:
        for n in cfg["lat_ns"]:
            groups.append([("latency", i, "latency",
                            [f"n={n}", f"minors={cfg['lat_minors']}", f"majors={cfg['lat_majors']}"])
                           for i in LATENCY_IMPLS if keep(i)])
    if "parallel" in only:
        for mode in ("prodcons", "independent"):
            for d in range(1, cores + 1):
                groups.append([("parallel", i, "parallel",
                                [f"mode={mode}", f"domains={d}", f"roots={cfg['par_roots']}"])
                               for i in PARALLEL_IMPLS if keep(i)])
    return [g for g in groups if g]


RESULT_RE = re.compile(r"^RESULT (.*)$")


def parse_results(text):
    out = []
    for line in text.splitlines():
        m = RESULT_RE.match(line.strip())
        if not m:
            continue
        rec = {}
        for field in m.group(1).split(" "):
            k, _, v = field.partition("=")
            try:
                rec[k] = int(v)
            except ValueError:
                try:
                    rec[k] = float(v)
                except ValueError:
                    rec[k] = v
        # "case" itself contains '=': keep everything after the first one.
        rec["case"] = m.group(1).split("case=", 1)[1].split(" ", 1)[0]
        out.append(rec)
    return out


def run_job(build, job):
    bench, impl_dir, program, args = job
    exe = os.path.join(build, impl_dir, program + ".exe")
    if not os.path.exists(exe):
        return None, f"missing {exe}"
    try:
        p = subprocess.run([exe] + args, capture_output=True, text=True, timeout=JOB_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"timeout after {JOB_TIMEOUT_S}s"
    if p.returncode != 0:
        return None, f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
    recs = parse_results(p.stdout)
    if not recs:
        return None, "no RESULT line"
    return recs, None


def primary(bench):
    return {"perm_count": "cpu_s", "synthetic": "cpu_s", "globroots": "cpu_s",
            "local_roots": "ns_per_call", "ops": "ns_per_op", "latency": "minor_med_ns",
            "parallel": "roots_per_s"}[bench]


def fmt_value(bench, v):
    m = primary(bench)
    if m == "cpu_s":
        return f"{v:.3f}s"
    if m == "roots_per_s":
        return f"{v / 1e6:.1f}M roots/s"
    return f"{v:.1f}ns"

# ---------------------------------------------------------------- machine


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except Exception:
        return ""


def machine_info():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        cpu = platform.processor()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ocaml": sh("ocamlopt -version"),
        "gcc": sh("gcc --version | head -1"),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "git_commit": sh(f"git -C {ROOT} rev-parse --short HEAD"),
        "git_dirty": bool(sh(f"git -C {ROOT} status --porcelain -- boxroot bench")),
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "loadavg_start": sh("cat /proc/loadavg"),
    }

# ---------------------------------------------------------------- stats


def aggregate(records):
    """(bench, case, impl) -> {metric: {min, median, max, n, values}}."""
    groups = {}
    for r in records:
        key = (r["bench"], r["case"], r["impl"])
        groups.setdefault(key, []).append(r)
    agg = {}
    for key, rs in groups.items():
        metrics = {}
        for k in rs[0]:
            if k in ("bench", "case", "impl", "rep"):
                continue
            vals = [r[k] for r in rs if isinstance(r.get(k), (int, float))]
            if not vals:
                continue
            metrics[k] = {"min": min(vals), "median": statistics.median(vals),
                          "max": max(vals), "n": len(vals), "values": vals}
        agg[key] = metrics
    return agg


def med(agg, bench, case, impl, metric=None):
    m = agg.get((bench, case, impl), {}).get(metric or primary(bench))
    return None if m is None else m["median"]


def spread(stat):
    """Spread of the repetitions: (max - min) / median, in percent."""
    if stat is None or stat["median"] == 0:
        return None
    return 100.0 * (stat["max"] - stat["min"]) / stat["median"]


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def f2(x, digits=2):
    return "–" if x is None else f"{x:.{digits}f}"


def load_paper(ocaml_version):
    col = "ocaml_4.14" if ocaml_version.startswith("4.") else "ocaml_5.0"
    paper = {}
    try:
        with open(PAPER_CSV) as f:
            rows = [l for l in f if not l.startswith("#")]
        for row in csv.DictReader(rows):
            paper[(row["benchmark"], row["implementation"])] = float(row[col])
    except (OSError, KeyError, ValueError):
        pass
    return paper, col.replace("ocaml_", "OCaml ")

# ---------------------------------------------------------------- report


def cases_of(agg, bench):
    cs = sorted({c for (b, c, _) in agg if b == bench}, key=case_sort_key)
    return cs


def case_sort_key(case):
    parts = []
    for kv in case.split(","):
        k, _, v = kv.partition("=")
        parts.append((k, int(v) if v.isdigit() else v))
    return [(k, (0, v) if isinstance(v, int) else (1, v)) for k, v in parts]


def case_value(case, key):
    for kv in case.split(","):
        k, _, v = kv.partition("=")
        if k == key:
            return int(v) if v.isdigit() else v
    return None


def targets(agg):
    """The targets of issue 4, checked on medians of this run."""
    out = []

    def check(label, value, limit, ok):
        out.append((label, value, limit, None if value is None else ok(value)))

    for b in ("perm_count", "synthetic"):
        for c in cases_of(agg, b):
            bx, up, gc = (med(agg, b, c, i) for i in ("boxroot", "upstream", "gc"))
            check(f"{b}: boxroot / upstream", ratio(bx, up), "≤ 0.80", lambda v: v <= 0.80)
            check(f"{b}: boxroot / OCaml ref via C", ratio(bx, gc), "≤ 0.90", lambda v: v <= 0.90)
    for c in cases_of(agg, "globroots"):
        check("globroots: boxroot / upstream",
              ratio(med(agg, "globroots", c, "boxroot"), med(agg, "globroots", c, "upstream")),
              "≤ 0.95", lambda v: v <= 0.95)
    for c in cases_of(agg, "local_roots"):
        d = case_value(c, "depth")
        for disc in ("caller", "callee"):
            check(f"local_roots depth {d}: boxroot-{disc} / upstream-{disc}",
                  ratio(med(agg, "local_roots", c, f"boxroot-{disc}"),
                        med(agg, "local_roots", c, f"upstream-{disc}")),
                  "≤ 0.95", lambda v: v <= 0.95)
        check(f"local_roots depth {d}: boxroot-caller / local roots",
              ratio(med(agg, "local_roots", c, "boxroot-caller"), med(agg, "local_roots", c, "local")),
              "≤ 1.00", lambda v: v <= 1.0)
    for b in GLOBAL_BENCHES:
        for c in cases_of(agg, b):
            check(f"{b}: boxroot / generational",
                  ratio(med(agg, b, c, "boxroot"), med(agg, b, c, "generational")),
                  "< 1.00", lambda v: v < 1.0)
    for c in cases_of(agg, "local_roots"):
        check(f"local_roots depth {case_value(c, 'depth')}: boxroot-caller / generational",
              ratio(med(agg, "local_roots", c, "boxroot-caller"),
                    med(agg, "local_roots", c, "generational")),
              "< 1.00", lambda v: v < 1.0)
    return out


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    return "\n".join(lines)


def report(data, outdir, charts=True):
    info, cfg = data["machine"], data["config"]
    agg = aggregate(data["records"])
    paper, paper_col = load_paper(info.get("ocaml", "5"))
    L = []
    L.append(f"# Benchmark results ({data['mode']})\n")
    L.append(f"{info['date']} · {info['cpu']} · {info['cores']} cores · OCaml {info['ocaml']} · "
             f"{info['gcc']} · commit {info['git_commit']}{' (dirty)' if info.get('git_dirty') else ''} · "
             f"{cfg['reps']} interleaved repetitions · load average at start {info.get('loadavg_start', '?')}"
             f", at end {info.get('loadavg_end', '?')}\n")
    L.append(f"Command: `{data['command']}`. Times are the median over the repetitions of the "
             "timed section's CPU time; *spread* = (max − min) / median. Ratios are of medians "
             "from this run. Raw values: `results.json`.\n")
    if data.get("failures"):
        L.append("**Failed runs:** " + "; ".join(data["failures"]) + "\n")
    if data.get("check_mismatches"):
        L.append("**Result mismatches between implementations:** "
                 + "; ".join(data["check_mismatches"]) + "\n")

    L.append("## Targets (issue 4)\n")
    rows = [(lbl, f2(v), lim, "–" if ok is None else ("✅" if ok else "❌"))
            for lbl, v, lim, ok in targets(agg)]
    L.append(md_table(["target", "ratio", "wanted", ""], rows) + "\n")

    L.append("## Global-roots benchmarks (paper §5.1)\n")
    L.append(f"×OCaml = time / OCaml (no boxing); the paper's column is the same ratio from its "
             f"{paper_col} table (another machine: compare ratios, not seconds; its "
             "\"Boxroot\" was upstream's library in 2022). Pools: boxroot pools that existed at "
             "once (upstream counts pools only in its statistics build).\n")
    for b in GLOBAL_BENCHES:
        for c in cases_of(agg, b):
            L.append(f"### {b} ({c})\n")
            base = med(agg, b, c, "ocaml")
            gc = med(agg, b, c, "gc")
            up = med(agg, b, c, "upstream")
            p_base = paper.get((b, "OCaml"))
            rows = []
            for i in GLOBAL_IMPLS:
                st = agg.get((b, c, i), {})
                t = st.get("cpu_s")
                if t is None:
                    continue
                p = paper.get((b, PAPER_ROWS.get(i, "")))
                rows.append((LABELS[i], f2(t["median"], 3), f2(t["min"], 3), f2(spread(t), 0) + "%",
                             f2(ratio(t["median"], base)), f2(ratio(t["median"], gc)),
                             f2(ratio(t["median"], up)), f2(ratio(p, p_base)),
                             int(st["minor"]["median"]), int(st["major"]["median"]),
                             "–" if st["pools"]["median"] < 0 else int(st["pools"]["median"])))
            L.append(md_table(["implementation", "median s", "min s", "spread", "×OCaml",
                               "×ref via C", "×upstream", f"paper ×OCaml ({paper_col})",
                               "minor", "major", "pools"], rows) + "\n")

    cs = cases_of(agg, "local_roots")
    if cs:
        L.append("## local_roots (paper §5.2): ns per recursive call\n")
        impls = [i for i in ["ocaml", "local", "boxroot-callee", "upstream-callee",
                             "boxroot-caller", "upstream-caller", "generational"]
                 if any(("local_roots", c, i) in agg for c in cs)]
        rows = []
        for i in impls:
            row = [LABELS.get(i, i)]
            for c in cs:
                st = agg.get(("local_roots", c, i), {}).get("ns_per_call")
                row.append("–" if st is None else f"{st['median']:.1f} ({spread(st):.0f}%)")
            rows.append(row)
        for num, den in (("boxroot-caller", "upstream-caller"), ("boxroot-callee", "upstream-callee"),
                         ("boxroot-caller", "local"), ("boxroot-callee", "local")):
            rows.append([f"*{num} / {den}*"] + [f2(ratio(med(agg, "local_roots", c, num),
                                                            med(agg, "local_roots", c, den)))
                                                  for c in cs])
        L.append(md_table(["variant"] + [f"depth {case_value(c, 'depth')}" for c in cs], rows)
                 + "\n")
        L.append("(median ns, spread in parentheses)\n")

    cs = cases_of(agg, "ops")
    if cs:
        L.append("## Single operations: ns per operation with k roots alive\n")
        L.append("create_delete: create a root and delete the oldest alive one; modify_old / "
                 "modify_young: set the next root (round robin) to an old / a young value. Timed "
                 "in C, loop included; see bench/src/ops.ml.\n")
        for op in ("create_delete", "modify_old", "modify_young"):
            ocs = [c for c in cs if case_value(c, "op") == op]
            if not ocs:
                continue
            L.append(f"### {op}\n")
            rows = []
            for i in OPS_IMPLS:
                if not any(("ops", c, i) in agg for c in ocs):
                    continue
                rows.append([LABELS[i]] + [f2(med(agg, "ops", c, i), 1) for c in ocs])
            rows.append(["*boxroot / upstream*"] + [f2(ratio(med(agg, "ops", c, "boxroot"),
                                                             med(agg, "ops", c, "upstream")))
                                                    for c in ocs])
            L.append(md_table(["implementation"] + [f"k={case_value(c, 'k')}" for c in ocs], rows)
                     + "\n")

    cs = cases_of(agg, "latency")
    if cs:
        L.append("## Latency: duration of one collection with n roots alive\n")
        L.append("Every root holds the same old block, so marking work does not grow with n. "
                 "Median of each collection's wall-clock duration; the n = 0 row has boxroot's "
                 "and upstream's hooks installed but no root, so its difference with OCaml is "
                 "the cost of linking them.\n")
        for metric, unit, scale, title in (
                ("minor_med_ns", "µs", 1e3, "minor collection"),
                ("minor_burst_ns", "µs", 1e3,
                 "minor collection right after creating n more roots (holding an old block)"),
                ("major_med_ns", "ms", 1e6, "major cycle (Gc.major)")):
            L.append(f"### {title}, {unit}\n")
            rows = []
            for c in cs:
                row = [f"{case_value(c, 'n'):,}"]
                for i in LATENCY_IMPLS:
                    v = med(agg, "latency", c, i, metric)
                    row.append("–" if v is None else f"{v / scale:.3f}")
                rows.append(row)
            L.append(md_table(["n roots"] + [LABELS[i] for i in LATENCY_IMPLS], rows) + "\n")
        c0 = [c for c in cs if case_value(c, "n") == 0]
        if c0:
            base = med(agg, "latency", c0[0], "ocaml", "minor_med_ns")
            extra = []
            for i in ("boxroot", "upstream"):
                v = med(agg, "latency", c0[0], i, "minor_med_ns")
                extra.append(f"{LABELS[i]}: {f2(None if v is None or base is None else v - base, 0)} ns")
            L.append("Extra time per minor collection with the library linked and set up but no "
                     "root: " + ", ".join(extra) + ".\n")

    cs = cases_of(agg, "parallel")
    if cs:
        L.append("## Parallel (OCaml 5): millions of roots created and deleted per second\n")
        L.append("prodcons: each domain hands its roots to the next one, which deletes them; "
                 "independent: each domain deletes its own. Wall-clock throughput, median.\n")
        rows = []
        for c in cs:
            row = [case_value(c, "mode"), case_value(c, "domains")]
            for i in PARALLEL_IMPLS:
                v = med(agg, "parallel", c, i)
                row.append("–" if v is None else f"{v / 1e6:.1f}")
            rows.append(row)
        L.append(md_table(["mode", "domains"] + [LABELS[i] for i in PARALLEL_IMPLS], rows) + "\n")

    chart_files = make_charts(agg, paper, paper_col, outdir) if charts else []
    if chart_files:
        L.append("## Charts\n")
        L += [f"![{f}]({f})\n" for f in chart_files]
    text = "\n".join(L)
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(outdir, "README-section.md"), "w") as f:
        f.write(readme_section(data, agg, outdir))
    return text


def readme_section(data, agg, outdir):
    info = data["machine"]
    rel = os.path.relpath(outdir, ROOT)
    L = ["## Benchmarks", "",
         "`make bench` (quick) or `make bench-full` (the paper's sizes, 5 interleaved "
         "repetitions) runs the paper's "
         "benchmarks and the ones it could not run (parallel, latency, single operations) for "
         "every way of rooting a value, and writes tables and charts to "
         f"[{rel}/]({rel}/results.md). Result on {info['cpu']} ({info['cores']} cores), "
         f"OCaml {info['ocaml']}, {data['config']['reps']} repetitions "
         "(time / OCaml without boxing, median):", ""]
    rows = []
    for b in GLOBAL_BENCHES:
        for c in cases_of(agg, b):
            base = med(agg, b, c, "ocaml")
            rows.append([b] + [f2(ratio(med(agg, b, c, i), base)) for i in
                               ("gc", "generational", "dll", "boxroot", "upstream")])
    L.append(md_table(["benchmark", "OCaml ref via C", "generational roots", "doubly-linked list",
                       "boxroot", "upstream 0.4"], rows))
    L += ["", f"Details, local roots, latency, parallel runs: [{rel}/results.md]({rel}/results.md).", ""]
    return "\n".join(L)

# ---------------------------------------------------------------- charts


def ensure_matplotlib():
    """Imports matplotlib, installing it in a venv on first use (and then
    running this script again under that venv's python)."""
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        pass
    py = os.path.join(VENV, "bin", "python")
    if os.path.abspath(sys.executable) == os.path.abspath(py):
        return False
    if not os.path.exists(py) or subprocess.run([py, "-c", "import matplotlib"],
                                                capture_output=True).returncode != 0:
        print(f"run.py: installing matplotlib into {VENV} (first use only)", flush=True)
        ok = (subprocess.run([sys.executable, "-m", "venv", VENV]).returncode == 0 and
              subprocess.run([os.path.join(VENV, "bin", "pip"), "install", "-q", "matplotlib"])
              .returncode == 0)
        if not ok:
            print("run.py: could not install matplotlib; no charts", flush=True)
            return False
    os.execv(py, [py] + sys.argv)


CHART_FORMAT = "svg"


def make_charts(agg, paper, paper_col, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    plt.rcParams.update({"font.size": 9, "svg.hashsalt": "boxroot", "svg.fonttype": "none"})
    files = []
    colors = {"ocaml": "#999999", "gc": "#555555", "global": "#d62728", "generational": "#ff7f0e",
              "dll": "#9467bd", "boxroot": "#1f77b4", "upstream": "#2ca02c", "local": "#8c564b",
              "boxroot-callee": "#aec7e8", "boxroot-caller": "#1f77b4",
              "upstream-callee": "#98df8a", "upstream-caller": "#2ca02c"}

    def log_lines(ax, xs, impls, series, xlabel):
        """One line per implementation that has data, on log-log axes."""
        for i in impls:
            ys = series(i)
            if all(y is None for y in ys):
                continue
            ax.plot(xs, ys, marker="o", label=LABELS[i], color=colors[i])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)

    def save(fig, name):
        name = name.replace(".svg", "." + CHART_FORMAT)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, name), dpi=110,
                    metadata={"Date": None} if CHART_FORMAT == "svg" else None)
        plt.close(fig)
        files.append(name)

    # Paper style: one bar per implementation, time normalised to OCaml = 1.
    benches = [(b, c) for b in GLOBAL_BENCHES for c in cases_of(agg, b)]
    if benches:
        fig, axes = plt.subplots(1, len(benches), figsize=(4 * len(benches), 3.6), squeeze=False)
        for ax, (b, c) in zip(axes[0], benches):
            base = med(agg, b, c, "ocaml")
            names, vals, lo, hi, cols, pap = [], [], [], [], [], []
            for i in GLOBAL_IMPLS:
                st = agg.get((b, c, i), {}).get("cpu_s")
                if st is None or not base:
                    continue
                names.append(LABELS[i].replace(" (", "\n("))
                vals.append(st["median"] / base)
                lo.append((st["median"] - st["min"]) / base)
                hi.append((st["max"] - st["median"]) / base)
                cols.append(colors[i])
                p, p0 = paper.get((b, PAPER_ROWS.get(i, ""))), paper.get((b, "OCaml"))
                pap.append(p / p0 if p and p0 else None)
            x = range(len(vals))
            ax.bar(x, vals, color=cols, yerr=[lo, hi], capsize=2)
            px = [k for k, p in enumerate(pap) if p is not None]
            if px:
                ax.scatter(px, [pap[k] for k in px], marker="_", s=300, color="black", zorder=3,
                           label=f"paper ({paper_col})")
                ax.legend(loc="upper left", fontsize=7)
            ax.axhline(1.0, color="black", linewidth=0.5)
            ax.set_xticks(list(x))
            ax.set_xticklabels(names, rotation=60, ha="right", fontsize=7)
            ax.set_title(f"{b} ({c})")
            ax.set_ylabel("time / OCaml (no boxing)")
        save(fig, "global_roots.svg")

    cs = cases_of(agg, "local_roots")
    if cs:
        fig, ax = plt.subplots(figsize=(6, 3.8))
        depths = [case_value(c, "depth") for c in cs]
        for i in ["ocaml", "local", "boxroot-callee", "upstream-callee", "boxroot-caller",
                  "upstream-caller", "generational"]:
            ys = [med(agg, "local_roots", c, i) for c in cs]
            if all(y is None for y in ys):
                continue
            ax.plot(depths, ys, marker="o", label=LABELS.get(i, i), color=colors.get(i),
                    linestyle="--" if "upstream" in i else "-")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("call depth N")
        ax.set_ylabel("ns per recursive call")
        ax.set_title("local_roots")
        ax.legend(fontsize=7)
        save(fig, "local_roots.svg")

    cs = cases_of(agg, "ops")
    if cs:
        ops = ["create_delete", "modify_old", "modify_young"]
        fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
        for ax, op in zip(axes, ops):
            ocs = [c for c in cs if case_value(c, "op") == op]
            ks = [case_value(c, "k") for c in ocs]
            log_lines(ax, ks, OPS_IMPLS, lambda i: [med(agg, "ops", c, i) for c in ocs],
                      "roots alive (k)")
            ax.set_ylabel("ns per operation")
            ax.set_title(op)
        axes[0].legend(fontsize=7)
        save(fig, "ops.svg")

    cs = cases_of(agg, "latency")
    if cs:
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
        ns = [max(case_value(c, "n"), 1) for c in cs]
        for ax, (metric, scale, title) in zip(axes, (("minor_med_ns", 1e3, "minor collection (µs)"),
                                                     ("minor_burst_ns", 1e3,
                                                      "minor after n creations (µs)"),
                                                     ("major_med_ns", 1e6, "major cycle (ms)"))):
            log_lines(ax, ns, LATENCY_IMPLS,
                      lambda i: [None if y is None else y / scale
                                 for y in (med(agg, "latency", c, i, metric) for c in cs)],
                      "roots alive (0 plotted at 1)")
            ax.set_title(title)
        axes[0].legend(fontsize=7)
        save(fig, "latency.svg")

    cs = cases_of(agg, "parallel")
    if cs:
        modes = sorted({case_value(c, "mode") for c in cs}, reverse=True)
        fig, axes = plt.subplots(1, len(modes), figsize=(4.5 * len(modes), 3.6), squeeze=False)
        for ax, mode in zip(axes[0], modes):
            mcs = [c for c in cs if case_value(c, "mode") == mode]
            ds = [case_value(c, "domains") for c in mcs]
            width = 0.8 / len(PARALLEL_IMPLS)
            for k, i in enumerate(PARALLEL_IMPLS):
                ys = [med(agg, "parallel", c, i) for c in mcs]
                ax.bar([d + (k - len(PARALLEL_IMPLS) / 2 + 0.5) * width for d in ds],
                       [0 if y is None else y / 1e6 for y in ys], width, label=LABELS[i],
                       color=colors[i])
            ax.set_xticks(ds)
            ax.set_xlabel("domains")
            ax.set_ylabel("M roots / s")
            ax.set_title(f"parallel: {mode}")
        axes[0][0].legend(fontsize=7)
        save(fig, "parallel.svg")
    return files

# ---------------------------------------------------------------- main


CHECK_KEYS = {"perm_count": "count", "synthetic": "check", "globroots": "check"}


def check_mismatches(records):
    """Implementations of one benchmark must compute the same result."""
    seen, bad = {}, []
    for r in records:
        k = CHECK_KEYS.get(r["bench"])
        if k is None or k not in r:
            continue
        seen.setdefault((r["bench"], r["case"]), {}).setdefault(r[k], set()).add(r["impl"])
    for (b, c), vals in seen.items():
        if len(vals) > 1:
            bad.append(f"{b} {c}: " + ", ".join(f"{sorted(i)}={v}" for v, i in vals.items()))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=MODES, default="quick")
    ap.add_argument("--reps", type=int)
    ap.add_argument("--only", help="comma-separated benchmarks: " + ",".join(ALL_BENCHES))
    ap.add_argument("--impls", help="comma-separated implementations (default: all)")
    ap.add_argument("--build", default=DEFAULT_BUILD)
    ap.add_argument("--out", help="output directory (default bench/results/<mode>)")
    ap.add_argument("--no-charts", action="store_true")
    ap.add_argument("--chart-format", choices=["svg", "png"], default="svg")
    ap.add_argument("--report-only", metavar="RESULTS_JSON")
    a = ap.parse_args()
    charts = not a.no_charts and ensure_matplotlib()
    global CHART_FORMAT
    CHART_FORMAT = a.chart_format

    if a.report_only:
        with open(a.report_only) as f:
            data = json.load(f)
        outdir = a.out or os.path.dirname(os.path.abspath(a.report_only))
        print(report(data, outdir, charts))
        return 0

    cfg = dict(MODES[a.mode])
    if a.reps:
        cfg["reps"] = a.reps
    only = a.only.split(",") if a.only else ALL_BENCHES
    unknown = set(only) - set(ALL_BENCHES)
    if unknown:
        ap.error(f"unknown benchmarks {sorted(unknown)}")
    info = machine_info()
    if info["ocaml"].startswith("4.") and "parallel" in only:
        print("run.py: OCaml 4 has no domains: skipping the parallel benchmark", flush=True)
        only = [b for b in only if b != "parallel"]
    cores = os.cpu_count() or 1
    groups = plan(cfg, only, set(a.impls.split(",")) if a.impls else None, cores)
    if not any(os.path.exists(os.path.join(a.build, j[1], j[2] + ".exe")) for g in groups for j in g):
        print(f"run.py: no benchmark program in {a.build}: build them first (make bench-build)",
              file=sys.stderr)
        return 2
    # OCaml 5 results in results/<mode>, others in results/<mode>-ocaml<x.y>.
    suffix = "" if info["ocaml"].startswith("5.") else "-ocaml" + ".".join(info["ocaml"].split(".")[:2])
    outdir = a.out or os.path.join(HERE, "results", a.mode + suffix)
    os.makedirs(outdir, exist_ok=True)
    total = sum(len(g) for g in groups) * cfg["reps"]
    print(f"run.py: {a.mode}: {len(groups)} benchmark points, {cfg['reps']} repetitions, "
          f"{total} runs; {info['cpu']}, {cores} cores, OCaml {info['ocaml']}", flush=True)
    records, failures = [], []
    t0 = time.time()
    done = 0
    for rep in range(cfg["reps"]):
        for g in groups:
            k = rep % len(g)
            for job in g[k:] + g[:k]:
                done += 1
                bench, lib, _, args = job
                el = time.time() - t0
                tag = f"[{int(el) // 60:02d}:{int(el) % 60:02d}] run {rep + 1}/{cfg['reps']} " \
                      f"({done}/{total}) {bench} {' '.join(args)} [{lib}]"
                recs, err = run_job(a.build, job)
                if err:
                    failures.append(f"{bench} {lib} {' '.join(args)}: {err}")
                    print(f"{tag}: FAILED {err}", flush=True)
                    continue
                for r in recs:
                    r["rep"] = rep
                records += recs
                summary = ", ".join(f"{r['impl']} {r['case']} {fmt_value(bench, r[primary(bench)])}"
                                    for r in recs[:3]) + (" ..." if len(recs) > 3 else "")
                print(f"{tag}: {summary}", flush=True)
    info["loadavg_end"] = sh("cat /proc/loadavg")
    info["elapsed_s"] = round(time.time() - t0, 1)
    data = {"mode": a.mode, "config": cfg, "machine": info, "records": records,
            "failures": failures, "check_mismatches": check_mismatches(records),
            "command": " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])}
    data["aggregates"] = [{"bench": b, "case": c, "impl": i, **m}
                          for (b, c, i), m in sorted(aggregate(records).items())]
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(data, f, separators=(",", ":"))
    runs = os.path.join(HERE, "results", "runs")
    os.makedirs(runs, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    shutil.copy(os.path.join(outdir, "results.json"), os.path.join(runs, f"{stamp}-{a.mode}.json"))
    print(report(data, outdir, charts))
    print(f"run.py: done in {info['elapsed_s']:.0f}s; wrote {os.path.relpath(outdir, ROOT)}/"
          "results.md, results.json, README-section.md and charts", flush=True)
    return 1 if failures or data["check_mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
