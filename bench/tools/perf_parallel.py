#!/usr/bin/env python3
"""Where parallel.ml's time goes: CPU nanoseconds per root, by category.

  bench/tools/perf_parallel.py [--reps N] [--roots N] [--domains 1,2]
                               [--mode prodcons|independent] [NAME=EXE ...]

Runs each executable (default: the boxroot, upstream and ocaml builds of
`make bench-build`) with each number of domains under `perf record -e
cpu-clock` in turn, --reps times, and adds the samples of all runs by
symbol. Sampled CPU time
counts what each implementation spends, whatever else runs on a shared
machine, which wall-clock throughput does not (bench/README.md, "Scaling
to many domains"). Categories:
  - rooting, inline: the implementation's create/get/delete stubs
    (bench_ref_*), with the fast paths inlined into them;
  - rooting, out of line: the library's own functions;
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

# Symbols of the rooting libraries' out-of-line code: ours are prefixed
# boxroot__ (or static in its files); upstream's as shipped in 0.4.
LIBRARY = re.compile(r"^(boxroot_|boxroot__|bxr_|publish$|start_run$|delete_purely_remote_slow$|"
                     r"free_slot_atomic|pool_|gc_pool|scan_pool|try_demote|reclaim|"
                     r"get_available_pool|validate_pool|alloc_)")
BENCHMARK = re.compile(r"^(Dune\.exe\.|Stdlib\.|caml_modify$|caml_uniform_array_make$|caml_make_vect$|"
                       r"caml_ml_mutex_|caml_ml_condition_)")
CATEGORIES = ["rooting, inline", "rooting, out of line", "benchmark", "runtime, libc", "kernel"]


def category(sym, kernel):
    if kernel:
        return "kernel"
    if sym.startswith("bench_ref_"):
        return "rooting, inline"
    if sym == "pool_sweep":  # the runtime's shared heap, not a rooting pool
        return "runtime, libc"
    if LIBRARY.match(sym):
        return "rooting, out of line"
    if BENCHMARK.match(sym):
        return "benchmark"
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
    ap.add_argument("impls", nargs="*", help="NAME=EXE (default: boxroot, upstream, ocaml)")
    a = ap.parse_args()
    impls = [i.split("=", 1) for i in a.impls] or \
        [(n, os.path.join(BUILD, n, "parallel.exe")) for n in ("boxroot", "upstream", "ocaml")]
    impls = [(n, e) for n, e in impls if os.access(e, os.X_OK)]
    if not impls:
        sys.exit("perf_parallel: no executable (run `make bench-build` first)")
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
                    by_cat[label(name, d)][category(sym, kernel)] += n
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
