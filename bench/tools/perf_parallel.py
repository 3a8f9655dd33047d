#!/usr/bin/env python3
"""Where parallel.ml's time goes: CPU nanoseconds per root, by category.

  bench/tools/perf_parallel.py [--reps N] [--roots N] [--domains 1,2]
                               [--mode prodcons|independent] [NAME=EXE ...]

Runs each executable (default: the boxroot, upstream and ocaml builds of
`make bench-build`) with each number of domains under `perf record -e
cpu-clock` in turn, --reps times, and adds the samples of all runs by
symbol. Sampled CPU time counts what each implementation spends,
whatever else runs on a shared machine, which wall-clock throughput does
not (bench/README.md, "Scaling to many domains"). Categories:
  - rooting, inline: the implementation's create/get/delete stubs
    (bench_ref_*), with the fast paths inlined into them;
  - rooting, out of line: the code that the executable has and the
    no-rooting build (--reference) lacks, i.e. the rooting library;
  - benchmark: the OCaml code of parallel.ml, its arrays and channel;
  - runtime: the OCaml runtime (GC, stop-the-world rendezvous) and libc;
  - kernel: futex waits and wake-ups of the channel, page faults.
Then the heaviest symbols of each executable.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(HERE, "..", "_build", "ocaml-default", "default", "bench", "build")
FREQ = 5000

BENCHMARK = re.compile(r"^(Dune\.exe\.|Stdlib\.|caml_modify$|caml_uniform_array_make$|caml_make_vect$|"
                       r"caml_ml_mutex_|caml_ml_condition_)")
CATEGORIES = ["rooting, inline", "rooting, out of line", "benchmark", "runtime, libc", "kernel"]


def code_symbols(exe):
    out = subprocess.run(["nm", "--defined-only", exe], check=True, capture_output=True, text=True).stdout
    return {f[2] for f in (line.split() for line in out.splitlines()) if len(f) == 3 and f[1] in "tT"}


def category(sym, kernel, rooting):
    """`rooting`: the code symbols that the executable has and the
    no-rooting build lacks, i.e. the rooting library and its stubs."""
    if kernel:
        return "kernel"
    if BENCHMARK.match(sym):  # before `rooting`: OCaml code is named per build
        return "benchmark"
    if sym.startswith("bench_ref_"):
        return "rooting, inline"
    if sym in rooting:
        return "rooting, out of line"
    return "runtime, libc"


def profile(exe, args, data):
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(FREQ), "-o", data, exe] + args,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "sym",
                          "-F", "sample,sym", "--stdio"], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)\s+\[(.)\]\s+(\S+)", line)
        if m:
            yield m.group(3), m.group(2) == "k", int(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--roots", type=int, default=30_000_000)
    ap.add_argument("--domains", default="1,2", help="comma-separated")
    ap.add_argument("--mode", default="prodcons")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--reference", default=os.path.join(BUILD, "ocaml", "parallel.exe"),
                    help="the no-rooting build, whose code symbols are not rooting")
    ap.add_argument("impls", nargs="*", help="NAME=EXE (default: boxroot, upstream, ocaml)")
    a = ap.parse_args()
    impls = [i.split("=", 1) for i in a.impls] or \
        [(n, os.path.join(BUILD, n, "parallel.exe")) for n in ("boxroot", "upstream", "ocaml")]
    impls = [(n, e) for n, e in impls if os.access(e, os.X_OK)]
    if not impls:
        sys.exit("perf_parallel: no executable (run `make bench-build` first)")
    if not os.access(a.reference, os.X_OK):
        sys.exit(f"perf_parallel: no reference executable {a.reference} (run `make bench-build`)")
    reference = code_symbols(a.reference)
    rooting = {n: code_symbols(e) - reference for n, e in impls}
    doms = [int(d) for d in a.domains.split(",")]
    cols = [(n, e, d) for d in doms for n, e in impls]
    label = lambda n, d: f"{n}, {d}d"
    by_cat = {label(n, d): collections.Counter() for n, _, d in cols}
    by_sym = {label(n, d): collections.Counter() for n, _, d in cols}
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        for r in range(a.reps):
            for name, exe, d in cols:  # interleaved
                args = [f"mode={a.mode}", f"domains={d}", f"roots={a.roots}"]
                for sym, kernel, n in profile(exe, args, data):
                    by_cat[label(name, d)][category(sym, kernel, rooting[name])] += n
                    by_sym[label(name, d)][sym] += n
            print(f"perf_parallel: repetition {r + 1}/{a.reps} done", file=sys.stderr, flush=True)
    ns = lambda samples: samples / FREQ / a.reps / a.roots * 1e9
    print(f"CPU ns per root: parallel.exe mode={a.mode} roots={a.roots}, perf record -e cpu-clock "
          f"-F {FREQ}, {a.reps} interleaved runs each\n")
    print("| category | " + " | ".join(by_cat) + " |")
    print("|---|" + "---:|" * len(by_cat))
    for c in CATEGORIES + ["total"]:
        vals = [ns(sum(v.values()) if c == "total" else v[c]) for v in by_cat.values()]
        print(f"| {c} | " + " | ".join(f"{v:.2f}" for v in vals) + " |")
    for col, syms in by_sym.items():
        top = ", ".join(f"{s} {ns(v):.2f}" for s, v in syms.most_common(a.top))
        print(f"\n{col}: {top}")

if __name__ == "__main__":
    main()
