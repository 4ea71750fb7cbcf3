#!/usr/bin/env python3
"""Compares the outcomes of Lucene's core tests run on nativedir's directory and on NIOFSDirectory.

Each run file holds "class#method<TAB>PASS|FAIL|SKIP|IGNORED" lines (SuiteRunner). The runs are
given in pairs: native, then NIOFS, per package (any order of packages). Every test must have the
same outcome on both, except those in the exceptions file ("class#method<TAB>reason"), where
Lucene's test itself depends on the directory class. Prints the counts and every difference.
"""
import argparse
import collections
import sys


def read(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                key, outcome = line.split("\t")
                out[key] = outcome
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exceptions", required=True)
    ap.add_argument("runs", nargs="+", help="outcome files: per package, the native one then NIOFS's")
    a = ap.parse_args()
    exceptions = {}
    with open(a.exceptions, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                key, reason = line.split(None, 1)
                exceptions[key] = reason
    native, niofs = {}, {}
    paths = a.runs
    half = len(paths) // 2
    if len(paths) % 2:
        sys.exit("compare_outcomes: give the native runs, then the NIOFS runs, as many of each")
    for p in paths[:half]:
        native.update(read(p))
    for p in paths[half:]:
        niofs.update(read(p))
    if not native or not niofs:
        sys.exit("compare_outcomes: an empty run")
    bad = []
    excused = []
    for key in sorted(set(native) | set(niofs)):
        x, y = native.get(key, "MISSING"), niofs.get(key, "MISSING")
        if x == y:
            continue
        if key in exceptions:
            excused.append(f"  {key}: nativedir {x}, NIOFS {y} (excepted: {exceptions[key]})")
        else:
            bad.append(f"  {key}: nativedir {x}, NIOFS {y}")
    stale = [k for k in exceptions if native.get(k) == niofs.get(k)]
    count = collections.Counter(native.values())
    print(f"{len(native)} tests: " + ", ".join(f"{n} {o}" for o, n in sorted(count.items())))
    print(f"same outcome on both: {len(native) - len(bad) - len(excused)}; "
          f"excepted: {len(excused)}; different: {len(bad)}")
    for line in excused:
        print(line)
    for k in stale:
        print(f"  note: {k} is excepted but had the same outcome on both ({native.get(k)})")
    if bad:
        print("different outcomes:")
        for line in bad:
            print(line)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
