#!/usr/bin/python3
"""Runs Lucene (Java)'s SearchLargerThanMemory group in its quick form (two rounds) and checks
how its directories earned their rounds: at each level (a quarter and a tenth of the index as
page cache) every directory has a row; nativedir-lucene ran every round; a built-in that ran
fewer says in its row that its first round was below 0.8x the best built-in's; and the baseline
is the fastest built-in by median of those that ran every round. No timing is judged.
Exits 77 (skipped, saying why) where no memory cgroup can be made here.

    check_lucene_bench_ltm.py JAVA CLASSPATH ND_MEMLIMIT SCRATCH
"""
import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

BUILTINS = ("Lucene (Java) MMapDirectory", "Lucene (Java) NIOFSDirectory",
            "Lucene (Java) SimpleFSDirectory")
MINE = "nativedir-lucene NativeFSDirectory"


def fail(msg: str) -> int:
    print("FAIL: " + msg)
    return 1


def main() -> int:
    java, cp, memlimit, scratch = sys.argv[1:5]
    check = subprocess.run([memlimit, "check"], capture_output=True, text=True)
    if check.returncode != 0:
        print("SKIPPED: no memory cgroup here: " + (check.stderr.strip() or check.stdout.strip()))
        return 77
    scratch = Path(scratch)
    shutil.rmtree(scratch, ignore_errors=True)
    out = scratch / "out"
    proc = subprocess.run([java, "-Xms256m", "-Xmx256m", "-cp", cp,
                           "io.nativedir.lucene.bench.LuceneBench", "--quick",
                           "--only", "SearchLargerThanMemory", "--memlimit", memlimit,
                           "--cache", str(scratch / "cache"), "--dir", str(scratch / "dir"),
                           "--out", str(out)], capture_output=True, text=True, timeout=600)
    print(proc.stdout[-4000:], proc.stderr[-3000:])
    if proc.returncode != 0:
        return fail("LuceneBench exited %d" % proc.returncode)
    rows = json.loads((out / "lucene_java.json").read_text(encoding="utf-8"))["results"]
    ltm = {r["name"]: r for r in rows if r["group"] == "SearchLargerThanMemory"}
    for pct in (25, 10):
        at = ", %d%% of the index in memory" % pct
        level = {d: ltm.get(d + at) for d in BUILTINS + (MINE,)}
        if None in level.values():
            return fail("at %d%% the group lacks %s (its rows: %s)"
                        % (pct, [d for d, r in level.items() if r is None], sorted(ltm)))
        rounds = level[MINE]["runs"]
        if rounds != 2 or len(level[MINE]["rounds"]) != 2:
            return fail("%s ran %d rounds at %d%%, not the quick run's 2" % (MINE, rounds, pct))
        every = []
        for d in BUILTINS:
            r = level[d]
            if r.get("limit_pct") != pct or len(r["rounds"]) != r["runs"] or not all(v > 0 for v in r["rounds"]):
                return fail("row %r: not a rate with its rounds and level: %r" % (r["name"], r))
            if r["runs"] == rounds:
                every.append(d)
                continue
            m = re.search(r"(\d+) of (\d+) rounds \(far behind at this limit: its first round "
                          r"([0-9.]+)x the best built-in's, below 0\.8x\)", r["note"])
            if r["runs"] != 1 or not m or float(m.group(3)) >= 0.8:
                return fail("row %r ran %d of %d rounds without saying it was far behind: %r"
                            % (r["name"], r["runs"], rounds, r["note"]))
        if not every:
            return fail("at %d%% no built-in ran every round" % pct)
        best = max(every, key=lambda d: statistics.median(level[d]["rounds"]))
        if level[MINE]["baseline"] != best + at:
            return fail("at %d%% the baseline is %r, not the fastest built-in that ran every round (%s)"
                        % (pct, level[MINE]["baseline"], best))
        print("ok   %d%%: every round: %s; baseline %s" % (pct, ", ".join(every), best))
    return 0


if __name__ == "__main__":
    sys.exit(main())
