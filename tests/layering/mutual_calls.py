#!/usr/bin/env python3
"""Fails when two of the library's C files call each other's functions.

The library is layered: a file calls down (the OS layer, the handle table,
the error calls) and never back up, so each file can be read with only what
is below it in mind. This reads the object files a build made, with nm, and
lists every pair of sources where each defines a function the other calls.

    mutual_calls.py [--nm NM] OBJECT...

Exit status 0: no such pair; 1: pairs found (listed); 2: bad usage or nm failed.
"""
import argparse
import os
import subprocess
import sys


def symbols(nm, obj):
    """(functions obj defines, symbols obj leaves undefined)."""
    out = subprocess.run([nm, "-P", obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "T":  # a global function this object defines
            defined.add(name)
        elif kind == "U":
            undefined.add(name)
    return defined, undefined


def source_name(obj):
    """src/posix/file.c from .../nativedir_static.dir/src/posix/file.c.o(bj)."""
    path = os.path.splitext(obj)[0]
    i = path.rfind(".dir" + os.sep)
    return path[i + len(".dir") + 1:] if i >= 0 else os.path.basename(path)


def mutual_pairs(objects):
    """[(a, b, calls a->b, calls b->a)] for every pair calling each other."""
    owner = {}
    for src, (defined, _) in objects.items():
        for name in defined:
            owner[name] = src
    calls = {}
    for src, (_, undefined) in objects.items():
        for name in undefined:
            dst = owner.get(name)
            if dst is not None and dst != src:
                calls.setdefault((src, dst), set()).add(name)
    pairs = []
    for (a, b), names in sorted(calls.items()):
        back = calls.get((b, a))
        if back and a < b:
            pairs.append((a, b, sorted(names), sorted(back)))
    return pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nm", default="nm")
    ap.add_argument("objects", nargs="+")
    args = ap.parse_args()
    objects = {}
    try:
        for obj in args.objects:
            objects[source_name(obj)] = symbols(args.nm, obj)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"mutual_calls: {e}", file=sys.stderr)
        return 2
    pairs = mutual_pairs(objects)
    for a, b, ab, ba in pairs:
        print(f"{a} and {b} call each other:\n  {a} -> {b}: {', '.join(ab)}\n"
              f"  {b} -> {a}: {', '.join(ba)}")
    print(f"mutual_calls: {len(objects)} files, {len(pairs)} pair(s) calling each other")
    return 1 if pairs else 0


if __name__ == "__main__":
    sys.exit(main())
