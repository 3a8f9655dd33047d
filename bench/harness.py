"""What every benchmark driver here shares (run.py, tune.py, micro/run.py):
running programs, interleaving them, parsing their RESULT lines,
summarising repetitions, Markdown tables and charts.

The programs' output protocol (bench/src/harness.ml): one line per
measurement,
    RESULT bench=B impl=I case=C key=value key=value ...
where `case` names the parameter point ("k=1,op=create" style, itself
containing '=') and the library's statistics are fields named
stat_<counter>. Values are parsed as int, else float, else kept as text.

Interleaving: repetition r runs, for each point, every variant in turn,
starting from a different one at each repetition, so that a slow phase of
a shared machine spreads over all of them. Summaries are min, median,
max and spread = (max - min) / median over the repetitions.
"""
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.environ.get("BOXROOT_CACHE", os.path.expanduser("~/.cache/boxroot"))
VENV = os.path.join(CACHE, "bench-venv")

# ---------------------------------------------------------------- run


def parse_value(v):
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def parse_results(text):
    """The RESULT lines of a program's output, as dicts."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("RESULT "):
            continue
        body = line[len("RESULT "):]
        rec = {}
        for field in body.split(" "):
            k, _, v = field.partition("=")
            rec[k] = parse_value(v)
        # "case" itself contains '=': keep everything after the first one.
        if "case=" in body:
            rec["case"] = body.split("case=", 1)[1].split(" ", 1)[0]
        out.append(rec)
    return out


def run_program(exe, args, env=None, timeout=1800):
    """Runs one program; returns (RESULT records, None) or (None, error)."""
    if not os.path.exists(exe):
        return None, f"missing {exe}"
    try:
        p = subprocess.run([exe] + list(args), capture_output=True, text=True, timeout=timeout,
                           env=None if env is None else {**os.environ, **env})
    except subprocess.TimeoutExpired:
        return None, f"timeout after {timeout}s"
    if p.returncode != 0:
        return None, f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
    recs = parse_results(p.stdout)
    if not recs:
        return None, "no RESULT line"
    return recs, None


def interleave(points, reps, run, describe=str, summary=None, log=print):
    """Runs every job of every point `reps` times, rotated (see above).

    points: lists of jobs; a point may be a dict {"jobs": [...], "reps": n}
    to run fewer repetitions than the others. run(job, rep) returns
    (records, error). Returns (records, failures); each record gets
    its repetition as "rep". Progress goes to `log`: describe(job), and
    summary(job, records) (default: the first numeric fields)."""
    points = [p if isinstance(p, dict) else {"jobs": p, "reps": reps} for p in points]
    total = sum(len(p["jobs"]) * min(reps, p["reps"]) for p in points)
    records, failures, done, t0 = [], [], 0, time.time()
    for rep in range(reps):
        for p in points:
            if rep >= p["reps"]:
                continue
            g = p["jobs"]
            k = rep % len(g)
            for job in g[k:] + g[:k]:
                done += 1
                el = time.time() - t0
                tag = (f"[{int(el) // 60:02d}:{int(el) % 60:02d}] run {rep + 1}/{reps} "
                       f"({done}/{total}) {describe(job)}")
                recs, err = run(job, rep)
                if err:
                    failures.append(f"{describe(job)}: {err}")
                    log(f"{tag}: FAILED {err}")
                    continue
                for r in recs:
                    r["rep"] = rep
                records += recs
                log(f"{tag}: " + (summary(job, recs) if summary else recs_summary(recs)))
    return records, failures


def recs_summary(recs, keys=3):
    """One short line for the progress log: the first numeric fields."""
    parts = []
    for r in recs[:3]:
        nums = [f"{k}={v}" for k, v in r.items()
                if k not in ("bench", "impl", "case", "rep") and isinstance(v, (int, float))][:keys]
        parts.append(f"{r.get('impl')} {r.get('case')} " + " ".join(nums))
    return "; ".join(parts) + (" ..." if len(recs) > 3 else "")

# ---------------------------------------------------------------- summaries


def summarise(values):
    """min, median, max, n and the values themselves."""
    vals = [v for v in values if isinstance(v, (int, float))]
    if not vals:
        return None
    return {"min": min(vals), "median": statistics.median(vals), "max": max(vals),
            "n": len(vals), "values": vals}


def spread(stat):
    """Spread of the repetitions: (max - min) / median, in percent."""
    if stat is None or stat["median"] == 0:
        return None
    return 100.0 * (stat["max"] - stat["min"]) / stat["median"]


def aggregate(records, skip_cases=("exit",)):
    """(bench, case, impl) -> {metric: summary}."""
    groups = {}
    for r in records:
        if r.get("case") in skip_cases:
            continue
        groups.setdefault((r["bench"], r["case"], r["impl"]), []).append(r)
    agg = {}
    for key, rs in groups.items():
        metrics = {}
        for k in rs[0]:
            if k in ("bench", "case", "impl", "rep"):
                continue
            s = summarise([r.get(k) for r in rs])
            if s is not None:
                metrics[k] = s
        agg[key] = metrics
    return agg


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def f2(x, digits=2):
    return "–" if x is None else f"{x:.{digits}f}"


def case_value(case, key):
    for kv in case.split(","):
        k, _, v = kv.partition("=")
        if k == key:
            return int(v) if v.isdigit() else v
    return None


def case_sort_key(case):
    parts = []
    for kv in case.split(","):
        k, _, v = kv.partition("=")
        parts.append((k, (0, int(v)) if v.isdigit() else (1, v)))
    return parts

# ---------------------------------------------------------------- tables


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    return "\n".join(lines)


def check_row(label, value, wanted, ok, bound="", value_min=None):
    """A goal checked on this run: (label, value, min, wanted, ✅/❌/–,
    bound), where `value` is a ratio of medians, `value_min` the same
    ratio of the minimums (where the goal has one), and `bound` names the
    measurement that limits the value, for goals that a run may miss for
    reasons outside the library. The verdict is the medians'; where the
    minimums' differs, it says so: on a shared machine the slow runs
    come in bursts, which may move a median of five but not a minimum."""
    verdict = "–" if value is None else ("✅" if ok(value) else "❌")
    if value is not None and value_min is not None and ok(value_min) != ok(value):
        verdict += " (min " + ("✅" if ok(value_min) else "❌") + ")"
    return (label, f2(value), f2(value_min) if value_min is not None else "", wanted, verdict,
            bound)

# ---------------------------------------------------------------- machine


def git_dirty():
    """Whether the library or the benchmarks differ from HEAD; results
    written by earlier runs (bench/results) do not count."""
    return bool(sh(f"git -C {ROOT} status --porcelain -- boxroot bench ':(exclude)bench/results'"))


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
        "git_dirty": git_dirty(),
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "loadavg_start": sh("cat /proc/loadavg"),
    }

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
        print(f"installing matplotlib into {VENV} (first use only)", flush=True)
        ok = (subprocess.run([sys.executable, "-m", "venv", VENV]).returncode == 0 and
              subprocess.run([os.path.join(VENV, "bin", "pip"), "install", "-q", "matplotlib"])
              .returncode == 0)
        if not ok:
            print("could not install matplotlib; no charts", flush=True)
            return False
    os.execv(py, [py] + sys.argv)


class Charts:
    """Writes charts into `outdir` (SVG by default, reproducible bytes)."""

    def __init__(self, outdir, fmt="svg"):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        plt.rcParams.update({"font.size": 9, "svg.hashsalt": "boxroot", "svg.fonttype": "none"})
        self.plt, self.outdir, self.fmt, self.files = plt, outdir, fmt, []

    def save(self, fig, name):
        name = f"{name}.{self.fmt}"
        fig.tight_layout()
        fig.savefig(os.path.join(self.outdir, name), dpi=110,
                    metadata={"Date": None} if self.fmt == "svg" else None)
        self.plt.close(fig)
        self.files.append(name)

    @staticmethod
    def log_lines(ax, xs, impls, series, xlabel, labels, colors, **style):
        """One line per implementation that has data, on log-log axes."""
        for i in impls:
            ys = series(i)
            if all(y is None for y in ys):
                continue
            ax.plot(xs, ys, marker="o", label=labels.get(i, i), color=colors.get(i), **style)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
