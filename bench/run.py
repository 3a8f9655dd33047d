#!/usr/bin/env python3
"""The benchmark driver: runs every benchmark of benchmarks.py for every
implementation, interleaved, several times (harness.py), and writes under
bench/results/<mode>/:

  results.json        every measurement, with the machine and toolchain
  results.md          the tables: medians, spreads, ratios to "OCaml ref via
                      C" and to upstream boxroot, the Boxroot paper's figures
                      beside ours, and the goals of bench/README.md checked
  README-section.md   a short summary to paste into the top-level README
  *.svg               charts (matplotlib, installed on first use in a venv)

A copy of results.json also goes to bench/results/runs/ (one file per
run, not committed). Times are CPU seconds of the timed section
(wall-clock for the parallel and pause benchmarks), measured inside the
program (bench/src/harness.ml).

Usage: run.py [--mode quick|full] [--reps N] [--only b1,b2] [--impls i1,i2]
       run.py --report-only path/to/results.json   (tables/charts again)
"""
import argparse
import collections
import datetime
import json
import os
import re
import shutil
import sys
import time

import harness
from benchmarks import BENCHMARKS, BY_NAME, CHARTS, Context, load_paper
from harness import HERE, ROOT, aggregate, f2, md_table, ratio

DEFAULT_BUILD = os.path.join(HERE, "_build", "ocaml-default", "default", "bench", "build")
JOB_TIMEOUT_S = 1800
# The OCaml of `make bench` without OCAML_VERSION (tools/toolchain.sh).
DEFAULT_OCAML = "5.5"
MODES = {"quick": dict(reps=5), "full": dict(reps=5)}

# ---------------------------------------------------------------- report



def results_suffix(ocaml_version):
    """"" for the default OCaml (5.5, the newest release: make bench
    without OCAML_VERSION), "-ocaml<x.y>" for the others."""
    xy = ".".join(ocaml_version.split(".")[:2])
    return "" if xy == DEFAULT_OCAML else "-ocaml" + xy


def failed_impl(failure):
    """The implementation named in a failure line ("... [impl]: error")."""
    m = re.search(r"\[([\w-]+)\]: ", failure)
    return m.group(1) if m else None


def relative_to_repo(arg):
    """An argument, with the paths inside the repository made relative to
    it (`--build=/abs/path` too), so that results name no machine's paths."""
    key, eq, val = arg.partition("=") if arg.startswith("--") else ("", "", arg)
    if os.path.isabs(val) and os.path.commonpath([val, ROOT]) == ROOT:
        val = os.path.relpath(val, ROOT)
    return key + eq + val

def check_mismatches(records):
    """Implementations of one benchmark must compute the same result."""
    seen, bad = {}, []
    for r in records:
        b = BY_NAME.get(r["bench"])
        k = b.check if b else None
        if k is None or k not in r:
            continue
        seen.setdefault((r["bench"], r["case"]), {}).setdefault(r[k], set()).add(r["impl"])
    for (b, c), vals in seen.items():
        if len(vals) > 1:
            bad.append(f"{b} {c}: " + ", ".join(f"{sorted(i)}={v}" for v, i in vals.items()))
    return bad


def report(data, outdir, charts=True, chart_format="svg"):
    info, cfg = data["machine"], data["config"]
    agg = aggregate(data["records"])
    paper, paper_col = load_paper(info.get("ocaml", "5"))
    ctx = Context(agg, paper, paper_col, info.get("cores"), info.get("ocaml", "?"))
    L = [f"# Benchmark results ({data['mode']})\n"]
    L.append(f"{info['date']} · {info['cpu']} · {info['cores']} cores · OCaml {info['ocaml']} · "
             f"{info['gcc']} · commit {info['git_commit']}{' (dirty)' if info.get('git_dirty') else ''} · "
             f"{cfg['reps']} interleaved repetitions · load average at start {info.get('loadavg_start', '?')}"
             f", at end {info.get('loadavg_end', '?')}\n")
    # Results recorded before commands were stored relative may name a
    # checkout's absolute path.
    command = " ".join(relative_to_repo(arg) for arg in data["command"].split())
    L.append(f"Command: `{command}`. Times are the median over the repetitions of the "
             "timed section's CPU time; *spread* = (max − min) / median. Ratios are of medians "
             "from this run. Raw values: `results.json`.\n")
    if data.get("failures"):
        counts = collections.Counter(data["failures"])
        L.append("**Failed runs** (× repetitions): " + "; ".join(
            f"{f.rstrip(': ')} ×{k}" for f, k in counts.items()) + "\n")
    if data.get("check_mismatches"):
        L.append("**Result mismatches between implementations:** "
                 + "; ".join(data["check_mismatches"]) + "\n")
    for note in data.get("skipped", []):
        L.append(f"**Not run:** {note}\n")

    goals = [row for b in BENCHMARKS for row in b.goals(ctx)]
    if goals:
        L.append("## Goals\n")
        L.append("The goals of bench/README.md (\"Goals\"), checked on the medians of this run; "
                 "*min*: the same ratio of the minimums, and beside the verdict the minimums' "
                 "where it differs (the run cannot tell those apart); *bound*: the measurement "
                 "of this run that limits the value, where one does (bench/README.md says "
                 "why).\n")
        L.append(md_table(["goal", "value", "min", "wanted", "", "bound"], goals) + "\n")

    group = None
    for b in BENCHMARKS:
        cs = ctx.cases(b.name)
        section = b.section(ctx, cs) if cs else []
        if section and b.group and b.group != group:
            L += [b.group[0], b.group[1].format(paper_col=paper_col)]
        group = b.group if section else group
        L += section

    chart_files = []
    if charts:
        c = harness.Charts(outdir, chart_format)
        for b in CHARTS:
            b.chart(ctx, c, None)
        for b in BENCHMARKS:
            cs = ctx.cases(b.name)
            if cs:
                b.chart(ctx, c, cs)
        chart_files = c.files
    if chart_files:
        L.append("## Charts\n")
        L += [f"![{f}]({f})\n" for f in chart_files]
    text = "\n".join(L)
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(outdir, "README-section.md"), "w") as f:
        f.write(readme_section(data, ctx, outdir))
    return text


def readme_section(data, ctx, outdir):
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
    for b in ("perm_count", "synthetic", "globroots"):
        for c in ctx.cases(b):
            base = ctx.med(b, c, "ocaml", "cpu_s")
            rows.append([b] + [f2(ratio(ctx.med(b, c, i, "cpu_s"), base)) for i in
                               ("gc", "generational", "dll", "boxroot", "upstream")])
    L.append(md_table(["benchmark", "OCaml ref via C", "generational roots", "doubly-linked list",
                       "boxroot", "upstream 0.4"], rows))
    L += ["", f"Details, local roots, latency, parallel runs: [{rel}/results.md]({rel}/results.md).", ""]
    return "\n".join(L)

# ---------------------------------------------------------------- main


def main():
    names = [b.name for b in BENCHMARKS]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=MODES, default="quick")
    ap.add_argument("--reps", type=int)
    ap.add_argument("--only", help="comma-separated benchmarks: " + ",".join(names))
    ap.add_argument("--impls", help="comma-separated implementations (default: all)")
    ap.add_argument("--build", default=DEFAULT_BUILD)
    ap.add_argument("--plain-build", help="bench/plain's builds (default: BUILD/../../../plain)")
    ap.add_argument("--out", help="output directory (default bench/results/<mode>)")
    ap.add_argument("--no-charts", action="store_true")
    ap.add_argument("--chart-format", choices=["svg", "png"], default="svg")
    ap.add_argument("--report-only", metavar="RESULTS_JSON")
    a = ap.parse_args()
    charts = not a.no_charts and harness.ensure_matplotlib()

    if a.report_only:
        with open(a.report_only) as f:
            data = json.load(f)
        outdir = a.out or os.path.dirname(os.path.abspath(a.report_only))
        print(report(data, outdir, charts, a.chart_format))
        return 0

    cfg = dict(MODES[a.mode])
    if a.reps:
        cfg["reps"] = a.reps
    only = a.only.split(",") if a.only else names
    unknown = set(only) - set(names)
    if unknown:
        ap.error(f"unknown benchmarks {sorted(unknown)}")
    info = harness.machine_info()
    # Fails now, not after the runs, if the paper's figures are missing.
    load_paper(info["ocaml"])
    skipped = []
    for name in list(only):
        why = BY_NAME[name].needs_ocaml5
        if why and info["ocaml"].startswith("4."):
            skipped.append(f"{name}, which needs OCaml 5: {why}.")
            print(f"run.py: skipping {name} on OCaml {info['ocaml']}: {why}", flush=True)
            only.remove(name)
    impls = set(a.impls.split(",")) if a.impls else None

    def keep(impl):
        return impls is None or impl.split("-")[0] in impls

    cores = os.cpu_count() or 1
    points = []
    for b in BENCHMARKS:
        if b.name in only:
            p = dict(b.modes[a.mode])
            cfg[b.name] = p
            points += [g for g in b.points(p, keep, cores) if (g["jobs"] if isinstance(g, dict) else g)]

    # The programs built as a user would (bench/plain/build.sh, run by
    # make bench-build) sit beside dune's build directory.
    plain_build = a.plain_build or os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(a.build)))), "plain")

    def exe(job):
        base = plain_build if job.get("plain") else a.build
        return os.path.join(base, job["dir"], job["program"] + ".exe")

    if not any(os.path.exists(exe(j)) for g in points for j in (g["jobs"] if isinstance(g, dict) else g)):
        print(f"run.py: no benchmark program in {a.build}: build them first (make bench-build)",
              file=sys.stderr)
        return 2
    # The default OCaml's (5.5) results in results/<mode>, others' in
    # results/<mode>-ocaml<x.y>.
    suffix = results_suffix(info["ocaml"])
    outdir = a.out or os.path.join(HERE, "results", a.mode + suffix)
    os.makedirs(outdir, exist_ok=True)
    njobs = sum(len(g["jobs"]) * min(cfg["reps"], g["reps"]) if isinstance(g, dict)
                else len(g) * cfg["reps"] for g in points)
    print(f"run.py: {a.mode}: {len(points)} benchmark points, {cfg['reps']} repetitions, "
          f"{njobs} runs; {info['cpu']}, {cores} cores, OCaml {info['ocaml']}", flush=True)
    t0 = time.time()
    records, failures = harness.interleave(
        points, cfg["reps"],
        run=lambda job, rep: harness.run_program(exe(job), job["args"], job["env"], JOB_TIMEOUT_S),
        describe=lambda job: f"{job['bench']} {' '.join(job['args'])} [{job['dir']}]",
        summary=lambda job, recs: ", ".join(BY_NAME[job["bench"]].progress(r) for r in recs[:3])
        + (" ..." if len(recs) > 3 else ""),
        log=lambda s: print(s, flush=True))
    info["loadavg_end"] = harness.sh("cat /proc/loadavg")
    info["elapsed_s"] = round(time.time() - t0, 1)
    data = {"mode": a.mode, "config": cfg, "machine": info, "records": records,
            "failures": failures, "check_mismatches": check_mismatches(records),
            "skipped": skipped,
            "command": " ".join(relative_to_repo(arg) for arg in sys.argv)}
    data["aggregates"] = [{"bench": b, "case": c, "impl": i, **m}
                          for (b, c, i), m in sorted(aggregate(records).items())]
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(data, f, separators=(",", ":"))
    runs = os.path.join(HERE, "results", "runs")
    os.makedirs(runs, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    shutil.copy(os.path.join(outdir, "results.json"), os.path.join(runs, f"{stamp}-{a.mode}.json"))
    print(report(data, outdir, charts, a.chart_format))
    print(f"run.py: done in {info['elapsed_s']:.0f}s; wrote {os.path.relpath(outdir, ROOT)}/"
          "results.md, results.json, README-section.md and charts", flush=True)
    # A crash of the competitor (upstream boxroot, fetched at run time; 0.4
    # is untested past OCaml 5.3) is reported, not fatal; any other failure
    # is a bug of ours, in the library or in the benchmarks.
    ours = [f for f in failures if failed_impl(f) != "upstream"]
    return 1 if ours or data["check_mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
