#!/usr/bin/env python3
"""Fails when a code example of a Markdown file is not part of the program it says it comes from.

The README's examples are excerpts of the programs under examples/, which the test command builds
from the installed packages and runs: an excerpt that drifted from its program would show users
code nobody ran. Each fenced block in C, C#, Python or Java must appear, line for line and
contiguous, in the file of the last Markdown link to examples/ before it.

    readme_examples.py MARKDOWN ROOT    check MARKDOWN's blocks against files under ROOT

Exit status 0: every block found; 1: some block is not (listed), or none was checked; 2: bad usage.
"""
import os
import re
import sys

LANGUAGES = {"c", "csharp", "cs", "python", "java"}
LINK = re.compile(r"\]\((examples/[^)#\s]+)\)")


def blocks(text):
    """(line number, language, lines, the example file named before it) per fenced block."""
    source, lang, body, start = None, None, None, 0
    for n, line in enumerate(text.splitlines(), 1):
        if body is None:
            fence = re.match(r"^```(\w*)\s*$", line)
            if fence:
                lang, body, start = fence.group(1).lower(), [], n
                continue
            for m in LINK.finditer(line):
                source = m.group(1)
        elif line.startswith("```"):
            yield start, lang, body, source
            body = None
        else:
            body.append(line)


def contains(haystack, needle):
    return any(haystack[i:i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1))


def main(argv):
    if len(argv) != 3 or not os.path.isfile(argv[1]) or not os.path.isdir(argv[2]):
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        text = f.read()
    problems, checked = [], 0
    for line, lang, body, source in blocks(text):
        if lang not in LANGUAGES:
            continue
        checked += 1
        where = f"{argv[1]}:{line}"
        if source is None:
            problems.append(f"{where}: a {lang} block with no link to its program under examples/")
            continue
        path = os.path.join(argv[2], source)
        try:
            with open(path, encoding="utf-8") as f:
                program = f.read().splitlines()
        except OSError as e:
            problems.append(f"{where}: {source}: {e.strerror}")
            continue
        if not contains(program, body):
            problems.append(f"{where}: this {lang} block is not a contiguous part of {source}")
    for p in problems:
        print(p)
    print(f"readme_examples: {checked} block(s) checked, {len(problems)} not found in their program")
    return 1 if problems or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
