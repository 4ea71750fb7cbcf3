#!/usr/bin/python3
"""Turns one BenchmarkDotNet run of NativeDir.Benchmarks into the shared results format.

    to_shared_json.py RESULTS_DIR OUT_JSON

RESULTS_DIR is the benchmark's --out: BenchmarkDotNet's full JSON report under results/,
rows.json (each benchmark's row name, baseline and target, written by the benchmark itself) and
paired.json (the rows with a ratio target and their baselines timed back to back, round by
round). A ratio target is judged on the median of the per-round ratios (ratio_paired), as the C
and Python suites judge theirs; without paired.json, on the ratio of BenchmarkDotNet's medians.
Exit status 1 if a benchmark has no numbers or a row lacks its baseline.
"""
import glob
import json
import os
import platform
import statistics
import sys
from datetime import datetime, timezone


# an allocation per operation below this is a one-off (or the host's background) spread over the
# invocation's operations, not an allocation per operation (the smallest object is 24 B)
ALLOC_MAX_PER_OP = 8


def main(results_dir, out_path):
    reports = sorted(glob.glob(os.path.join(results_dir, "results", "*-report-full.json")))
    if not reports:
        sys.exit("to_shared_json: no BenchmarkDotNet *-report-full.json in %s/results" % results_dir)
    with open(reports[-1], encoding="utf-8") as fh:
        bdn = json.load(fh)
    with open(os.path.join(results_dir, "rows.json"), encoding="utf-8") as fh:
        meta = json.load(fh)
    paired_path = os.path.join(results_dir, "paired.json")
    paired = {}
    if os.path.exists(paired_path):
        with open(paired_path, encoding="utf-8") as fh:
            paired = json.load(fh)
    key_of = {(row["group"], row["name"]): key for key, row in meta["rows"].items()}

    measured = {}
    for b in bdn["Benchmarks"]:
        key = "%s.%s" % (b["Type"], b["Method"])
        stats = b.get("Statistics")
        if not stats or not stats.get("N"):
            sys.exit("to_shared_json: %s has no measurements (did it fail?)" % key)
        measured[key] = {
            "median": stats["Median"] / 1e6, "min": stats["Min"] / 1e6, "max": stats["Max"] / 1e6,
            "runs": stats["N"],
            "alloc_bytes": (b.get("Memory") or {}).get("BytesAllocatedPerOperation"),
        }

    by_name = {}
    for key, row in meta["rows"].items():
        if key not in measured:
            sys.exit("to_shared_json: %s was not measured" % key)
        by_name[(row["group"], row["name"])] = measured[key]

    results = []
    for key, row in meta["rows"].items():
        m = measured[key]
        group = row["group"]
        out = {"group": group, "name": row["name"], "unit": "ms",
               "median": round(m["median"], 4), "min": round(m["min"], 4), "max": round(m["max"], 4),
               "runs": m["runs"], "baseline": row["baseline"], "ratio": None,
               "target": None, "met": None, "alloc_bytes": m["alloc_bytes"], "note": row["note"]}
        if paired.get(key):
            # the paired rounds' times, the row's and its baseline's in the same order, so that a
            # miss is shown round by round (bench/runner.py)
            out["rounds"] = [round(v, 4) for v in paired[key]]
        targets, met = [], []
        if row["baseline"]:
            base = by_name.get((group, row["baseline"]))
            if base is None:
                sys.exit("to_shared_json: %s: no baseline row %r" % (key, row["baseline"]))
            out["ratio"] = round(m["median"] / base["median"], 4)
            mine, theirs = paired.get(key), paired.get(key_of[(group, row["baseline"])])
            if mine and theirs:
                if len(mine) != len(theirs):
                    sys.exit("to_shared_json: %s: %d paired rounds, its baseline %d"
                             % (key, len(mine), len(theirs)))
                out["ratio_paired"] = round(statistics.median(
                    a / b for a, b in zip(mine, theirs)), 4)
                out["paired_rounds"] = len(mine)
            if row["max_ratio"]:
                judged = out.get("ratio_paired", out["ratio"])
                targets.append("<= %g%s" % (row["max_ratio"],
                                            " (per-round)" if "ratio_paired" in out else ""))
                met.append(judged <= row["max_ratio"])
        if row["faster_than"]:
            slow = by_name[(group, row["faster_than"])]
            out["speedup"] = round(slow["median"] / m["median"], 2)
            targets.append(">= %gx faster than %s" % (row["min_speedup"], row["faster_than"]))
            met.append(out["speedup"] >= row["min_speedup"])
        if row["zero_alloc"]:
            # judged on the benchmark thread's own count (rows.json): MemoryDiagnoser's in-process
            # figure is process-wide and picks up the host's background allocations
            out["thread_alloc_bytes"] = row.get("thread_alloc_bytes")
            ops, every = row.get("ops_per_invocation"), row.get("all_thread_alloc_bytes")
            if ops and every is not None:
                # An invocation of thousands of reads: judged per read, on the benchmark thread
                # and on every thread (a ring's completion thread, the thread pool), counted as
                # MemoryDiagnoser counts. One object per read would be >= 24 B; the host's
                # background allocations spread over the reads stay far below the bound.
                per_op = every / ops
                thread_per_op = (row.get("thread_alloc_bytes") or 0) / ops
                out["all_thread_alloc_bytes"] = every
                out["all_thread_alloc_per_op"] = round(per_op, 3)
                targets.append("< %d B allocated/read (benchmark thread and all threads)"
                               % ALLOC_MAX_PER_OP)
                met.append(row.get("thread_alloc_bytes") is not None
                           and thread_per_op < ALLOC_MAX_PER_OP and per_op < ALLOC_MAX_PER_OP)
                out["note"] = ("%s; per invocation of %d reads (least of three): %d B on the "
                               "benchmark thread, %d B on all threads = %.2f B/read "
                               "(MemoryDiagnoser's figure counts all threads, the host's included)"
                               % (row["note"], ops, row.get("thread_alloc_bytes") or 0, every, per_op))
            else:
                targets.append("0 B allocated/op (benchmark thread)")
                met.append(row.get("thread_alloc_bytes") == 0)
        if targets:
            out["target"] = " and ".join(targets)
            out["met"] = all(met)
        results.append(out)

    doc = {"suite": "dotnet", "file_mib": meta["file_mib"],
           "host": " ".join((platform.system(), platform.release(), platform.machine())),
           "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "tool": "BenchmarkDotNet in-process; alloc_bytes: MemoryDiagnoser (process-wide), "
                   "thread_alloc_bytes: the benchmark thread alone, all_thread_alloc_bytes: every "
                   "thread over one invocation (least of three)",
           "random_reads": meta["random_reads"], "results": results}
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    for r in results:
        flag = "" if r["met"] is None else ("  met" if r["met"] else "  MISSED")
        print("%-22s %-45s %10.3f ms  ratio %-7s per-round %-7s alloc %-6s thread %-5s%s" % (
            r["group"], r["name"], r["median"], r["ratio"], r.get("ratio_paired", ""),
            r["alloc_bytes"], r.get("thread_alloc_bytes", ""), flag))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
