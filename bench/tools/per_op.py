#!/usr/bin/env python3
"""Instructions per operation (valgrind --tool=callgrind; repeatable,
unlike times on a shared machine), boxroot against upstream 0.4, on every
OCaml version built for the benchmarks, side by side:

  bench/tools/per_op.py [--versions 5.5,5.3,4.14] [--out FILE]

(or `PER_OP=1 bench/tools/callgrind.sh`). Each version needs its builds
first: `OCAML_VERSION=<v> make bench-build` (bench/_build/ocaml-<v>/,
which records its compiler's version; `make bench-build` without
OCAML_VERSION builds bench/_build/ocaml-default/). Per operation, loop
included: the difference between runs of 2N and N timed iterations (each
after a warm-up of a tenth), over 1.1N, so that the program's fixed costs
cancel; N = 10^6. Rows:
- bench ops (dune's release profile), 1 root alive in an OCaml array:
  create+delete, modify of an old root, modify of a young root;
- the plain C loops that keep their roots in C variables (create a root
  and delete it at once; 10,000 created then deleted, per pair; one root
  set alternately to two old values), as bench ops builds them (dune) and
  as a user without dune builds them (bench/plain/: ocamlopt over the
  stubs and the library's C files, OCaml's own C flags), the last one
  also with a long-lived root, in an old pool.
A second table counts the instructions of the sections that make bench
times (perm_count, synthetic, globroots at small sizes, local_roots per
call at every depth), which bench/run.py's goals table cites.
Writes the tables to FILE (default bench/results/per-op/results.md) with
the commands, the commit and the toolchains, and prints them."""
import argparse
import datetime
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
from harness import git_dirty, md_table, sh  # noqa: E402

N = 1_000_000
# (label, which build, program, arguments)
ROWS = [
    ("create + delete (bench ops, another root alive)", "dune", "ops", ["ks=1", "ops=create_delete"]),
    ("modify of an old root (bench ops)", "dune", "ops", ["ks=1", "ops=modify_old"]),
    ("modify of a young root (bench ops)", "dune", "ops", ["ks=1", "ops=modify_young"]),
    ("C loop, dune: create a root, delete it at once", "dune", "ops", ["ks=1", "ops=loop_create_delete"]),
    ("C loop, dune: 10,000 created, then deleted (per pair)", "dune", "ops", ["ks=1", "ops=loop_batches"]),
    ("C loop, dune: one root modified, two old values", "dune", "ops", ["ks=1", "ops=loop_modify"]),
    ("C loop, user build: create a root, delete it at once", "plain", "plain", ["ops=create_delete"]),
    ("C loop, user build: 10,000 created, then deleted (per pair)", "plain", "plain", ["ops=batches"]),
    ("C loop, user build: one root modified, two old values", "plain", "plain", ["ops=modify"]),
    ("C loop, user build: the same, the root long-lived (old)", "plain", "plain", ["ops=modify_old"]),
]
IMPLS = ["boxroot", "upstream"]
# make bench's programs at small sizes: the instructions of the section
# that bench/run.py times (the harness's `measure`, bench/src/harness.ml),
# not of the whole program, whose start-up and reports (boxroot's
# statistics, read after the timed section) are not timed. (label,
# program, arguments, divisor: what one unit of the row is).
TIMED_ROWS = [
    ("perm_count n=8 (millions)", "perm_count", ["n=8"], 1e6),
    ("synthetic n=4 (millions)", "synthetic", ["n=4"], 1e6),
    ("globroots steps=10000 (millions)", "globroots", ["steps=10000"], 1e6),
] + [
    (f"local_roots, {v}-roots: per call, depth {d}", "local_roots",
     [f"variant={v}", f"depths={d}", "calls=200000"], 200000)
    for v in ("caller", "callee") for d in (1, 2, 3, 5, 10, 100, 1000)
]


def builds():
    """{OCaml version: bench/_build/ocaml-* directory}, from the version
    each bench-build recorded."""
    out = {}
    top = os.path.join(BENCH, "_build")
    for d in sorted(os.listdir(top)) if os.path.isdir(top) else []:
        f = os.path.join(top, d, "ocaml-version")
        if os.path.exists(f):
            with open(f) as fh:
                out.setdefault(fh.read().strip(), os.path.join(top, d))
    return out


def find_build(version, known):
    """The build directory of the newest version starting with `version`."""
    matches = sorted((v for v in known if v == version or v.startswith(version + ".")),
                     key=lambda v: [int(x) for x in re.findall(r"\d+", v)])
    return (matches[-1], known[matches[-1]]) if matches else (None, None)


def count(exe, args, options=()):
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                        *options, exe] + args,
                       capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if p.returncode != 0 or m is None:
        raise RuntimeError(f"{exe} {' '.join(args)}: exit {p.returncode}: {p.stderr[-300:]}")
    return int(m.group(1))


def timed_count(exe, args):
    """Instructions of the timed section alone: the harness switches
    callgrind's collection on and off around it (bench/src/clock.c)."""
    n = count(exe, args, ["--collect-atstart=no"])
    if n == 0:
        raise RuntimeError(f"{exe}: no instruction collected: the benchmarks were built without "
                           "<valgrind/callgrind.h> (Debian: valgrind), which bench/src/clock.c "
                           "needs to switch the collection on")
    return n


def per_op(exe, args, impl):
    extra = [f"impl={impl}"] if os.path.basename(exe) == "plain.exe" else []
    a = count(exe, args + extra + [f"iters={N}"])
    b = count(exe, args + extra + [f"iters={2 * N}"])
    return (b - a) / (1.1 * N)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versions", default=os.environ.get("OCAML_VERSIONS", "5.5,5.3,4.14"),
                    help="OCaml versions, comma-separated (default: 5.5,5.3,4.14)")
    ap.add_argument("--out", default=os.path.join(BENCH, "results", "per-op", "results.md"))
    a = ap.parse_args()
    known = builds()
    cols, missing = [], []
    for want in [v for v in re.split(r"[ ,]+", a.versions) if v]:
        version, base = find_build(want, known)
        if base is None:
            missing.append(f"OCaml {want}: no build; run `OCAML_VERSION={want} make bench-build`")
            continue
        cols.append((version, base))
    for m in missing:
        print(m, file=sys.stderr)
    if not cols:
        return 2
    cells = {}
    for version, base in cols:
        for label, kind, prog, args in ROWS:
            for impl in IMPLS:
                d = (os.path.join(base, "plain", impl) if kind == "plain"
                     else os.path.join(base, "default", "bench", "build", impl))
                exe = os.path.join(d, prog + ".exe")
                v = per_op(exe, args, impl) if os.path.exists(exe) else None
                cells[(label, version, impl)] = v
                print(f"{version:8} {impl:9} {label:62} "
                      f"{'missing ' + exe if v is None else f'{v:8.2f}'}", file=sys.stderr, flush=True)
    timed = {}
    for version, base in cols:
        for label, prog, args, unit in TIMED_ROWS:
            for impl in IMPLS:
                exe = os.path.join(base, "default", "bench", "build", impl, prog + ".exe")
                v = timed_count(exe, args) / unit if os.path.exists(exe) else None
                timed[(label, version, impl)] = v
                print(f"{version:8} {impl:9} {label:62} "
                      f"{'missing ' + exe if v is None else f'{v:8.2f}'}", file=sys.stderr, flush=True)
    header = ["operation"]
    for version, _ in cols:
        header += [f"{version} boxroot", f"{version} upstream", f"*{version} ratio*"]
    def table_of(labels, values, ratio_digits):
        rows = []
        for label in labels:
            row = [label]
            for version, _ in cols:
                bx, up = (values[(label, version, i)] for i in IMPLS)
                row += ["–" if bx is None else f"{bx:.2f}", "–" if up is None else f"{up:.2f}",
                        "–" if bx is None or up is None else f"{bx / up:.{ratio_digits}f}"]
            rows.append(row)
        return md_table(header, rows)
    table = table_of([r[0] for r in ROWS], cells, 2)
    # Three digits: these differ by a few per cent at most.
    timed_table = table_of([r[0] for r in TIMED_ROWS], timed, 3)
    commit = sh(f"git -C {ROOT} rev-parse --short HEAD")
    dirty = " (with uncommitted changes)" if git_dirty() else ""
    text = "\n".join([
        "# Instructions per operation (callgrind)", "",
        f"`PER_OP=1 bench/tools/callgrind.sh` (bench/tools/per_op.py) after "
        + ", ".join(f"`OCAML_VERSION={v.rsplit('.', 1)[0]} make bench-build`" for v, _ in cols)
        + f"; commit {commit}{dirty}, {sh('gcc --version | head -1')}, "
        f"{datetime.date.today().isoformat()}. Instructions per operation, loop included: the "
        f"difference between runs of {2 * N:,} and {N:,} iterations (plus a warm-up of a tenth "
        f"each), over {int(1.1 * N):,}. Counts do not depend on the machine's load. "
        "*ratio*: boxroot / upstream 0.4. \"dune\": bench ops as `make bench-build` builds it "
        "(dune's release profile, OCaml's `ocamlc_cflags`, with -fPIC); \"user build\": "
        "bench/plain, stubs and library compiled together by `ocamlopt -ccopt -O2` "
        "(OCaml's `ocamlopt_cflags`, which on 5.3 lack -fPIC: code as for a position-independent "
        "executable, with direct accesses to thread-local and global variables).", "",
        table, "",
        "## The benchmarks' timed sections", "",
        "The instructions of the section that `make bench` times (bench/src/harness.ml's "
        "`measure`, which switches callgrind's collection on and off around it: "
        "`--collect-atstart=no`), at small sizes: a whole program would also "
        "count its start-up and its report, which reads boxroot's statistics after the timed "
        "section. Global-roots benchmarks in millions of instructions; local_roots per call "
        "(200,000 calls). The goals table of bench/run.py cites the local_roots rows "
        "(\"bound\").", "",
        timed_table, ""])
    if a.out:
        os.makedirs(os.path.dirname(a.out), exist_ok=True)
        with open(a.out, "w") as f:
            f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
