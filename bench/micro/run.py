#!/usr/bin/env python3
"""Runs roots_bench variants interleaved and prints min and median.

  run.py hugepages [REPS] [ARGS...]   huge pages off vs on (release build)
  run.py debug [REPS] [ARGS...]       release build vs debug build

ARGS are passed to roots_bench.exe (ROOTS ROUNDS OPS_PER_ROUND
MAJOR_EVERY). Variants alternate within each repetition, so that the
noise of a shared machine hits them alike. Run from the repository root
after `dune build` (the Makefile targets do both). Interleaving and
summaries come from bench/harness.py."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402

BUILD = "_build/default/bench/micro"
RELEASE = f"{BUILD}/roots_bench.exe"
DEBUG = f"{BUILD}/debug/roots_bench.exe"

def variants(kind):
    if kind == "hugepages":
        return [("huge pages off", RELEASE, {"BOXROOT_HUGE_PAGES": "0"}),
                ("huge pages on", RELEASE, {"BOXROOT_HUGE_PAGES": "1"})]
    if kind == "debug":
        return [("release", RELEASE, {}), ("debug", DEBUG, {})]
    sys.exit(f"unknown experiment {kind!r} (hugepages or debug)")

def run(job, rep):
    name, exe, env, args = job
    out = subprocess.run([exe, *args], env={**os.environ, **env}, check=True,
                         capture_output=True, text=True).stdout
    return [{"variant": name, **{k: float(v) for k, v in (f.split("=") for f in out.split())}}], None

def main():
    kind = sys.argv[1] if len(sys.argv) > 1 else "hugepages"
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    args = sys.argv[3:]
    vs = variants(kind)
    records, _ = harness.interleave([[(name, exe, env, args) for name, exe, env in vs]], reps, run,
                                    describe=lambda job: job[0], log=lambda s: None)
    keys = ["setup_ms", "rounds_ms", "rounds_cpu_ms", "minor_scan_ms", "major_scan_ms"]
    print(f"roots_bench {' '.join(args) or '(defaults)'}: {reps} interleaved runs, min / median")
    print(f"{'variant':<16}" + "".join(f"{k:>22}" for k in keys) + "   anon_huge_kb")
    for name, _, _ in vs:
        rs = [r for r in records if r["variant"] == name]
        sums = {k: harness.summarise([r[k] for r in rs]) for k in keys + ["anon_huge_kb"]}
        cells = "".join(f"{sums[k]['min']:>10.1f} / {sums[k]['median']:>9.1f}" for k in keys)
        print(f"{name:<16}{cells}   {int(sums['anon_huge_kb']['max'])}")

if __name__ == "__main__":
    main()
