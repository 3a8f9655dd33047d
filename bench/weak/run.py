#!/usr/bin/env python3
"""Runs weak_bench.exe (interleaved repetitions) and writes a Markdown
report with medians and ratios: weak roots against strong boxroots and
against a boxroot or a global root holding a one-element Weak.t.

  python3 bench/weak/run.py EXE [--reps N] [--n N] [--out DIR]
"""
import argparse, os, platform, statistics, subprocess, sys, datetime


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import machine_info  # noqa: E402

def run(exe, *args):
    out = subprocess.run([exe, *map(str, args)], check=True, capture_output=True, text=True).stdout
    return [dict(kv.split("=", 1) for kv in line.split()[1:]) for line in out.splitlines() if "=" in line]

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exe")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--out", help="default: bench/results/weak, or weak-ocaml<x.y> on an OCaml "
                    "other than the default 5.5")
    a = ap.parse_args()
    if a.out is None:
        xy = ".".join(machine_info()["ocaml"].split(".")[:2])
        a.out = "bench/results/weak" + ("" if xy == "5.5" else "-ocaml" + xy)
    ops, pause = {}, {"none": [], "weak": []}
    for rep in range(a.reps):
        for line in run(a.exe, "ops", 1):
            ops.setdefault((line["impl"], line["op"]), []).append(float(line["ns"]))
        for mode, key in (("pause-none", "none"), ("pause", "weak")):
            pause[key] += run(a.exe, mode, a.n)
        print(f"repetition {rep + 1}/{a.reps} done", file=sys.stderr)
    med = {k: statistics.median(v) for k, v in ops.items()}
    def pm(key, field):
        return statistics.median(float(l[field]) for l in pause[key])
    lines = []
    p = lines.append
    p("# Weak roots: measurements\n")
    cmd = " ".join([os.path.relpath(sys.argv[0]), os.path.relpath(a.exe)] + sys.argv[2:])
    m = machine_info()
    p(f"`{cmd}` (`make bench-weak`) on {m['cpu']} ({m['cores']} cores), OCaml {m['ocaml']}, "
      f"{datetime.date.today()}, {a.reps} interleaved repetitions, medians.\n")
    p("## Single operations (ns per operation)\n")
    p("| operation | boxroot (strong) | weak | boxroot + Weak.t | global root + Weak.t | weak / strong | workaround / weak |")
    p("|---|---|---|---|---|---|---|")
    for op, label in (("create+delete", "create+delete"), ("get", "get"),
                      ("get-c", "get, loop timed in C")):
        s, w = med[("boxroot", op)], med[("weak", op)]
        wb, wg = med[("boxroot+Weak.t", op)], med[("global+Weak.t", op)]
        p(f"| {label} | {s:.2f} | {w:.2f} | {wb:.2f} | {wg:.2f} | {w / s:.2f}x | {wb / w:.1f}x (boxroot), {wg / w:.1f}x (global) |")
    for op, label in (("get-marking", "get, during marking"),
                      ("get-c-marking", "get, loop timed in C, during marking")):
        s, w = med[("boxroot", op)], med[("weak", op)]
        p(f"| {label} | {s:.2f} | {w:.2f} | | | {w / s:.2f}x | |")
    p("")
    p("create+delete and get: loops in OCaml calling `[@@noalloc]` externals, "
      "so each operation includes one OCaml-to-C call; the workaround's get is "
      "`Weak.get` in OCaml. Loop timed in C: what C code pays per read (the "
      "workaround calls `caml_weak_get`, the primitive behind `Weak.get`, which "
      "allocates the option).\n")
    p(f"## Major cycles with {a.n} weak roots (values kept alive by an OCaml array) against none\n")
    p("| | no weak root | weak roots | ratio |")
    p("|---|---|---|---|")
    for field, label in (("mark_roots_median_ms", "root-marking pause (EV_MAJOR_MARK_ROOTS), ms"),
                         ("cycle_stw_median_ms", "cycle-ending stop-the-world section (EV_MAJOR_GC_CYCLE_DOMAINS), ms"),
                         ("major_median_ms", "Gc.major, ms"),
                         ("clear_slices_ms_per_cycle", "weak clearing in major slices, ms per cycle"),
                         ("clear_stw_ms_per_cycle", "weak clearing stop-the-world, ms per cycle")):
        n0, n1 = pm("none", field), pm("weak", field)
        ratio = f"{n1 / n0:.2f}x" if n0 > 0 else "-"
        p(f"| {label} | {n0:.4f} | {n1:.4f} | {ratio} |")
    per_root = (pm("weak", "major_median_ms") - pm("none", "major_median_ms")) * 1e6 / a.n
    p(f"\nMajor-cycle cost per weak root: {per_root:.2f} ns (Gc.major, difference of medians / {a.n}); "
      f"clearing alone: {pm('weak', 'clear_slices_ms_per_cycle') * 1e6 / a.n:.2f} ns.")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))

if __name__ == "__main__":
    main()
