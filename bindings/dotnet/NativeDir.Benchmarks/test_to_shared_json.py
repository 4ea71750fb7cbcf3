#!/usr/bin/python3
"""Checks to_shared_json.py on a made-up BenchmarkDotNet run: a ratio target is judged on the
per-round ratio of paired.json where the rows have one (and says so in its target), on the ratio
of the medians where they have none, and a paired row whose baseline has a different number of
rounds is an error, not a guess.

    test_to_shared_json.py   (exit 0 when every check holds)
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(msg, proc=None):
    print("test_to_shared_json: FAIL: " + msg)
    if proc is not None:
        print(proc.stdout[-3000:], proc.stderr[-3000:])
    sys.exit(1)


def bdn(method, median_ms):
    ns = median_ms * 1e6
    return {"Type": "ReadAsync4K", "Method": method,
            "Statistics": {"N": 9, "Median": ns, "Min": ns * 0.9, "Max": ns * 1.2},
            "Memory": {"BytesAllocatedPerOperation": 0}}


def row(name, baseline=None, max_ratio=None):
    return {"group": "ReadAsync4K", "name": name, "baseline": baseline, "max_ratio": max_ratio,
            "faster_than": None, "min_speedup": None, "zero_alloc": False, "note": None}


def convert(d, paired):
    os.makedirs(os.path.join(d, "results"), exist_ok=True)
    # medians 14 / 10 ms: 1.4 on the ratio of medians, a miss of <= 1.1
    with open(os.path.join(d, "results", "x-report-full.json"), "w", encoding="utf-8") as fh:
        json.dump({"Benchmarks": [bdn("FileStreamRead", 10.0), bdn("NativeDirAsync", 14.0),
                                  bdn("RandomAccessReadAsync", 12.0)]}, fh)
    with open(os.path.join(d, "rows.json"), "w", encoding="utf-8") as fh:
        json.dump({"file_mib": 64, "random_reads": 1000, "rows": {
            "ReadAsync4K.FileStreamRead": row("FileStream.Read"),
            "ReadAsync4K.NativeDirAsync": row("NativeDir ReadAsync", "FileStream.Read", 1.1),
            "ReadAsync4K.RandomAccessReadAsync": row("RandomAccess.ReadAsync", "FileStream.Read"),
        }}, fh)
    p = os.path.join(d, "paired.json")
    if paired is None:
        if os.path.exists(p):
            os.remove(p)
    else:
        with open(p, "w", encoding="utf-8") as fh:
            json.dump(paired, fh)
    out = os.path.join(d, "dotnet.json")
    proc = subprocess.run([sys.executable, os.path.join(HERE, "to_shared_json.py"), d, out],
                          capture_output=True, text=True)
    rows = None
    if proc.returncode == 0:
        with open(out, encoding="utf-8") as fh:
            rows = {r["name"]: r for r in json.load(fh)["results"]}
    return proc, rows


def main():
    with tempfile.TemporaryDirectory() as d:
        # rounds where the host slowed the baseline's minute, not the row's: per round the
        # row is 1.05, 0.98, 1.02 of its baseline (median 1.02)
        proc, rows = convert(d, {"ReadAsync4K.FileStreamRead": [20.0, 10.0, 10.0],
                                 "ReadAsync4K.NativeDirAsync": [21.0, 9.8, 10.2]})
        if rows is None:
            fail("a good run did not convert", proc)
        r = rows["NativeDir ReadAsync"]
        if r["ratio"] != 1.4 or r.get("ratio_paired") != 1.02 or r.get("paired_rounds") != 3:
            fail("ratio %r, per-round %r, rounds %r: expected 1.4, 1.02, 3"
                 % (r["ratio"], r.get("ratio_paired"), r.get("paired_rounds")))
        if r["met"] is not True or r["target"] != "<= 1.1 (per-round)":
            fail("the target must be judged on the per-round ratio: met %r, target %r"
                 % (r["met"], r["target"]))
        if "ratio_paired" in rows["RandomAccess.ReadAsync"]:
            fail("a row without paired rounds got a per-round ratio")
        # the paired rounds reach the shared JSON, so that a miss is printed round by round
        if r.get("rounds") != [21.0, 9.8, 10.2] or \
                rows["FileStream.Read"].get("rounds") != [20.0, 10.0, 10.0]:
            fail("the paired rounds are not in the rows: %r, %r"
                 % (r.get("rounds"), rows["FileStream.Read"].get("rounds")))
        if "rounds" in rows["RandomAccess.ReadAsync"]:
            fail("a row without paired rounds got rounds")

        # per round 1.2: a miss whatever the medians say
        proc, rows = convert(d, {"ReadAsync4K.FileStreamRead": [10.0, 10.0, 10.0],
                                 "ReadAsync4K.NativeDirAsync": [12.0, 12.0, 12.0]})
        if rows is None or rows["NativeDir ReadAsync"]["met"] is not False:
            fail("a per-round ratio of 1.2 must miss <= 1.1", proc)

        proc, rows = convert(d, None)
        if rows is None:
            fail("a run without paired.json did not convert", proc)
        r = rows["NativeDir ReadAsync"]
        if r["met"] is not False or r["target"] != "<= 1.1" or "ratio_paired" in r:
            fail("without paired.json the ratio of the medians decides: met %r, target %r"
                 % (r["met"], r["target"]))

        proc, rows = convert(d, {"ReadAsync4K.FileStreamRead": [10.0, 10.0],
                                 "ReadAsync4K.NativeDirAsync": [10.0, 10.0, 10.0]})
        if proc.returncode == 0 or "paired rounds" not in proc.stderr:
            fail("rounds that do not pair up must fail the conversion", proc)
    print("test_to_shared_json: ok")


if __name__ == "__main__":
    main()
