#!/usr/bin/python3
"""Runs the Java benchmark's LargerThanMemory group in its quick form and checks the rows it
writes at each level (a quarter and a tenth of the file as page cache): FileChannel (the
baseline), nativedir's random input with its per-round target against it, MappedByteBuffer beside
them, each with its rounds, its CPU per read and its level. No timing is judged.
Exits 77 (skipped, saying why) where no memory cgroup can be made here.

    check_bench_ltm.py JAVA CLASSPATH ND_MEMLIMIT SCRATCH
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path


def main() -> int:
    java, cp, memlimit, scratch = sys.argv[1:5]
    check = subprocess.run([memlimit, "check"], capture_output=True, text=True)
    if check.returncode != 0:
        print("SKIPPED: no memory cgroup here: " + (check.stderr.strip() or check.stdout.strip()))
        return 77
    scratch = Path(scratch)
    shutil.rmtree(scratch, ignore_errors=True)
    out = scratch / "out"
    proc = subprocess.run([java, "-Xmx256m", "-cp", cp, "io.nativedir.bench.JavaBench", "--quick",
                           "--only", "LargerThanMemory", "--memlimit", memlimit,
                           "--dir", str(scratch / "dir"), "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    print(proc.stdout[-3000:], proc.stderr[-3000:])
    if proc.returncode != 0:
        print("FAIL: JavaBench exited %d" % proc.returncode)
        return 1
    rows = json.loads((out / "java.json").read_text(encoding="utf-8"))["results"]
    ltm = {r["name"]: r for r in rows if r["group"] == "LargerThanMemory"}
    judged = []
    for pct, mib in ((25, 20), (10, 8)):  # the quick file is 80 MiB
        at = ", %d%% of the file in memory" % pct
        fc = "FileChannel.read(direct ByteBuffer, pos) 4 KiB" + at
        nd = "nativedir read(pos, direct ByteBuffer) (buffered, RANDOM)" + at
        mb = "MappedByteBuffer.get(pos, byte[]) 4 KiB" + at
        level = {n: ltm.get(n) for n in (fc, nd, mb)}
        if None in level.values():
            print("FAIL: at %d%% the group lacks %s (its rows: %s)"
                  % (pct, [n for n, r in level.items() if r is None], sorted(ltm)))
            return 1
        for r in level.values():
            if r["unit"] != "IOPS" or len(r["rounds"]) != r["runs"] or r["runs"] < 2 or \
                    not all(v > 0 for v in r["rounds"]) or not r["cpu_us_per_op"] > 0 or \
                    not r["min"] <= r["median"] <= r["max"]:
                print("FAIL: row %r is not a rate with its rounds and CPU: %r" % (r["name"], r))
                return 1
            if "memory cgroup of %d MiB" % mib not in r["note"] or r.get("limit_pct") != pct:
                print("FAIL: row %r does not say its limit: %r, limit_pct %r"
                      % (r["name"], r["note"], r.get("limit_pct")))
                return 1
        r = level[nd]
        paired = sorted(a / b for a, b in zip(r["rounds"], level[fc]["rounds"]))
        want = paired[len(paired) // 2] if len(paired) % 2 else \
            (paired[len(paired) // 2 - 1] + paired[len(paired) // 2]) / 2
        if r["baseline"] != fc or r["target"] != ">= 0.9 (per-round)" or \
                abs(r["ratio_paired"] - want) > 1e-3 or r["met"] != (r["ratio_paired"] >= 0.9):
            print("FAIL: nativedir's row is not judged per round against FileChannel: %r" % r)
            return 1
        if level[mb]["baseline"] != fc or level[mb]["target"] is not None or \
                level[fc]["baseline"] is not None:
            print("FAIL: the baseline and the mapping's row are not as documented")
            return 1
        judged.append("%d%% %.3f" % (pct, r["ratio_paired"]))
    if len(ltm) != 6 or len(rows) != 6:
        print("FAIL: the group's rows are %s (and %d rows in all)" % (sorted(ltm), len(rows)))
        return 1
    if any(scratch.joinpath("dir").glob("*/ltm.dat")):
        print("FAIL: the group left its file behind")
        return 1
    print("ok: 6 LargerThanMemory rows; nativedir per round of FileChannel at " + ", ".join(judged))
    return 0


if __name__ == "__main__":
    sys.exit(main())
