#!/usr/bin/env python3
"""Fails when a doc or source file of the project names an issue number.

Docs and comments say what the code is and why; which issue asked for it is history, and git
keeps that. Citations of other projects' trackers are written as owner/repo#N or "PR #N",
which this does not match.

    no_issue_numbers.py ROOT            scan every doc and source file under ROOT
    no_issue_numbers.py --text TEXT     scan TEXT alone (the test's negative control)

Exit status 0: none found; 1: found (listed); 2: bad usage.
"""
import os
import re
import sys

PATTERN = re.compile(r"\bissues?[ -]#?\d+", re.IGNORECASE)
SUFFIXES = (".md", ".c", ".h", ".cs", ".java", ".py", ".cmake", ".sh", ".csproj", ".props",
            ".targets", ".i", ".toml", ".in", ".txt", ".json")
SKIP_DIRS = {".git", "build", "corpus", "node_modules", "__pycache__"}


def scan_text(text, where):
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in PATTERN.finditer(line):
            found.append(f"{where}:{n}: {m.group(0)!r} in: {line.strip()[:120]}")
    return found


def scan_tree(root):
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("build"))
        for name in sorted(filenames):
            if not (name.endswith(SUFFIXES) or name == "CMakeLists.txt"):
                continue
            path = os.path.join(dirpath, name)
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue
            found += scan_text(text, os.path.relpath(path, root))
    return found


def main(argv):
    if len(argv) == 3 and argv[1] == "--text":
        found = scan_text(argv[2], "<text>")
    elif len(argv) == 2 and os.path.isdir(argv[1]):
        found = scan_tree(argv[1])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for line in found:
        print(line)
    print(f"no_issue_numbers: {len(found)} mention(s) of an issue number")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
