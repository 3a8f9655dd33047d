#!/usr/bin/env python3
"""Prints the timing tables of the top-level README's "Benchmarks"
section from the results of `make bench-full` (or `make bench`) on the
default OCaml, 5.5, and of `OCAML_VERSION=5.3 make bench` and
`OCAML_VERSION=4.14 make bench`:

  bench/tools/readme_tables.py [RESULTS_DIR...]

RESULTS_DIR: directories holding a results.json written by bench/run.py
(default: bench/results/full, or bench/results/quick if it has none,
then bench/results/quick-ocaml5.3 and bench/results/quick-ocaml4.14; a
missing one is left out, saying so). Prints, per OCaml version, where the
numbers come from (command, commit, date, load), then the tables: the
plain C loops against upstream 0.4 in both builds (bench ops, built by
dune; bench/plain, built as a user without dune builds it), and every
benchmark against upstream. Paste them over the README's, which says
which run they come from. The instruction counts come from
bench/tools/per_op.py (results/per-op/results.md).

  bench/tools/readme_tables.py --weak

prints instead the README's table of weak roots ("Weak roots") and the
numbers of its "Weak roots that report their emptying", from the
reports of `make bench-weak` (bench/results/weak/results.md, and
weak-ocaml5.3/ for OCaml 5.3)."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
from harness import aggregate, md_table  # noqa: E402


def default_dirs():
    r = os.path.join(BENCH, "results")
    full = os.path.join(r, "full")
    first = full if os.path.exists(os.path.join(full, "results.json")) else os.path.join(r, "quick")
    return [first, os.path.join(r, "quick-ocaml5.3"), os.path.join(r, "quick-ocaml4.14")]


def load(d):
    with open(os.path.join(d, "results.json")) as f:
        data = json.load(f)
    return data, aggregate(data["records"])


def pair(agg, bench, case, metric, num="boxroot", den="upstream"):
    """The statistics of num and den, or None if either is missing or a
    ratio to den would divide by 0."""
    st = [agg.get((bench, case, i), {}).get(metric) for i in (num, den)]
    if None in st or st[1]["median"] == 0 or st[1]["min"] == 0:
        return None
    return st


def cell(agg, bench, case, metric):
    """'boxroot / upstream (ratio; ratio of minimums)' of medians, or '–'."""
    st = pair(agg, bench, case, metric)
    if st is None:
        return "–"
    bx, up = st
    return (f"{bx['median']:.2f} / {up['median']:.2f} (**{bx['median'] / up['median']:.2f}**; "
            f"min {bx['min'] / up['min']:.2f})")


def ratio_cell(agg, bench, case, metric, num="boxroot", den="upstream"):
    """'ratio of medians (min ratio of minimums)', or '–'."""
    st = pair(agg, bench, case, metric, num, den)
    if st is None:
        return "–"
    a, b = st
    return f"{a['median'] / b['median']:.2f} (min {a['min'] / b['min']:.2f})"


LOOPS = [
    ("create a root, delete it at once", [("plain", "op=create_delete", "ns_per_op"),
                                          ("ops", "op=loop_create_delete", "ns_per_op")]),
    ("10,000 created, then deleted (per pair)", [("plain", "op=batches", "ns_per_op"),
                                                 ("ops", "op=loop_batches", "ns_per_op")]),
    ("  the creations", [("plain", "op=batches", "create_ns")]),
    ("  the deletions", [("plain", "op=batches", "delete_ns")]),
    ("one root modified, two old values", [("plain", "op=modify", "ns_per_op"),
                                           ("ops", "op=loop_modify", "ns_per_op")]),
    ("the same, a long-lived root", [("plain", "op=modify_old", "ns_per_op")]),
]


def md_rows(path, heading):
    """The rows of the first table under `heading` in the Markdown file
    `path`, as lists of cells (header and rule left out)."""
    with open(path) as f:
        lines = f.read().split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("## ") and heading in l)
    rows = []
    for l in lines[start + 1:]:
        if l.startswith("## "):
            break
        if l.startswith("|"):
            rows.append([c.strip() for c in l.strip().strip("|").split("|")])
    return rows[2:]


def sig3(x):
    """Three significant digits, as the README writes times."""
    x = float(x)
    return f"{x:#.3g}" if x < 100 else f"{x:.0f}"


def weak_tables():
    r = os.path.join(BENCH, "results")
    src = os.path.join(r, "weak", "results.md")
    with open(src) as f:
        header = f.read().split("\n")[2]
    out = [f"From {os.path.relpath(src, ROOT)}: {header}", ""]
    ops = {row[0]: row for row in md_rows(src, "Single operations")}
    rows = []
    for label, key in (("create+delete, from OCaml", "create+delete"), ("get, from OCaml", "get"),
                       ("get, loop timed in C", "get, loop timed in C")):
        rows.append([label] + [sig3(c) for c in ops[key][1:5]])
    out.append(md_table(["ns per operation", "strong boxroot", "weak root",
                         "boxroot + one-element `Weak.t`", "global root + `Weak.t`"], rows))
    for d in ("weak", "weak-ocaml5.3"):
        path = os.path.join(r, d, "results.md")
        if not os.path.exists(path):
            continue
        out.append("")
        out.append(f"{os.path.relpath(path, ROOT)}, notices drained against entries polled "
                   "(cleaning, ms per cycle; entries removed per cycle):")
        for row in md_rows(path, "A table of"):
            out.append(f"- {row[0].split(' (')[0]}, {row[1]} dying: {row[2]} ms, {row[4]} removed")
    print("\n".join(out))
    return 0


def main():
    if sys.argv[1:] == ["--weak"]:
        return weak_tables()
    dirs = sys.argv[1:] or default_dirs()
    runs = []
    for d in dirs:
        if not os.path.exists(os.path.join(d, "results.json")):
            print(f"(no results in {os.path.relpath(d, ROOT)}: left out)", file=sys.stderr)
            continue
        data, agg = load(d)
        runs.append((os.path.relpath(d, ROOT), data, agg))
    if not runs:
        return 2
    versions = [data["machine"]["ocaml"] for _, data, _ in runs]
    out = []
    for d, data, _ in runs:
        m = data["machine"]
        out.append(f"- OCaml {m['ocaml']}: [{d}/]({d}/results.md), `{data['command']}`, "
                   f"{data['config']['reps']} repetitions, commit {m['git_commit']}"
                   f"{' (dirty)' if m.get('git_dirty') else ''}, {m['date'][:10]}, load average "
                   f"{' '.join(m.get('loadavg_start', '?').split()[:3])} at the start")
    out.append("")
    out.append("Plain C loops, ns per operation, boxroot / upstream 0.4 (**time ratio** of the "
               "medians; ratio of the minimums), medians; "
               "\"user build\": bench/plain, stubs and library compiled together by "
               "`ocamlopt -ccopt -O2`; \"dune\": bench ops' loops, dune's release profile:")
    out.append("")
    rows = []
    for label, sources in LOOPS:
        for bench, case, metric in sources:
            kind = "user build" if bench == "plain" else "dune"
            rows.append([f"{label} ({kind})"] + [cell(agg, bench, case, metric) for _, _, agg in runs])
    out.append(md_table(["loop"] + [f"OCaml {v}" for v in versions], rows))
    out.append("")
    out.append("Every benchmark, time of boxroot / upstream 0.4 (ratio of the medians; of the "
               "minimums in parentheses; single operations with 1 and 10^6 roots alive; "
               "local_roots at depths 1 and 1000):")
    out.append("")
    rows = []
    for b in ("perm_count", "synthetic", "globroots"):
        rows.append([b] + [next((ratio_cell(agg, b, c, "cpu_s") for (bb, c, i) in agg
                                 if bb == b and i == "boxroot"), "–") for _, _, agg in runs])
    for op in ("create_delete", "modify_old", "modify_young"):
        for k in (1, 1_000_000):
            rows.append([f"ops {op}, k={k:,}"] + [ratio_cell(agg, "ops", f"op={op},k={k}", "ns_per_op")
                                                   for _, _, agg in runs])
    for disc in ("caller", "callee"):
        for depth in (1, 1000):
            rows.append([f"local_roots {disc}-roots, depth {depth}"]
                        + [ratio_cell(agg, "local_roots", f"depth={depth}", "ns_per_call",
                                      f"boxroot-{disc}", f"upstream-{disc}") for _, _, agg in runs])
    out.append(md_table(["benchmark"] + [f"OCaml {v}" for v in versions], rows))
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
