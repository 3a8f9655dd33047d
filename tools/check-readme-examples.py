#!/usr/bin/env python3
"""The README's quick starts are the files of examples/, verbatim.

In README.md, a line

    <!-- file: examples/c/dune -->

is followed by a fenced code block whose text must be that file's, byte for
byte; tools/test-examples.sh builds and runs the files, so the README shows
code that works. Every file of examples/ must be shown once (a quick start
is complete: nothing the reader would have to guess).

A line `<!-- output: examples/c -->` is followed by a block that shows
what that example prints; tools/test-examples.sh compares the program's
output with it.

Usage: tools/check-readme-examples.py          check; exit 1 on a difference
       tools/check-readme-examples.py --write  rewrite the README's blocks
                                               from the files
       tools/check-readme-examples.py --output examples/c
                                               print the output the README
                                               shows for that example
"""
import difflib
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(REPO, "README.md")
EXAMPLES = "examples"
MARKER = re.compile(r"^<!-- file: (\S+) -->$")
OUTPUT_MARKER = re.compile(r"^<!-- output: (\S+) -->$")
FENCE = re.compile(r"^```")
# Made by building the examples, never part of them.
IGNORED_DIRS = {"_build", "_cargo", "target", "vendor"}


def example_files():
    found = []
    for root, dirs, files in os.walk(os.path.join(REPO, EXAMPLES)):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS)
        for name in sorted(files):
            found.append(os.path.relpath(os.path.join(root, name), REPO))
    return found


def shown_blocks(lines, marker=MARKER):
    """(path, index of the block's first text line, index of its closing
    fence) for every marker of the README."""
    blocks = []
    for i, line in enumerate(lines):
        m = marker.match(line.rstrip("\n"))
        if not m:
            continue
        opening = i + 1
        if opening >= len(lines) or not FENCE.match(lines[opening]):
            sys.exit(f"README.md:{i + 1}: {m.group(1)}: no code block right after the marker")
        closing = opening + 1
        while closing < len(lines) and not FENCE.match(lines[closing]):
            closing += 1
        if closing == len(lines):
            sys.exit(f"README.md:{opening + 1}: unclosed code block")
        blocks.append((m.group(1), opening + 1, closing))
    return blocks


def main():
    write = sys.argv[1:] == ["--write"]
    with open(README) as f:
        lines = f.readlines()
    if sys.argv[1:2] == ["--output"] and len(sys.argv) == 3:
        outputs = [(first, closing) for path, first, closing
                   in shown_blocks(lines, OUTPUT_MARKER) if path == sys.argv[2]]
        if len(outputs) != 1:
            sys.exit(f"README.md shows the output of {sys.argv[2]} {len(outputs)} times (want once)")
        first, closing = outputs[0]
        sys.stdout.write("".join(lines[first:closing]))
        return
    if sys.argv[1:] not in ([], ["--write"]):
        sys.exit(__doc__)
    blocks = shown_blocks(lines)
    problems = []
    shown = [path for path, _, _ in blocks]
    for path in example_files():
        if shown.count(path) != 1:
            problems.append(f"{path}: shown {shown.count(path)} times in README.md (want once)")
    # From the last block up, so that rewriting keeps earlier indices right.
    for path, first, closing in reversed(blocks):
        full = os.path.join(REPO, path)
        if not os.path.isfile(full):
            problems.append(f"README.md:{first}: {path}: no such file")
            continue
        with open(full) as f:
            want = f.read()
        if not want.endswith("\n"):
            problems.append(f"{path}: does not end with a newline")
            continue
        have = "".join(lines[first:closing])
        if have == want:
            continue
        if write:
            lines[first:closing] = want.splitlines(keepends=True)
        else:
            diff = difflib.unified_diff(
                want.splitlines(keepends=True), have.splitlines(keepends=True),
                fromfile=path, tofile=f"README.md (line {first + 1})")
            problems.append(f"{path}: README.md shows other text:\n" + "".join(diff))
    if write:
        with open(README, "w") as f:
            f.writelines(lines)
    for p in problems:
        print(f"check-readme-examples: {p}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"check-readme-examples: {len(blocks)} files of {EXAMPLES}/ shown verbatim in README.md")


if __name__ == "__main__":
    main()
