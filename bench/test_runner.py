#!/usr/bin/python3
"""Checks bench/runner.py on real results: it merges another suite's file into
the same groups, writes report.md and a PNG chart, shows rates (IOPS) as
higher-is-better with their second comparison, puts a summary first (summary.png
and a table naming each job it found, with the Lucene.NET memory-limit curves),
prints a missed row's rounds (and names a row judged per round without them), and
names a broken file with a non-zero exit instead of dropping it silently.

    test_runner.py RUNNER RESULTS_DIR   (RESULTS_DIR holds the smoke run's c.json)
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile


def run(runner, d):
    return subprocess.run([sys.executable, runner, d], capture_output=True, text=True)


def fail(msg, proc=None):
    print("test_runner: FAIL: " + msg)
    if proc is not None:
        print(proc.stdout[-3000:], proc.stderr[-3000:])
    sys.exit(1)


def main():
    runner, results = sys.argv[1], sys.argv[2]
    with open(os.path.join(results, "c.json"), encoding="utf-8") as fh:
        c = json.load(fh)
    groups = {r["group"] for r in c["results"]}
    with tempfile.TemporaryDirectory() as d:
        shutil.copy(os.path.join(results, "c.json"), d)
        other = {"suite": "python", "file_mib": 64, "host": "test", "date": "2026-01-01T00:00:00Z",
                 "results": [
                     {"group": "ReadRandom", "name": "os.pread", "unit": "ms", "median": 2.0,
                      "min": 1.9, "max": 2.2, "runs": 3, "rounds": [2.0, 1.9, 2.2],
                      "baseline": None, "ratio": None,
                      "target": None, "met": None, "alloc_bytes": None, "note": None},
                     {"group": "ReadRandom", "name": "readinto_at | buffered", "unit": "ms",
                      "median": 2.5, "min": 2.4, "max": 2.6, "runs": 3,
                      "rounds": [2.5, 2.6, 2.42], "baseline": "os.pread",
                      "ratio": 1.25, "target": "<= 1.2", "met": False, "alloc_bytes": 0,
                      "note": "pipe in the name must not break the table"},
                     {"group": "PythonOnly", "name": "something new", "unit": "ms",
                      "median": 1.0, "min": 1.0, "max": 1.0, "runs": 1, "baseline": None,
                      "ratio": None, "target": None, "met": None},
                     {"group": "PythonRate", "name": "sync reads", "unit": "IOPS",
                      "median": 1000.0, "min": 900.0, "max": 1100.0, "runs": 3, "baseline": None,
                      "rounds": [1000.0, 900.0, 1100.0],
                      "ratio": None, "target": None, "met": None},
                     {"group": "PythonRate", "name": "device limit", "unit": "IOPS",
                      "median": 5000.0, "min": 4900.0, "max": 5100.0, "runs": 3,
                      "rounds": [5000.0, 4900.0, 5100.0],
                      "baseline": "sync reads", "ratio": 5.0, "target": None, "met": None},
                     {"group": "PythonRate", "name": "async reads", "unit": "IOPS",
                      "median": 3000.0, "min": 2900.0, "max": 3100.0, "runs": 3,
                      "rounds": [3000.0, 2900.0, 3100.0],
                      "baseline": "sync reads", "ratio": 3.0, "target": ">= 3x, >= 0.70",
                      "met": False, "cpu_us_per_op": 12.5,
                      "also": [{"baseline": "device limit", "ratio": 0.6, "ratio_paired": 0.55,
                                "target": ">= 0.70", "met": False}]}]}
        with open(os.path.join(d, "python.json"), "w", encoding="utf-8") as fh:
            json.dump(other, fh)
        # the Lucene.NET suites: a search row with a target and the memory-limit curves
        ltm = []
        for pct, mine, theirs in ((100, 300.0, 290.0), (50, 240.0, 200.0), (25, 180.0, 120.0),
                                  (10, 120.0, 60.0)):
            base = "MMapDirectory, %d%% of the index in memory" % pct
            ltm.append({"group": "SearchLargerThanMemory", "name": base, "unit": "q/s",
                        "median": theirs, "baseline": None, "limit_pct": pct})
            ltm.append({"group": "SearchLargerThanMemory", "unit": "q/s", "median": mine,
                        "name": "NativeFSDirectory, %d%% of the index in memory" % pct,
                        "baseline": base, "ratio": mine / theirs, "limit_pct": pct,
                        "target": ">= 1.2x the best built-in (per round)" if pct == 25 else None,
                        "met": True if pct == 25 else None})
        ltm.append({"group": "ParallelSearch", "name": "SimpleFSDirectory", "unit": "ms",
                    "median": 400.0, "baseline": None})
        ltm.append({"group": "ParallelSearch", "name": "NativeFSDirectory", "unit": "ms",
                    "median": 220.0, "baseline": "SimpleFSDirectory", "ratio": 0.55,
                    "target": ">= 1.2x qps of the best built-in", "met": True})
        with open(os.path.join(d, "lucene_ltm.json"), "w", encoding="utf-8") as fh:
            json.dump({"suite": "lucene", "results": ltm}, fh)

        proc = run(runner, d)
        if proc.returncode != 0:
            fail("runner exited %d on good input" % proc.returncode, proc)
        with open(os.path.join(d, "report.md"), encoding="utf-8") as fh:
            report = fh.read()
        for g in groups | {"PythonOnly"}:
            if "## %s\n" % g not in report:
                fail("report.md has no table for group %s" % g)
        for r in c["results"]:
            if r["name"] not in report:
                fail("report.md lacks the C row %r" % r["name"])
        section = report.split("## ReadRandom\n", 1)[1].split("\n## ", 1)[0]
        if "| python | readinto_at \\| buffered |" not in section or "| c |" not in section:
            fail("ReadRandom does not show both suites side by side:\n" + section)
        if "| 1.250 |" not in section or "**no**" not in section:
            fail("the python row's ratio or missed target is not shown")
        # a miss says why: its rounds' ratios to the baseline's same rounds, median and spread
        why = "rounds' ratios to os.pread 1.250 1.368 1.100; median 1.250, spread 1.100–1.368"
        if why not in section:
            fail("the missed row's rounds are not beside it:\n" + section)
        misses = report.split("## Missed targets, round by round\n", 1)
        if len(misses) < 2 or ("python / ReadRandom / readinto_at | buffered (target <= 1.2): "
                               + why) not in misses[1].split("\n## ", 1)[0]:
            fail("the missed targets section does not list the miss with its rounds")
        # a miss of a second target (the device's limit beside the baseline) shows the rounds
        # against that row, not against the baseline whose target was met
        why_also = ("python / PythonRate / async reads (target >= 3x, >= 0.70): rounds' ratios "
                    "to device limit 0.600 0.592 0.608; median 0.600, spread 0.592–0.608")
        if why_also not in misses[1].split("\n## ", 1)[0]:
            fail("a missed second target is not shown against its own row:\n" + misses[1])
        # a row judged per round whose file lacks the rounds (its own or its baseline's) is
        # named, so that a miss there can be shown round by round: the memory-limit row at 25%
        # here has none; the C rows, judged per round too, carry theirs and are not named
        bare = [l for l in misses[1].split("\n## ", 1)[0].splitlines()
                if l.startswith("Judged per round, but without the rounds")]
        if not bare or "lucene / SearchLargerThanMemory / NativeFSDirectory, 25% of the index in " \
                "memory" not in bare[0]:
            fail("a row judged per round without its rounds is not named:\n" + misses[1])
        if "c / " in bare[0] or not any("per round" in str(r.get("target")) for r in c["results"]):
            fail("rows that carry their rounds are named as lacking them:\n" + bare[0])
        # the summary comes first and names each job it found, with a cell for each
        if not report.startswith("# nativedir benchmark results\n\n![summary") or \
                report.index("## Summary") > report.index("## Missed targets"):
            fail("the summary is not the report's first figure and section")
        summary = report.split("## Summary\n", 1)[1].split("\n## ", 1)[0]
        found = summary.split("Jobs found: ", 1)[1].split(".\n", 1)[0].split(", ")
        for job, runtime in (("random", "Python"), ("larger than memory", "Lucene.NET"),
                             ("search", "Lucene.NET")):
            if job not in found or "| %s | %s |" % (runtime, job) not in summary:
                fail("the summary lacks %s / %s:\n%s" % (runtime, job, summary))
        for job in found:
            if "| %s |" % job not in summary:
                fail("the summary names job %r but has no cell for it" % job)
        if "| Lucene.NET | larger than memory | 1.50x | >= 1.20x | yes |" not in summary or \
                "| Python | random | 0.80x | >= 0.83x | **no** |" not in summary or \
                "| Lucene.NET | search | 1.82x | >= 1.20x | yes |" not in summary:
            fail("a summary cell is not nativedir's speed against its target:\n" + summary)
        if "NativeFSDirectory 100% 300, 50% 240, 25% 180, 10% 120" not in summary:
            fail("the summary lacks the memory-limit curves:\n" + summary)
        if "summary: " not in proc.stdout or "larger than memory" not in proc.stdout:
            fail("the runner does not say which jobs the summary found", proc)
        with open(os.path.join(d, "summary.png"), "rb") as fh:
            png = fh.read()
        if not png.startswith(b"\x89PNG\r\n\x1a\n") or len(png) < 10000:
            fail("summary.png is not a real PNG (%d bytes)" % len(png))
        rate = report.split("## PythonRate\n", 1)[1].split("\n## ", 1)[0]
        for want in ("higher is better", "| 3000 IOPS |", "| 3.000 |",
                     "vs device limit: 0.600, per-round 0.550 (target >= 0.70, **not met**)",
                     "CPU 12.5 µs per op"):
            if want not in rate:
                fail("the rate group lacks %r:\n%s" % (want, rate))
        if "RingRandomQD32" not in groups:
            fail("the C results have no RingRandomQD32 group")
        ring = report.split("## RingRandomQD32\n", 1)[1].split("\n## ", 1)[0]
        if "higher is better" not in ring or "vs fio randread QD32" not in ring:
            fail("RingRandomQD32 is not shown as rates beside fio:\n" + ring)
        # the smoke run measured its CPUs: the report shows them, and warns exactly
        # when the slowest is below 0.8 of the fastest
        if len(c.get("cpu_speed_start") or []) < 1 or "CPU 0 " not in report:
            fail("the C suite's CPU speeds are missing from c.json or the report")
        for speeds, warned in (([1.0, 0.5], True), ([1.0, 0.95], False)):
            other["cpu_speed_start"] = other["cpu_speed_end"] = speeds
            with open(os.path.join(d, "python.json"), "w", encoding="utf-8") as fh:
                json.dump(other, fh)
            cc = dict(c, cpu_speed_start=[1.0], cpu_speed_end=[1.0])
            with open(os.path.join(d, "c.json"), "w", encoding="utf-8") as fh:
                json.dump(cc, fh)
            proc = run(runner, d)
            with open(os.path.join(d, "report.md"), encoding="utf-8") as fh:
                text = fh.read()
            if proc.returncode != 0 or ("The CPUs were not alike" in text) != warned or \
                    "CPU 1 %.2f / %.2f" % (speeds[1], speeds[1]) not in text:
                fail("CPU speeds %s: warning %s expected" % (speeds, warned), proc)
        # negative control: no row with a ratio target, no summary figure
        with tempfile.TemporaryDirectory() as bare:
            with open(os.path.join(bare, "python.json"), "w", encoding="utf-8") as fh:
                json.dump(dict(other, results=other["results"][2:4]), fh)
            proc = run(runner, bare)
            with open(os.path.join(bare, "report.md"), encoding="utf-8") as fh:
                text = fh.read()
            if os.path.exists(os.path.join(bare, "summary.png")) or "Jobs found" in text or \
                    "nothing to summarise" not in text:
                fail("a run without targets drew a summary", proc)
        spec = importlib.util.spec_from_file_location("runner", runner)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        if "higher is better" not in mod.panel_title("g", [{"unit": "IOPS"}]) or \
                "lower is better" not in mod.panel_title("g", [{"unit": "ms"}, {"unit": "IOPS"}]):
            fail("the chart titles a rate group's direction wrongly")
        # the memory-limit curves of a full run, as the runner orders them: no two alike, and
        # one directory class the same colour in every runtime
        # (the rows' own names: NativeFSDirectory's package differs from the built-ins')
        names = ["%s %sDirectory%s" % (mine if cls == "NativeFS" else theirs, cls, dev)
                 for mine, theirs, devs in (
                     ("NativeDir.Lucene", "Lucene.NET",
                      (" (read-ahead 8192 KiB)", " (read-ahead 128 KiB)")),
                     ("nativedir-lucene", "Lucene (Java)", ("",)))
                 for dev in devs for cls in ("NativeFS", "MMap", "NIOFS", "SimpleFS")]
        colors, styles = {}, {}
        for i, n in enumerate(names):
            styles[n] = mod.curve_style(n, names[:i], colors)
        if len(set(styles.values())) != len(names):
            fail("two memory-limit curves look alike: %s" % styles)
        for cls in ("NativeFS", "MMap", "NIOFS", "SimpleFS"):
            if len({v[0] for n, v in styles.items() if "%sDirectory" % cls in n}) != 1:
                fail("%sDirectory's curves differ in colour: %s" % (cls, styles))
        with open(os.path.join(d, "chart.png"), "rb") as fh:
            png = fh.read()
        if not png.startswith(b"\x89PNG\r\n\x1a\n") or len(png) < 10000:
            fail("chart.png is not a real PNG (%d bytes)" % len(png))

        with open(os.path.join(d, "java.json"), "w", encoding="utf-8") as fh:
            fh.write('{"suite": "java", "results": [{"group": "Write"}]}')
        proc = run(runner, d)
        if proc.returncode == 0 or "java.json" not in proc.stderr:
            fail("a broken java.json must be named and fail the run", proc)
        with open(os.path.join(d, "report.md"), encoding="utf-8") as fh:
            if "## PythonOnly" not in fh.read():
                fail("a broken file must not hide the good ones")
    print("test_runner: ok (%d C rows in %d groups, merged with a second suite)"
          % (len(c["results"]), len(groups)))


if __name__ == "__main__":
    main()
