"""The benchmarks of `make bench`, one record each: its programs and their
arguments per mode, the implementations it compares, the goals its
results are checked against (documented in bench/README.md, "Goals"), its
section of results.md and its chart. bench/run.py runs them (through
harness.py) and assembles the report.

To add a benchmark: write its program in src/ (printing RESULT lines,
see src/harness.ml), list it for its implementations in gen_dune.py (and
run it), then add a subclass of Benchmark below to BENCHMARKS.
"""
import csv
import os

from harness import (HERE, Charts, case_sort_key, case_value, check_row, f2, md_table, ratio,
                     spread)

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
COLORS = {"ocaml": "#999999", "gc": "#555555", "global": "#d62728", "generational": "#ff7f0e",
          "dll": "#9467bd", "boxroot": "#1f77b4", "upstream": "#2ca02c", "local": "#8c564b",
          "boxroot-callee": "#aec7e8", "boxroot-caller": "#1f77b4",
          "upstream-callee": "#98df8a", "upstream-caller": "#2ca02c"}

# ---------------------------------------------------------------- the paper's figures

PAPER_CSV = os.environ.get("BOXROOT_PAPER_FIGURES", os.path.join(HERE, "paper_figures.csv"))
# Rows of the paper's tables for our implementations. The paper's
# "Boxroot" was upstream's library at the time (2022).
PAPER_ROWS = {"ocaml": "OCaml", "gc": "OCaml ref", "generational": "Generational roots",
              "dll": "Doubly-linked list", "boxroot": "Boxroot", "upstream": "Boxroot"}


def load_paper(ocaml_version):
    """The Boxroot paper's §5 timings for this OCaml version's column, as
    {(benchmark, row): seconds}. Fails if the file is missing or wrong:
    a report without the paper's column would pass unnoticed."""
    col = "ocaml_4.14" if ocaml_version.startswith("4.") else "ocaml_5.0"
    paper = {}
    try:
        with open(PAPER_CSV) as f:
            rows = [line for line in f if not line.startswith("#")]
        for row in csv.DictReader(rows):
            paper[(row["benchmark"], row["implementation"])] = float(row[col])
    except (OSError, KeyError, ValueError) as e:
        raise SystemExit(f"cannot read the paper's figures from {PAPER_CSV}: {e!r}")
    if not paper:
        raise SystemExit(f"no figures in {PAPER_CSV}")
    return paper, col.replace("ocaml_", "OCaml ")

# ---------------------------------------------------------------- the record


class Context:
    """What a section or chart reads: this run's aggregates, the paper's
    figures, and the machine."""

    def __init__(self, agg, paper, paper_col, cores, ocaml="?"):
        self.agg, self.paper, self.paper_col, self.cores = agg, paper, paper_col, cores
        self.ocaml = ocaml

    def med(self, bench, case, impl, metric):
        m = self.stat(bench, case, impl, metric)
        return None if m is None else m["median"]

    def min(self, bench, case, impl, metric):
        m = self.stat(bench, case, impl, metric)
        return None if m is None else m["min"]

    def ratios(self, bench, case, num, den, metric):
        """(ratio of the medians, ratio of the minimums) of num / den."""
        return (ratio(self.med(bench, case, num, metric), self.med(bench, case, den, metric)),
                ratio(self.min(bench, case, num, metric), self.min(bench, case, den, metric)))

    def stat(self, bench, case, impl, metric):
        return self.agg.get((bench, case, impl), {}).get(metric)

    def cases(self, bench):
        return sorted({c for (b, c, _) in self.agg if b == bench}, key=case_sort_key)

    def has(self, bench, case, impl):
        return (bench, case, impl) in self.agg


def log_panels(ctx, charts, bench, impls, panels, xlabel, x, width, labels=LABELS, ylabel=None):
    """A figure `width` inches wide of log-log panels, one per (title,
    cases, metric, scale): a line per implementation, x(case) on the x
    axis, the metric's median divided by scale on the y axis. Returns the
    figure and its axes."""
    fig, axes = charts.plt.subplots(1, len(panels), figsize=(width, 3.6), squeeze=False)
    for ax, (title, cases, metric, scale) in zip(axes[0], panels):
        Charts.log_lines(ax, [x(c) for c in cases], impls,
                         lambda i: [None if y is None else y / scale
                                    for y in (ctx.med(bench, c, i, metric) for c in cases)],
                         xlabel, labels, COLORS)
        ax.set_title(title)
        if ylabel:
            ax.set_ylabel(ylabel)
    axes[0][0].legend(fontsize=7)
    return fig, axes[0]


def rows_by_n(cases, impls, cell):
    """Table rows: one per case, its n first, then cell(case, impl)."""
    return [[f"{case_value(c, 'n'):,}"] + [cell(c, i) for i in impls] for c in cases]


class Benchmark:
    name = ""            # the RESULT lines' bench=
    program = ""         # bench/build/<impl>/<program>.exe
    impls = []           # in the tables' order
    primary = ""         # the metric shown in the progress log
    check = None         # a field every implementation must agree on
    needs_ocaml5 = None  # why it cannot run on OCaml 4, if so
    group = None         # a heading shared with the next benchmarks
    labels = {}          # implementations' names in this benchmark, if not LABELS'
    modes = {"quick": {}, "full": {}}

    def job(self, impl_dir, args, env=None):
        return {"bench": self.name, "dir": impl_dir, "program": self.program,
                "args": [str(a) for a in args], "env": env}

    def points(self, p, keep, cores):
        """Lists of jobs, one list per parameter point (interleaved)."""
        return []

    def label(self, impl):
        return self.labels.get(impl, LABELS[impl])

    def goals(self, ctx):
        return []

    # section() and chart() are called only if the run has cases `cs`
    # (sorted) of this benchmark.
    def section(self, ctx, cs):
        return []

    def chart(self, ctx, charts, cs):
        pass

    def progress(self, r):
        v = r.get(self.primary)
        if not isinstance(v, (int, float)):
            return f"{r['impl']} {r['case']}"
        if self.primary == "cpu_s":
            return f"{r['impl']} {r['case']} {v:.3f}s"
        return f"{r['impl']} {r['case']} {self.primary}={v:.1f}"

# ---------------------------------------------------------------- global roots (paper §5.1)


GLOBAL_IMPLS = ["ocaml", "gc", "global", "generational", "dll", "boxroot", "upstream"]


class GlobalRoots(Benchmark):
    impls = GLOBAL_IMPLS
    primary = "cpu_s"
    group = ("## Global-roots benchmarks (the Boxroot paper, §5.1)\n",
             "×OCaml = time / OCaml (no boxing); the paper's column is the same ratio from its "
             "{paper_col} table (another machine: compare ratios, not seconds; its "
             "\"Boxroot\" was upstream's library in 2022). Pools: boxroot pools that existed at "
             "once (upstream counts pools only in its statistics build).\n")

    def __init__(self, name, arg, check, goal_upstream=None, goal_gc=None):
        self.name = self.program = name
        self.arg, self.check = arg, check
        self.goal_upstream, self.goal_gc = goal_upstream, goal_gc
        key, quick, full = arg
        self.modes = {"quick": {key: quick}, "full": {key: full}}

    def points(self, p, keep, cores):
        key = self.arg[0]
        return [[self.job(i, [f"{key}={p[key]}"]) for i in self.impls if keep(i)]]

    def goals(self, ctx):
        out = []
        for c in ctx.cases(self.name):
            up, gc, base = (ctx.med(self.name, c, i, "cpu_s") for i in ("upstream", "gc", "ocaml"))

            def r(den):
                return ctx.ratios(self.name, c, "boxroot", den, "cpu_s")

            # The program without any rooting: no library can go below it.
            def floor(den, name):
                q = ratio(base, den)
                return "" if q is None else f"no rooting: {q:.2f}× {name}"
            if self.goal_upstream:
                w = self.goal_upstream
                med, mn = r("upstream")
                out.append(check_row(f"{self.name}: boxroot / upstream", med, f"≤ {w:.2f}",
                                     lambda v: v <= w, floor(up, "upstream"), mn))
            if self.goal_gc:
                w = self.goal_gc
                med, mn = r("gc")
                out.append(check_row(f"{self.name}: boxroot / OCaml ref via C", med,
                                     f"≤ {w:.2f}", lambda v: v <= w, floor(gc, "ref via C"), mn))
            med, mn = r("generational")
            out.append(check_row(f"{self.name}: boxroot / generational", med, "< 1.00",
                                 lambda v: v < 1.0, "", mn))
        return out

    def section(self, ctx, cs):
        L = []
        b = self.name
        for c in cs:
            L.append(f"### {b} ({c})\n")
            base, gc, up = (ctx.med(b, c, i, "cpu_s") for i in ("ocaml", "gc", "upstream"))
            p_base = ctx.paper.get((b, "OCaml"))
            rows = []
            for i in self.impls:
                st = ctx.agg.get((b, c, i), {})
                t = st.get("cpu_s")
                if t is None:
                    continue
                p = ctx.paper.get((b, PAPER_ROWS.get(i, "")))
                rows.append((LABELS[i], f2(t["median"], 3), f2(t["min"], 3), f2(spread(t), 0) + "%",
                             f2(ratio(t["median"], base)), f2(ratio(t["median"], gc)),
                             f2(ratio(t["median"], up)), f2(ratio(p, p_base)),
                             int(st["minor"]["median"]), int(st["major"]["median"]),
                             "–" if st["pools"]["median"] < 0 else int(st["pools"]["median"])))
            L.append(md_table(["implementation", "median s", "min s", "spread", "×OCaml",
                               "×ref via C", "×upstream", f"paper ×OCaml ({ctx.paper_col})",
                               "minor", "major", "pools"], rows) + "\n")
        return L


class GlobalRootsChart(Benchmark):
    """The paper-style chart of the three global-roots benchmarks: one bar
    per implementation, time normalised to OCaml = 1, the paper's ratios
    as black ticks."""
    name = "global_roots_chart"

    def chart(self, ctx, charts, cs):
        benches = [(b, c) for b in ("perm_count", "synthetic", "globroots") for c in ctx.cases(b)]
        if not benches:
            return
        plt = charts.plt
        fig, axes = plt.subplots(1, len(benches), figsize=(4 * len(benches), 3.6), squeeze=False)
        for ax, (b, c) in zip(axes[0], benches):
            base = ctx.med(b, c, "ocaml", "cpu_s")
            names, vals, lo, hi, cols, pap = [], [], [], [], [], []
            for i in GLOBAL_IMPLS:
                st = ctx.stat(b, c, i, "cpu_s")
                if st is None or not base:
                    continue
                names.append(LABELS[i].replace(" (", "\n("))
                vals.append(st["median"] / base)
                lo.append((st["median"] - st["min"]) / base)
                hi.append((st["max"] - st["median"]) / base)
                cols.append(COLORS[i])
                p, p0 = ctx.paper.get((b, PAPER_ROWS.get(i, ""))), ctx.paper.get((b, "OCaml"))
                pap.append(p / p0 if p and p0 else None)
            x = range(len(vals))
            ax.bar(x, vals, color=cols, yerr=[lo, hi], capsize=2)
            px = [k for k, p in enumerate(pap) if p is not None]
            if px:
                ax.scatter(px, [pap[k] for k in px], marker="_", s=300, color="black", zorder=3,
                           label=f"paper ({ctx.paper_col})")
                ax.legend(loc="upper left", fontsize=7)
            ax.axhline(1.0, color="black", linewidth=0.5)
            ax.set_xticks(list(x))
            ax.set_xticklabels(names, rotation=60, ha="right", fontsize=7)
            ax.set_title(f"{b} ({c})")
            ax.set_ylabel("time / OCaml (no boxing)")
        charts.save(fig, "global_roots")

# ---------------------------------------------------------------- local roots (paper §5.2)


# What bounds local_roots' ratios to upstream (bench/README.md, "Goals"):
# the instructions of a call at the same depth, ours against upstream's,
# on the same OCaml version, from bench/tools/per_op.py's table of the
# timed sections (bench/results/per-op/results.md).
PER_OP_RESULTS = os.path.join(HERE, "results", "per-op", "results.md")


def per_op_counts(ocaml_version, label, path=PER_OP_RESULTS):
    """(boxroot, upstream, commit) of the per-op table's row `label` for
    this OCaml version, or None if the table has no such row or column."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    commit = text.split("commit ", 1)[1].split(",", 1)[0] if "commit " in text else "?"
    header = None
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == "operation":
            header = cells
        elif header and cells[0] == label:
            try:
                i = header.index(f"{ocaml_version} boxroot")
                return float(cells[i]), float(cells[i + 1]), commit
            except (ValueError, IndexError):
                return None
    return None


def local_roots_bound(ocaml_version, variant, depth):
    counts = per_op_counts(ocaml_version, f"local_roots, {variant}-roots: per call, depth {depth}")
    if counts is None:
        return ""
    ours, theirs, commit = counts
    return (f"instructions per call: {ours:.0f} vs {theirs:.0f} "
            f"(callgrind, OCaml {ocaml_version}, commit {commit})")


class LocalRoots(Benchmark):
    name = program = "local_roots"
    primary = "ns_per_call"
    # (library the executable is built with, variant)
    variants = [("boxroot", "ocaml"), ("boxroot", "local"), ("boxroot", "callee"),
                ("boxroot", "caller"), ("upstream", "callee"), ("upstream", "caller"),
                ("boxroot", "generational")]
    impls = ["ocaml", "local", "boxroot-callee", "upstream-callee", "boxroot-caller",
             "upstream-caller", "generational"]
    modes = {"quick": dict(calls=3_000_000, depths=[1, 2, 3, 5, 10, 100, 1000]),
             "full": dict(calls=10_000_000, depths=[1, 2, 3, 5, 10, 100, 1000])}

    def points(self, p, keep, cores):
        # One process per depth: the finest interleaving, so that a change
        # of load during the run hits every implementation alike.
        return [[self.job(lib, [f"variant={v}", f"depths={d}", f"calls={p['calls']}"])
                 for lib, v in self.variants
                 if keep(v if v in ("local", "ocaml", "generational") else lib)]
                for d in p["depths"]]

    def goals(self, ctx):
        out = []
        for c in ctx.cases(self.name):
            d = case_value(c, "depth")

            def r(a, b):
                return ctx.ratios(self.name, c, a, b, self.primary)
            for disc in ("caller", "callee"):
                med, mn = r(f"boxroot-{disc}", f"upstream-{disc}")
                out.append(check_row(f"local_roots depth {d}: boxroot-{disc} / upstream-{disc}",
                                     med, "≤ 0.95", lambda v: v <= 0.95,
                                     local_roots_bound(ctx.ocaml, disc, d), mn))
            # Caller-roots pay one create+delete per call where local roots
            # pay a few stores: the pair, timed alone in the same run (ops).
            pair = ctx.med("ops", "op=loop_create_delete", "boxroot", "ns_per_op")
            local = ctx.med(self.name, c, "local", self.primary)
            bound = ("" if pair is None or local is None
                     else f"create+delete alone: {pair:.1f} ns; local roots' call: {local:.1f} ns")
            med, mn = r("boxroot-caller", "local")
            out.append(check_row(f"local_roots depth {d}: boxroot-caller / local roots",
                                 med, "≤ 1.00", lambda v: v <= 1.0, bound, mn))
            med, mn = r("boxroot-caller", "generational")
            out.append(check_row(f"local_roots depth {d}: boxroot-caller / generational",
                                 med, "< 1.00", lambda v: v < 1.0, "", mn))
        return out

    def section(self, ctx, cs):
        L = ["## local_roots (the Boxroot paper, §5.2): ns per recursive call\n"]
        rows = []
        for i in [i for i in self.impls if any(ctx.has(self.name, c, i) for c in cs)]:
            row = [LABELS.get(i, i)]
            for c in cs:
                st = ctx.stat(self.name, c, i, "ns_per_call")
                row.append("–" if st is None else f"{st['median']:.1f} ({spread(st):.0f}%)")
            rows.append(row)
        for num, den in (("boxroot-caller", "upstream-caller"), ("boxroot-callee", "upstream-callee"),
                         ("boxroot-caller", "local"), ("boxroot-callee", "local")):
            rows.append([f"*{num} / {den}*"] + [f2(ratio(ctx.med(self.name, c, num, "ns_per_call"),
                                                            ctx.med(self.name, c, den, "ns_per_call")))
                                                  for c in cs])
        L.append(md_table(["variant"] + [f"depth {case_value(c, 'depth')}" for c in cs], rows) + "\n")
        L.append("(median ns, spread in parentheses)\n")
        return L

    def chart(self, ctx, charts, cs):
        fig, ax = charts.plt.subplots(figsize=(6, 3.8))
        depths = [case_value(c, "depth") for c in cs]
        for i in self.impls:
            ys = [ctx.med(self.name, c, i, "ns_per_call") for c in cs]
            if all(y is None for y in ys):
                continue
            ax.plot(depths, ys, marker="o", label=LABELS.get(i, i), color=COLORS.get(i),
                    linestyle="--" if "upstream" in i else "-")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("call depth N")
        ax.set_ylabel("ns per recursive call")
        ax.set_title("local_roots")
        ax.legend(fontsize=7)
        charts.save(fig, "local_roots")

# ---------------------------------------------------------------- single operations


class Ops(Benchmark):
    name = program = "ops"
    primary = "ns_per_op"
    impls = ["gc", "global", "generational", "dll", "boxroot", "upstream"]
    ks = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000]
    modes = {"quick": dict(iters=1_000_000, ks=ks), "full": dict(iters=5_000_000, ks=ks)}
    ops = ("create_delete", "modify_old", "modify_young")
    loops = ("loop_create_delete", "loop_batches", "loop_modify")

    def points(self, p, keep, cores):
        per_k = [[self.job(i, [f"ks={k}", f"iters={p['iters']}", "ops=" + ",".join(self.ops)])
                  for i in self.impls if keep(i)] for k in p["ks"]]
        # The plain C loops keep no root alive between operations: one point,
        # without "gc", whose refs are OCaml blocks that a C variable cannot
        # hold across allocations (ops.c reports nothing for them).
        loops = [self.job(i, ["ks=1", f"iters={p['iters']}", "ops=" + ",".join(self.loops)])
                 for i in self.impls if keep(i) and i != "gc"]
        return per_k + [loops]

    def section(self, ctx, cs):
        L = ["## Single operations: ns per operation with k roots alive\n",
             "create_delete: create a root and delete the oldest alive one; modify_old / "
             "modify_young: set the next root (round robin) to an old / a young value. Timed "
             "in C, loop included; see bench/src/ops.ml.\n"]
        for op in self.ops:
            ocs = [c for c in cs if case_value(c, "op") == op]
            if not ocs:
                continue
            L.append(f"### {op}\n")
            rows = [[LABELS[i]] + [f2(ctx.med("ops", c, i, "ns_per_op"), 1) for c in ocs]
                    for i in self.impls if any(ctx.has("ops", c, i) for c in ocs)]
            rows.append(["*boxroot / upstream*"] + [f2(ratio(ctx.med("ops", c, "boxroot", "ns_per_op"),
                                                             ctx.med("ops", c, "upstream", "ns_per_op")))
                                                    for c in ocs])
            L.append(md_table(["implementation"] + [f"k={case_value(c, 'k')}" for c in ocs], rows)
                     + "\n")
        lcs = [c for op in self.loops for c in cs if case_value(c, "op") == op]
        if lcs:
            L.append("### Plain C loops\n")
            L.append("Roots kept in C variables, as foreign code usually does (bench/src/ops.c): "
                     "loop_create_delete creates a root and deletes it at once; loop_batches "
                     "creates 10,000 roots, then deletes them in creation order (per "
                     "create+delete); loop_modify sets one root alternately to two old values. "
                     "ns per operation, median (min) over the repetitions.\n")
            impls = [i for i in self.impls if any(ctx.has("ops", c, i) for c in lcs)]
            rows = []
            for c in lcs:
                row = [case_value(c, "op")]
                for i in impls:
                    st = ctx.stat("ops", c, i, "ns_per_op")
                    row.append("–" if st is None else f"{st['median']:.1f} ({st['min']:.1f})")
                row.append(f2(ratio(ctx.med("ops", c, "boxroot", "ns_per_op"),
                                    ctx.med("ops", c, "upstream", "ns_per_op"))))
                rows.append(row)
            L.append(md_table(["loop"] + [LABELS[i] for i in impls] + ["*boxroot / upstream*"], rows)
                     + "\n")
        return L

    def chart(self, ctx, charts, cs):
        panels = [(op, [c for c in cs if case_value(c, "op") == op], "ns_per_op", 1) for op in self.ops]
        fig, _ = log_panels(ctx, charts, self.name, self.impls, panels, "roots alive (k)",
                            lambda c: case_value(c, "k"), 12, ylabel="ns per operation")
        charts.save(fig, "ops")

class Plain(Benchmark):
    """ops' plain C loops again, in a program built as a user without dune
    builds it (bench/plain/: `ocamlopt -ccopt -O2` over its stubs and the
    library's C files, OCaml's own C flags only)."""
    name = program = "plain"
    primary = "ns_per_op"
    impls = ["boxroot", "upstream"]
    loops = ("create_delete", "batches", "modify", "modify_old")
    modes = {"quick": dict(iters=20_000_000), "full": dict(iters=50_000_000)}
    goal = 1.00

    def job(self, impl_dir, args, env=None):
        return {**super().job(impl_dir, args, env), "plain": True}

    def points(self, p, keep, cores):
        return [[self.job(i, [f"impl={i}", f"ops={op}", f"iters={p['iters']}"])
                 for i in self.impls if keep(i)] for op in self.loops]

    def goals(self, ctx):
        out = []
        for op in self.loops:
            c = f"op={op}"
            med, mn = ctx.ratios(self.name, c, "boxroot", "upstream", "ns_per_op")
            out.append(check_row(f"plain C loop {op} (built as a user would): boxroot / upstream",
                                 med, f"≤ {self.goal:.2f}", lambda v: v <= self.goal, "", mn))
        return out

    def section(self, ctx, cs):
        L = ["## Plain C loops, built as a user builds them\n",
             "The plain C loops of ops (create a root and delete it at once; 10,000 created, "
             "then deleted in creation order, per pair, and each half; one root set "
             "alternately to two old values, fresh or long-lived: created before a minor and a "
             "full major collection), in a program whose stubs and library are "
             "compiled together by `ocamlopt -ccopt -O2`, with OCaml's own C flags, as a "
             "user without dune builds it (bench/plain/). ns per operation, median (min) "
             "over the repetitions; the ratios are of medians, and of minimums.\n"]
        impls = [i for i in self.impls if any(ctx.has(self.name, c, i) for c in cs)]
        rows = []
        for op, metric, label in (("create_delete", "ns_per_op", "create, delete at once"),
                                  ("batches", "ns_per_op", "batches of 10,000 (per pair)"),
                                  ("batches", "create_ns", "batches: the creations"),
                                  ("batches", "delete_ns", "batches: the deletions"),
                                  ("modify", "ns_per_op", "modify one root"),
                                  ("modify_old", "ns_per_op", "modify one long-lived root")):
            c = f"op={op}"
            if not any(ctx.has(self.name, c, i) for i in impls):
                continue
            row = [label]
            for i in impls:
                st = ctx.stat(self.name, c, i, metric)
                row.append("–" if st is None else f"{st['median']:.2f} ({st['min']:.2f})")
            bx, up = (ctx.stat(self.name, c, i, metric) for i in ("boxroot", "upstream"))
            row.append(f2(None if bx is None or up is None else ratio(bx["median"], up["median"])))
            row.append(f2(None if bx is None or up is None else ratio(bx["min"], up["min"])))
            rows.append(row)
        L.append(md_table(["loop"] + [LABELS[i] for i in impls]
                          + ["*boxroot / upstream*", "*(min / min)*"], rows) + "\n")
        return L

# ---------------------------------------------------------------- latency


class Latency(Benchmark):
    name = program = "latency"
    primary = "minor_med_ns"
    impls = ["ocaml", "generational", "boxroot", "upstream"]
    modes = {"quick": dict(ns=[0, 1000, 10_000, 100_000, 1_000_000], minors=1000, majors=7),
             "full": dict(ns=[0, 1000, 10_000, 100_000, 1_000_000, 10_000_000], minors=2000,
                          majors=15)}
    metrics = (("minor_med_ns", "µs", 1e3, "minor collection"),
               ("minor_burst_ns", "µs", 1e3,
                "minor collection right after creating n more roots (holding an old block)"),
               ("major_med_ns", "ms", 1e6, "major cycle (Gc.major)"))

    def points(self, p, keep, cores):
        return [[self.job(i, [f"n={n}", f"minors={p['minors']}", f"majors={p['majors']}"])
                 for i in self.impls if keep(i)] for n in p["ns"]]

    def section(self, ctx, cs):
        L = ["## Latency: duration of one collection with n roots alive\n",
             "Every root holds the same old block, so marking work does not grow with n. "
             "Median of each collection's wall-clock duration; the n = 0 row has boxroot's "
             "and upstream's hooks installed but no root, so its difference with OCaml is "
             "the cost of linking them.\n"]
        for metric, unit, scale, title in self.metrics:
            L.append(f"### {title}, {unit}\n")
            def cell(c, i):
                v = ctx.med(self.name, c, i, metric)
                return "–" if v is None else f"{v / scale:.3f}"
            L.append(md_table(["n roots"] + [LABELS[i] for i in self.impls],
                              rows_by_n(cs, self.impls, cell)) + "\n")
        c0 = [c for c in cs if case_value(c, "n") == 0]
        if c0:
            base = ctx.med(self.name, c0[0], "ocaml", "minor_med_ns")
            extra = []
            for i in ("boxroot", "upstream"):
                v = ctx.med(self.name, c0[0], i, "minor_med_ns")
                extra.append(f"{LABELS[i]}: {f2(None if v is None or base is None else v - base, 0)} ns")
            L.append("Extra time per minor collection with the library linked and set up but no "
                     "root: " + ", ".join(extra) + ".\n")
        return L

    def chart(self, ctx, charts, cs):
        titles = ("minor collection (µs)", "minor after n creations (µs)", "major cycle (ms)")
        panels = [(title, cs, metric, scale) for (metric, _, scale, _), title in zip(self.metrics, titles)]
        fig, _ = log_panels(ctx, charts, self.name, self.impls, panels, "roots alive (0 plotted at 1)",
                            lambda c: max(case_value(c, "n"), 1), 13)
        charts.save(fig, "latency")

# ---------------------------------------------------------------- root-marking pause

# The OCaml heap's own ways of holding values (plain values; refs made in
# C), beside the roots kept outside it: the OCaml 5 benchmarks' baselines.
HEAP_AND_ROOTS = ["ocaml", "gc", "generational", "boxroot", "upstream"]


class Pause(Benchmark):
    name = program = "pause"
    primary = "mark_roots_med_ns"
    needs_ocaml5 = "it reads OCaml 5's runtime_events (EV_MAJOR_MARK_ROOTS)"
    impls = HEAP_AND_ROOTS
    labels = {"ocaml": "OCaml array (same values)", "gc": "OCaml array of refs made in C"}
    modes = {"quick": dict(ns=[1000, 10_000, 100_000, 1_000_000], values=["distinct", "shared"],
                           cycles=12, full_majors=5, reps=3),
             "full": dict(ns=[1000, 10_000, 100_000, 1_000_000, 10_000_000],
                          values=["distinct", "shared"], cycles=12, full_majors=5, reps=5)}
    # Goals (bench/README.md): the pause at the largest n, the ratio to
    # the OCaml array up to 10^6 roots, Gc.full_major at 10^6 roots.
    max_pause_ms, max_pause_n = 0.5, 10_000_000
    array_ratio, array_ratio_upto = 2.0, 1_000_000
    fixed_cost_upto = 10_000  # the pauses shown beside the ratio, up to that n
    full_major_ratio, full_major_n = 1.05, 1_000_000

    def points(self, p, keep, cores):
        # The runtime writes its events to a file of its own (removed at
        # exit); not in the current directory.
        env = {"OCAML_RUNTIME_EVENTS_DIR": os.environ.get("TMPDIR", "/tmp")}
        return [{"reps": p["reps"],
                 "jobs": [self.job(i, [f"n={n}", f"values={v}", f"cycles={p['cycles']}",
                                       f"full_majors={p['full_majors']}"], env)
                          for i in self.impls if keep(i)]}
                for v in p["values"] for n in p["ns"]]

    def progress(self, r):
        return (f"{r['impl']} {r['case']} pause {r['mark_roots_med_ns'] / 1e6:.3f} ms "
                f"(max {r['mark_roots_max_ns'] / 1e6:.3f}), full_major "
                f"{r['full_major_med_ns'] / 1e6:.1f} ms")

    def goals(self, ctx):
        out = []
        for c in ctx.cases(self.name):
            n, v = case_value(c, "n"), case_value(c, "values")
            bx = ctx.med(self.name, c, "boxroot", "mark_roots_max_ns")
            arr = ctx.med(self.name, c, "ocaml", "mark_roots_max_ns")
            if n == self.max_pause_n:
                w = self.max_pause_ms
                out.append(check_row(f"pause: boxroot max pause, ms, {n:,} roots ({v})",
                                     None if bx is None else bx / 1e6, f"≤ {w}", lambda x: x <= w))
            if n <= self.array_ratio_upto:
                w = self.array_ratio
                # Few roots: both pauses are a few µs, mostly the
                # runtime's own cost of a stop-the-world section.
                bound = ("" if bx is None or arr is None
                         else f"max pauses: {bx / 1e3:.1f} µs vs {arr / 1e3:.1f} µs")
                out.append(check_row(f"pause: boxroot / OCaml array, max pause, {n:,} roots ({v})",
                                     ratio(bx, arr), f"≤ {w:.2f}", lambda x: x <= w,
                                     bound if n <= self.fixed_cost_upto else ""))
            if n == self.full_major_n:
                w = self.full_major_ratio
                out.append(check_row(f"pause: Gc.full_major boxroot / OCaml array, {n:,} roots ({v})",
                                     ratio(ctx.med(self.name, c, "boxroot", "full_major_med_ns"),
                                           ctx.med(self.name, c, "ocaml", "full_major_med_ns")),
                                     f"≤ {w:.2f}", lambda x: x <= w))
        return out

    def section(self, ctx, cs):
        impls = [i for i in self.impls if any(ctx.has(self.name, c, i) for c in cs)]
        L = ["## Latency: root-marking pause of a major cycle (OCaml 5)\n",
             "The time every domain stops at the start of a major cycle while the runtime "
             "darkens the roots: the runtime_events phase EV_MAJOR_MARK_ROOTS, read from "
             "OCaml's runtime_events library, over the cycles of one run (median ms, max in "
             "parentheses; each cell the median over the repetitions). The roots hold a block "
             "each (distinct) or one shared block; \"OCaml array\" holds the same values in an "
             "array, which the runtime marks incrementally after the pause. Then "
             "Gc.full_major's wall-clock duration with the same roots alive. See "
             "bench/src/pause.ml.\n"]
        for values in ("distinct", "shared"):
            vcs = [c for c in cs if case_value(c, "values") == values]
            if not vcs:
                continue
            def pause(c, i):
                if i == "ratio":
                    return f2(ratio(ctx.med(self.name, c, "boxroot", "mark_roots_max_ns"),
                                    ctx.med(self.name, c, "ocaml", "mark_roots_max_ns")))
                m, x = (ctx.med(self.name, c, i, k) for k in ("mark_roots_med_ns", "mark_roots_max_ns"))
                return "–" if m is None else f"{m / 1e6:.3f} ({x / 1e6:.3f})"

            def full_major(c, i):
                m, a = (ctx.med(self.name, c, j, "full_major_med_ns")
                        for j in (("boxroot", "ocaml") if i == "ratio" else (i, None)))
                return f2(ratio(m, a)) if i == "ratio" else "–" if m is None else f"{m / 1e6:.2f}"
            header = ["n roots"] + [self.label(i) for i in impls]
            L.append(f"### Root-marking pause, ms ({values} values)\n")
            L.append(md_table(header + ["*boxroot / array (max)*"],
                              rows_by_n(vcs, impls + ["ratio"], pause)) + "\n")
            L.append(f"### Gc.full_major, ms ({values} values)\n")
            L.append(md_table(header + ["*boxroot / array*"],
                              rows_by_n(vcs, impls + ["ratio"], full_major)) + "\n")
        return L

    def chart(self, ctx, charts, cs):
        panels = [(v, "mark_roots_max_ns") for v in ("distinct", "shared")
                  if any(case_value(c, "values") == v for c in cs)]
        panels.append((None, "full_major_med_ns"))
        fig, axes = charts.plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 3.8),
                                        squeeze=False)
        labels = {i: self.label(i) for i in self.impls}
        for ax, (values, metric) in zip(axes[0], panels):
            # The full_major panel: distinct values solid, shared dashed.
            for v, style in ((values, "-"),) if values else (("distinct", "-"), ("shared", "--")):
                vcs = [c for c in cs if case_value(c, "values") == v]
                ns = [case_value(c, "n") for c in vcs]
                Charts.log_lines(ax, ns, self.impls,
                                 lambda i: [None if y is None else y / 1e6
                                            for y in (ctx.med(self.name, c, i, metric) for c in vcs)],
                                 "roots alive", labels if style == "-" else {}, COLORS,
                                 linestyle=style)
            if metric == "mark_roots_max_ns":
                ax.axhline(self.max_pause_ms, color="black", linewidth=0.6, linestyle=":",
                           label=f"goal at 10^7 roots ({self.max_pause_ms} ms)")
                ax.set_title(f"root-marking pause, max ({values} values)")
                ax.set_ylabel("ms")
            else:
                ax.set_title("Gc.full_major (dashed: shared values)")
                ax.set_ylabel("ms")
        axes[0][0].legend(fontsize=7)
        charts.save(fig, "pause")

# ---------------------------------------------------------------- parallel


class Parallel(Benchmark):
    name = program = "parallel"
    primary = "roots_per_s"
    needs_ocaml5 = "OCaml 4 has no domains"
    impls = HEAP_AND_ROOTS
    labels = {"ocaml": "No rooting (OCaml values)"}
    modes = {"quick": dict(roots=10_000_000, domains_extra=[4]),
             "full": dict(roots=30_000_000, domains_extra=[4])}
    # Goals (bench/README.md): roots handed between 2 domains, against
    # the same program handing unrooted values (whose own throughput drops
    # with a second domain: the handing over costs more than it gains), and
    # against upstream.
    vs_no_rooting, vs_upstream = 1.0, 1.5

    def domain_counts(self, p, cores):
        return sorted(set(range(1, cores + 1)) | set(p.get("domains_extra", [])))

    def points(self, p, keep, cores):
        return [[self.job(i, [f"mode={mode}", f"domains={d}", f"roots={p['roots']}"])
                 for i in self.impls if keep(i)]
                for mode in ("prodcons", "independent") for d in self.domain_counts(p, cores)]

    def progress(self, r):
        return f"{r['impl']} {r['case']} {r['roots_per_s'] / 1e6:.1f}M roots/s"

    @staticmethod
    def domains_label(d, cores):
        return f"{d} (oversubscribed: {cores} cores)" if cores and d > cores else str(d)

    def goals(self, ctx):
        out = []
        c1, c2 = "mode=prodcons,domains=1", "mode=prodcons,domains=2"
        bx2, up2, base1, base2 = (ctx.med(self.name, c, i, "roots_per_s")
                                  for c, i in ((c2, "boxroot"), (c2, "upstream"),
                                               (c1, "ocaml"), (c2, "ocaml")))
        if bx2 is not None:
            w1, w2 = self.vs_no_rooting, self.vs_upstream
            scaling = ratio(base2, base1)
            out.append(check_row("parallel prodcons 2 domains: boxroot / no rooting", ratio(bx2, base2),
                                 f"≥ {w1:.2f}", lambda v: v >= w1,
                                 "" if scaling is None
                                 else f"no rooting, 2 domains / 1 domain: {scaling:.2f}"))
            out.append(check_row("parallel prodcons 2 domains: boxroot / upstream", ratio(bx2, up2),
                                 f"≥ {w2:.2f}", lambda v: v >= w2))
        return out

    def section(self, ctx, cs):
        impls = [i for i in self.impls if any(ctx.has(self.name, c, i) for c in cs)]
        cores = ctx.cores
        text = ("prodcons: each domain hands its roots to the next one, which deletes them; "
                "independent: each domain deletes its own. Wall-clock throughput, median.")
        if "ocaml" in impls:
            text += (" \"No rooting\" hands plain OCaml values around the same ring: what the "
                     "benchmark's channels and allocations cost by themselves.")
        if cores and any(case_value(c, "domains") > cores for c in cs):
            text += (f" This machine has {cores} cores: runs with more domains oversubscribe "
                     "them (labelled so).")
        L = ["## Parallel (OCaml 5): millions of roots created and deleted per second\n", text + "\n"]
        rows = []
        for c in cs:
            row = [case_value(c, "mode"), self.domains_label(case_value(c, "domains"), cores)]
            for i in impls:
                v = ctx.med(self.name, c, i, "roots_per_s")
                row.append("–" if v is None else f"{v / 1e6:.1f}")
            one = ctx.med(self.name, f"mode={case_value(c, 'mode')},domains=1", "boxroot",
                          "roots_per_s")
            row.append(f2(ratio(ctx.med(self.name, c, "boxroot", "roots_per_s"), one)))
            rows.append(row)
        L.append(md_table(["mode", "domains"] + [self.label(i) for i in impls]
                          + ["*boxroot / its 1 domain*"], rows) + "\n")
        if any(ctx.stat(self.name, c, i, "rss_peak_kib") for c in cs for i in impls):
            L.append("### Memory held\n")
            L.append("Resident memory (MiB) halfway through the run → after it (peak), and for "
                     "boxroot the pools it holds (handed out to domains or kept committed) at the "
                     "same two points: growth between them would be memory that grows with the "
                     "run's length. Medians over the repetitions.\n")
            rows = []
            for c in cs:
                row = [case_value(c, "mode"), self.domains_label(case_value(c, "domains"), cores)]
                for i in impls:
                    h, e, p = (ctx.med(self.name, c, i, k) for k in
                               ("rss_half_kib", "rss_end_kib", "rss_peak_kib"))
                    row.append("–" if h is None or e is None or p is None
                               else f"{h / 1024:.0f} → {e / 1024:.0f} ({p / 1024:.0f})")
                ph, pe = (ctx.med(self.name, c, "boxroot", k) for k in ("pools_half", "pools_end"))
                row.append("–" if ph is None or pe is None else f"{ph:.0f} → {pe:.0f}")
                rows.append(row)
            L.append(md_table(["mode", "domains"] + [self.label(i) for i in impls]
                              + ["boxroot pools"], rows) + "\n")
        return L

    def chart(self, ctx, charts, cs):
        modes = sorted({case_value(c, "mode") for c in cs}, reverse=True)
        has_mem = any(ctx.stat(self.name, c, "boxroot", "rss_peak_kib") for c in cs)
        panels = [(m, "roots_per_s") for m in modes] + ([("prodcons", "rss_peak_kib")]
                                                        if has_mem else [])
        fig, axes = charts.plt.subplots(1, len(panels), figsize=(4.8 * len(panels), 3.8),
                                        squeeze=False)
        impls = [i for i in self.impls if any(ctx.has(self.name, c, i) for c in cs)]
        width = 0.8 / max(1, len(impls))
        for ax, (mode, metric) in zip(axes[0], panels):
            mcs = [c for c in cs if case_value(c, "mode") == mode]
            ds = [case_value(c, "domains") for c in mcs]
            pos = list(range(len(ds)))
            scale = 1e6 if metric == "roots_per_s" else 1024
            for k, i in enumerate(impls):
                ys = [ctx.med(self.name, c, i, metric) for c in mcs]
                ax.bar([x + (k - len(impls) / 2 + 0.5) * width for x in pos],
                       [0 if y is None or y < 0 else y / scale for y in ys], width,
                       label=self.label(i), color=COLORS[i])
            ax.set_xticks(pos)
            ax.set_xticklabels([self.domains_label(d, ctx.cores).replace(" (", "\n(") for d in ds],
                               fontsize=7)
            ax.set_xlabel("domains")
            if metric == "roots_per_s":
                ax.set_ylabel("M roots / s")
                ax.set_title(f"parallel: {mode}")
            else:
                ax.set_ylabel("peak resident memory, MiB")
                ax.set_title(f"parallel: {mode}, memory")
        axes[0][0].legend(fontsize=7)
        charts.save(fig, "parallel")

# ---------------------------------------------------------------- the suite


BENCHMARKS = [
    GlobalRoots("perm_count", ("n", 9, 10), "count", goal_upstream=0.80, goal_gc=0.90),
    GlobalRoots("synthetic", ("n", 8, 8), "check", goal_upstream=0.80, goal_gc=0.90),
    GlobalRoots("globroots", ("steps", 1_350_000, 1_350_000), "check", goal_upstream=0.95),
    LocalRoots(),
    Ops(),
    Plain(),
    Latency(),
    Pause(),
    Parallel(),
]
CHARTS = [GlobalRootsChart()]
BY_NAME = {b.name: b for b in BENCHMARKS}
