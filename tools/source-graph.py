#!/usr/bin/env python3
"""Prints the graph of boxroot/'s sources: which file uses which, and the
circles. A file and the headers of its name (chunk.c, chunk.h) are one
unit; A uses B when A includes one of B's headers, or names a function,
macro, type or variable that B alone defines. With --layers, also the
arrows that run against the layers that README.md's Architecture section lists.

  tools/source-graph.py [--layers] [DIR]      (DIR: boxroot/ by default)

Needs Universal Ctags (for the definitions)."""
import os, re, subprocess, sys
from collections import defaultdict

args = [a for a in sys.argv[1:] if not a.startswith("--")]
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
src = args[0] if args else os.path.join(root, "boxroot")
files = sorted(f for f in os.listdir(src) if f.endswith((".c", ".h")))
unit = {f: os.path.splitext(f)[0] for f in files}

# Definitions: ctags kinds f (function), d (macro), s/t/u/g (types),
# v (variable), e (enumerator); file-local ones (static) stay local.
out = subprocess.run(["ctags", "-x", "--c-kinds=fdstugve", "--_xformat=%N\t%K\t%{file}\t%F"]
                     + [os.path.join(src, f) for f in files],
                     capture_output=True, text=True, check=True).stdout
defined = defaultdict(set)
for line in out.splitlines():
    name, kind, scope, path = line.split("\t")
    scope = "F" if scope != "-" else ""
    f = os.path.basename(path)
    if scope == "F" and f.endswith(".c"):
        continue  # static: no other unit can name it
    defined[name].add(unit[f])

def strip(text):
    """The code that uses names: no comment, string, or file-scope
    declaration (a prototype or an extern, which names what another file
    defines without using it)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
    decls = re.compile(r"^extern\b[^;{}]*;|^(?!#|typedef|static|_Static)[A-Za-z_][^;{}#=]*\)\s*"
                       r"(__attribute__\s*\(\(.*?\)\)\s*)?;", re.M | re.S)
    declared = set()
    for m in decls.finditer(text):
        declared |= set(re.findall(r"\w+", m.group(0)))
    return decls.sub(" ", text), declared

# A name after `*`, `.` or `->`, or before `->`, `.`, `=`, `!=`, `,` or
# `;`, is a variable or a member that may bear a type's name (`struct
# boxroot__pool_hot *pool`); a type's name is not used so.
NAME = re.compile(r"(?<![\w.>*])(?<!\*\s)([A-Za-z_]\w*)(\s*(->|\.|!?=(?!=)|,|;|\)\s*[^\s*)]))?")
types = {line.split("\t")[0] for line in out.splitlines() if line.split("\t")[1] == "typedef"}

uses = defaultdict(lambda: defaultdict(set))
for f in files:
    text = open(os.path.join(src, f)).read()
    for inc in re.findall(r'#\s*include\s+"([^"]+)"', text):
        inc = os.path.basename(inc)
        if inc in unit and unit[inc] != unit[f]:
            uses[unit[f]][unit[inc]].add("#include " + inc)
    code, declared = strip(text)
    # A pointer to a struct needs no definition of it.
    code = re.sub(r"\bstruct\s+\w+(?=[\s*const]*\*)|^struct\s+\w+\s*;", "struct", code, flags=re.M)
    names = {m.group(1) for m in NAME.finditer(code)
             if not (m.group(1) in types and m.group(2))}
    for name in names - declared:  # what a unit declares, it need not take
        owners = defined.get(name, set())
        if len(owners) == 1:
            (o,) = owners
            if o != unit[f]:
                uses[unit[f]][o].add(name)

units = sorted(set(unit.values()))
lines = {u: sum(len(open(os.path.join(src, f)).read().splitlines())
                for f in files if unit[f] == u) for u in units}

# Circles: strongly connected components (Tarjan).
index, low, stack, on, sccs = {}, {}, [], set(), []
def visit(v):
    index[v] = low[v] = len(index); stack.append(v); on.add(v)
    for w in uses[v]:
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v: break
        sccs.append(sorted(c))
sys.setrecursionlimit(10000)
for u in units:
    if u not in index: visit(u)

arrows = sum(len(uses[u]) for u in units)
print(f"{len(units)} units, {sum(lines.values())} lines, {arrows} arrows")
for u in units:
    for v in sorted(uses[u]):
        names = sorted(uses[u][v])
        more = f", and {len(names) - 6} more" if len(names) > 6 else ""
        print(f"  {u} -> {v}: {', '.join(names[:6])}{more}")
circles = [c for c in sccs if len(c) > 1]
print(f"circles: {len(circles)}")
for c in circles:
    print("  " + " ".join(c))

if "--layers" in sys.argv:
    # The layers as README.md's Architecture section lists them: lines
    # "N. Name: file, file, ..." (files of boxroot/).
    readme = open(os.path.join(root, "README.md")).read()
    arch = readme.split("### Architecture", 1)[1].split("\n#", 1)[0]
    layer = {}
    for n, names in re.findall(r"^(\d+)\. [^:\n]*: ([^\n]*)", arch, flags=re.M):
        for name in re.findall(r"`([\w.]+)`", names):
            layer[os.path.splitext(name)[0]] = int(n)
    missing = [u for u in units if u not in layer]
    if missing:
        print("not in any layer: " + " ".join(missing))
    up = [(u, v) for u in units for v in uses[u]
          if u in layer and v in layer and layer[v] > layer[u]]
    print(f"arrows up: {len(up)}")
    for u, v in up:
        print(f"  {u} ({layer[u]}) -> {v} ({layer[v]}): {', '.join(sorted(uses[u][v]))}")
