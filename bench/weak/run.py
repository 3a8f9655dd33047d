#!/usr/bin/env python3
"""Runs weak_bench.exe (interleaved repetitions) and writes a Markdown
report with medians and ratios: weak roots against strong boxroots and
against a boxroot or a global root holding a one-element Weak.t.

  python3 bench/weak/run.py EXE [--reps N] [--n N] [--out DIR] [--parts ops,pause,table]

The table part: a C table of N weak entries, 1% of whose values die per
major cycle, cleaned by draining the notices of notifying roots
(boxroot_weak_next_emptied) or by polling every entry (plain weak roots).
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
    ap.add_argument("--parts", default="ops,pause,table",
                    help="which measurements (comma-separated), default all")
    ap.add_argument("--table-cycles", type=int, default=20)
    a = ap.parse_args()
    parts = set(a.parts.split(","))
    load_before = open("/proc/loadavg").read().split()[:3]
    if a.out is None:
        xy = ".".join(machine_info()["ocaml"].split(".")[:2])
        a.out = "bench/results/weak" + ("" if xy == "5.5" else "-ocaml" + xy)
    rates = (10, 1)  # per mille of the entries dying per cycle: 1% (the case asked for), 0.1%
    ops, pause = {}, {"none": [], "weak": []}
    table = {(mode, r): [] for mode in ("drain", "poll") for r in rates}
    for rep in range(a.reps):
        if "ops" in parts:
            for line in run(a.exe, "ops", 1):
                ops.setdefault((line["impl"], line["op"]), []).append(float(line["ns"]))
        if "pause" in parts:
            for mode, key in (("pause-none", "none"), ("pause", "weak")):
                pause[key] += run(a.exe, mode, a.n)
        if "table" in parts:
            # Interleaved, in alternating order from one repetition to the next.
            for r in rates:
                for mode in (("drain", "poll") if rep % 2 == 0 else ("poll", "drain")):
                    table[(mode, r)] += run(a.exe, "table", mode, a.n, a.table_cycles, r)
        print(f"repetition {rep + 1}/{a.reps} done", file=sys.stderr)
    load_after = open("/proc/loadavg").read().split()[:3]
    med = {k: statistics.median(v) for k, v in ops.items()}
    def pm(key, field):
        return statistics.median(float(l[field]) for l in pause[key])
    lines = []
    p = lines.append
    p("# Weak roots: measurements\n")
    cmd = " ".join([os.path.relpath(sys.argv[0]), os.path.relpath(a.exe)] + sys.argv[2:])
    m = machine_info()
    p(f"`{cmd}` (`make bench-weak`) on {m['cpu']} ({m['cores']} cores), OCaml {m['ocaml']}, "
      f"{m['gcc']}, commit {m['git_commit']}{' (dirty)' if m['git_dirty'] else ''}, "
      f"{datetime.date.today()}, {a.reps} interleaved repetitions, medians. "
      f"Load average (1, 5, 15 min) before: {' '.join(load_before)}, after: {' '.join(load_after)} "
      f"(a shared machine: times vary 2-3x with the load).\n")
    if "ops" in parts:
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
    if "pause" in parts:
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
    if "table" in parts:
        p(f"\n## A table of {a.n} weak entries, 1% of them dying per major cycle (and 0.1%)\n")
        p("| cleaning the table after each major cycle | dying per cycle | cleaning, ms per cycle | Gc.major, ms | entries removed per cycle |")
        p("|---|---|---|---|---|")
        def tm(mode, r, field):
            return statistics.median(float(l[field]) for l in table[(mode, r)])
        for r in rates:
            for mode, label in (("drain", "drain the notices (notifying roots, `boxroot_weak_next_emptied`)"),
                                ("poll", "poll every entry (plain weak roots, `boxroot_weak_get`)")):
                p(f"| {label} | {r / 10:g}% | {tm(mode, r, 'clean_median_ms'):.3f} | "
                  f"{tm(mode, r, 'major_median_ms'):.2f} | {tm(mode, r, 'removed_per_cycle'):.0f} |")
        p("")
        for r in rates:
            p(f"Polling / draining, {r / 10:g}% dying: "
              f"{tm('poll', r, 'clean_median_ms') / tm('drain', r, 'clean_median_ms'):.2f}x (cleaning time).")
        p(f"\nEach run: {a.table_cycles} cycles after 3 of warm-up, the median cycle; "
          f"the table's values live in an OCaml array, a share of whose cells get a new value before each "
          f"`Gc.major`; the entries whose value died are deleted, then given a root to the new value "
          f"(not timed). The table is a C array of roots, created in order: polling reads it and the "
          f"roots' slots sequentially, draining reads a slot, its word and the table entry per notice. "
          f"Polling reads values with `boxroot_weak_get`, the only read there is: during marking it "
          f"darkens them (weak.c, W4), so a poll while marking is under way (always, after `Gc.major`, "
          f"on OCaml 5.1-5.4) keeps every polled value alive and removes nothing.\n")
    os.makedirs(a.out, exist_ok=True)
    name = "results.md" if parts == {"ops", "pause", "table"} else "results-" + "-".join(sorted(parts)) + ".md"
    with open(os.path.join(a.out, name), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))

if __name__ == "__main__":
    main()
