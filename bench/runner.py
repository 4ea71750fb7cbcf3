#!/usr/bin/python3
"""Merges every benchmark's JSON (c.json, dotnet.json, java.json, python.json, ...)
in a results directory into one Markdown report and one chart.

    /usr/bin/python3 bench/runner.py [RESULTS_DIR]     (default $ND_BENCH_OUT or build/bench/results)

Writes RESULTS_DIR/report.md, RESULTS_DIR/summary.png and RESULTS_DIR/chart.png
(drawn with gnuplot) and prints the report. The report starts with the summary:
per runtime (C, .NET, Lucene.NET, Mono, Java, Python) and job (sequential, byte,
random, async, cold, larger than memory, search, indexing) the headline ratio of
nativedir to that runtime's best built-in, with its target (summary.png beside
it adds the Lucene.NET memory-limit curves); then every row that missed its
target with its rounds; then one table per group. chart.png is the detail: one
panel per group, each row's ratio to its baseline. Standard library only: it runs on Debian's python3.
Exit status 1 if a results file is unreadable or the chart cannot be drawn;
everything readable is still reported.
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

REQUIRED = ("group", "name", "median")
# A row measured as a rate (operations or bytes per second): its ratio is its
# rate / the baseline's, so higher is better, the other way round from times.
RATE_UNITS = ("IOPS", "ops/s", "q/s", "docs/s", "MiB/s", "MB/s", "GiB/s")
SUITE_ORDER = ("c", "dotnet", "java", "python")
# The summary's runtimes (suite -> label) and jobs (label -> the groups that measure it, the
# first with a headline row wins). A suite's rows of group "Mono<Group>" count as <Group>.
RUNTIMES = (("c", "C"), ("dotnet", ".NET"), ("lucene", "Lucene.NET"), ("lucene-mono", "Mono"),
            ("java", "Java"), ("lucene-java", "Lucene (Java)"), ("python", "Python"))
JOBS = (("sequential", ("ReadSequential",)),
        ("byte", ("ReadByteSequential",)),
        ("random", ("ReadRandom", "ReadMapped")),
        ("async", ("RingCachedQD32", "ReadAsync4K", "RingRandomQD32")),
        ("cold", ("ColdPrefetch", "RingRandomQD32")),
        ("larger than memory", ("LargerThanMemory", "SearchLargerThanMemory")),
        ("search", ("ParallelSearch",)),
        ("indexing", ("Indexing", "SearchWhileMerging")))
LTM_GROUP = "SearchLargerThanMemory"


class Problem(Exception):
    pass


def load(results_dir):
    """Returns (suites, problems): every readable suite file, and what was wrong with the rest."""
    suites, problems = [], []
    names = sorted(f for f in os.listdir(results_dir) if f.endswith(".json"))
    for f in names:
        path = os.path.join(results_dir, f)
        try:
            with open(path, encoding="utf-8") as fh:
                doc = json.load(fh)
            if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
                raise Problem('no "results" list')
            for i, r in enumerate(doc["results"]):
                missing = [k for k in REQUIRED if not isinstance(r, dict) or k not in r]
                if missing:
                    raise Problem("result %d lacks %s" % (i, ", ".join(missing)))
                if not isinstance(r["median"], (int, float)):
                    raise Problem("result %d: median is not a number" % i)
            doc.setdefault("suite", f[:-5])
            suites.append(doc)
        except (OSError, ValueError, Problem) as e:
            problems.append("%s: %s" % (path, e))
    suites.sort(key=lambda s: (SUITE_ORDER.index(s["suite"]) if s["suite"] in SUITE_ORDER
                               else len(SUITE_ORDER), str(s["suite"])))
    return suites, problems


def grouped(suites):
    """Rows by group, groups in order of first appearance (the C suite's first)."""
    groups = {}
    for s in suites:
        for r in s["results"]:
            groups.setdefault(r["group"], []).append(dict(r, suite=s["suite"]))
    return groups


def is_rate(r):
    return r.get("unit") in RATE_UNITS


def higher_is_better(rows):
    """A group reads higher-is-better only if every row in it is a rate."""
    return bool(rows) and all(is_rate(r) for r in rows)


def panel_title(g, rows, log=False, has_cpu=False):
    return (g + ": ratio to baseline ("
            + ("higher" if higher_is_better(rows) else "lower") + " is better)"
            + (", log scale" if log else "") + ("; dot = CPU-time ratio" if has_cpu else ""))


def num(v, digits=3):
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return ""
    if v != 0 and abs(v) < 10 ** -digits:
        return "%.2g" % v
    return "%.*f" % (digits, v)


def ratio_of(r):
    """A baseline row is 1 by definition; other rows carry their own ratio."""
    if r.get("baseline") is None:
        return 1.0
    v = r.get("ratio")
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else None


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def missed_against(r):
    """The row a missed target compares r with: the first second target (an "also" entry, such
    as fio beside a pread baseline) that was missed, else r's own baseline."""
    for a in r.get("also") or []:
        if a.get("met") is False and a.get("baseline"):
            return a["baseline"]
    return r.get("baseline")


def round_ratios(r, rows, against=None):
    """(the per-round ratios of r to the row named against (default its baseline), or r's own
    rounds, how they were taken): a round's ratio is r's figure in that round over the other
    row's in the same round."""
    mine = [v for v in r.get("rounds") or [] if isinstance(v, (int, float))]
    if not mine:
        return None, "no rounds recorded"
    against = against or r.get("baseline")
    base = next((b for b in rows if b.get("suite") == r.get("suite")
                 and b.get("name") == against), None)
    theirs = [v for v in (base or {}).get("rounds") or [] if isinstance(v, (int, float))]
    if len(theirs) == len(mine) and all(v > 0 for v in theirs):
        return [a / b for a, b in zip(mine, theirs)], "ratio"
    return mine, r.get("unit", "ms")


def rounds_text(r, rows):
    """A missed row's rounds: each round's ratio to the row its missed target names, their
    median and spread."""
    against = missed_against(r)
    values, kind = round_ratios(r, rows, against)
    if values is None:
        return kind
    med = sorted(values)[len(values) // 2] if len(values) % 2 else \
        sum(sorted(values)[len(values) // 2 - 1:len(values) // 2 + 1]) / 2
    what = ("rounds' ratios to %s" % against) if kind == "ratio" else \
        "rounds (%s; the baseline has none)" % kind
    digits = 3 if kind == "ratio" or max(abs(v) for v in values) < 100 else 0
    return "%s %s; median %s, spread %s–%s" % (
        what, " ".join(num(v, digits) for v in values), num(med, digits),
        num(min(values), digits), num(max(values), digits))


def extras(r, shared_note=None, rows=None):
    parts = []
    if r.get("met") is False and rows is not None:
        parts.append("missed: " + rounds_text(r, rows))
    if isinstance(r.get("cached_pct"), (int, float)):
        parts.append("%.1f%% of the file cached" % r["cached_pct"])
    if isinstance(r.get("ratio_paired"), (int, float)):
        parts.append("per-round ratio %.3f" % r["ratio_paired"])
    if isinstance(r.get("cpu_ratio"), (int, float)):
        parts.append("CPU-time ratio %.3f" % r["cpu_ratio"])
    if isinstance(r.get("speedup"), (int, float)):
        parts.append("speed-up %.2fx" % r["speedup"])
    if isinstance(r.get("speedup_cpus"), (int, float)):
        parts.append("per-CPU speed-up %.2fx (against one thread pinned to each CPU, per round)"
                     % r["speedup_cpus"])
    if isinstance(r.get("cpu_us_per_op"), (int, float)):
        parts.append("CPU %.1f µs per op" % r["cpu_us_per_op"])
    # a second comparison beside the baseline (e.g. the device's own limit)
    for a in r.get("also") or []:
        if not isinstance(a, dict) or not a.get("baseline"):
            continue
        ratio = a.get("ratio")
        text = "vs %s: %s" % (a["baseline"], num(ratio) if isinstance(ratio, (int, float))
                              else "not measured")
        if isinstance(a.get("ratio_paired"), (int, float)):
            text += ", per-round %s" % num(a["ratio_paired"])
        if a.get("target"):
            text += " (target %s, %s)" % (a["target"], {True: "met", False: "**not met**"}.get(
                a.get("met"), "unknown"))
        parts.append(text)
    if isinstance(r.get("alloc_bytes"), (int, float)):
        parts.append("%d B allocated" % r["alloc_bytes"])
    if r.get("note") and r["note"] != shared_note:
        parts.append(str(r["note"]))
    return "; ".join(parts)


def parse_target(text):
    """(operator, number) of a target's first comparison ("<= 1.1 (per-round)", ">= 1.2x ...")."""
    m = re.search(r"([<>]=?)\s*([0-9]*\.?[0-9]+)(?!\s*(?:[KMG]?i?B|ns|µs|us|ms|s)\b)(?![0-9.])",
                  str(text or ""))
    return (m.group(1), float(m.group(2))) if m else (None, None)


def speed_of(r):
    """How many times the baseline's speed a row reaches (higher is better): a rate's ratio, a
    time's inverse; judged as the target is, on the per-round ratio where there is one."""
    v = r.get("ratio_paired")
    if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
        v = ratio_of(r)
    if v is None or v <= 0:
        return None
    return v if is_rate(r) else 1.0 / v


def target_speed(r):
    """The target in the terms of speed_of: ">= N" is a speed already (a rate's ratio, or a
    time's row saying ">= 1.2x qps"), "<= N" a time's ratio to invert."""
    op, v = parse_target(r.get("target"))
    if op is None or v <= 0:
        return None
    return v if op.startswith(">") else 1.0 / v


def headlines(suites):
    """The summary's cells: per runtime and job, the row that says how nativedir does against
    that runtime's own best: a row marked "headline", else the first row of the job's groups
    with a target on a ratio (a baseline row and a target that is no ratio do not count)."""
    cells = []
    for suite, runtime in RUNTIMES:
        rows = [r for s in suites if s["suite"] == suite for r in s["results"]]
        if suite == "lucene-mono":
            rows = [dict(r, group=r["group"][4:]) if r["group"].startswith("Mono") else r
                    for r in rows]
        for job, group_names in JOBS:
            pick = None
            for g in group_names:
                cand = [r for r in rows if r["group"] == g and r.get("baseline") is not None
                        and speed_of(r) is not None]
                judged = [r for r in cand if r.get("met") is not None
                          and target_speed(r) is not None]
                # memory-limited rows: the tightest limit with a target is the job's point
                judged.sort(key=lambda r: -r["limit_pct"] if isinstance(r.get("limit_pct"), (
                    int, float)) else 0, reverse=True)
                pick = next((r for r in cand if r.get("headline")), None) or next(
                    iter(judged), None)
                if pick is not None:
                    break
            if pick is not None:
                cells.append({"runtime": runtime, "suite": suite, "job": job, "row": pick,
                              "speed": speed_of(pick), "target": target_speed(pick),
                              "met": pick.get("met")})
    return cells


# the memory-limit curves' colours, told apart on screen and in grey
CURVE_COLORS = ("#7b2fbe", "#009e73", "#56b4e9", "#e69f00", "#d55e00", "#0072b2", "#000000")
# the runtimes' curves of the same directory class: Lucene (Java)'s are its rows named so
JAVA_CURVE = re.compile(r"^(nativedir-lucene|Lucene \(Java\)) ")


def curve_style(name, earlier, colors):
    """(colour, dash type, point type) of the memory-limit curve `name`, the curves `earlier`
    drawn before it. The colour is the directory class's (NativeFSDirectory, MMapDirectory,
    ...: `colors` keeps those given out), the point the runtime's (a circle for Lucene.NET, a
    square for Lucene (Java)), and a second device's curve of a directory is dashed: no two
    curves of one chart look alike, and the same directory reads the same in every runtime."""
    bare = re.sub(r" \(read-ahead [0-9]+ KiB\)$", "", name)  # the name without its device
    m = re.search(r"(\w+Directory)", bare)
    cls = m.group(1) if m else bare
    color = colors.setdefault(cls, CURVE_COLORS[len(colors) % len(CURVE_COLORS)])
    dashed = bare != name and any(c.startswith(bare + " (") and c != name for c in earlier)
    return color, 2 if dashed else 1, 5 if JAVA_CURVE.match(name) else 7


def ltm_curves(groups):
    """{directory: [(limit %, q/s), ...]} from the SearchLargerThanMemory rows."""
    curves = {}
    for r in groups.get(LTM_GROUP, []):
        pct = r.get("limit_pct")
        if not isinstance(pct, (int, float)):
            m = re.search(r"([0-9.]+)% of the index", r["name"])
            pct = float(m.group(1)) if m else None
        if pct is None:
            continue
        d = r["name"].split(", ")[0]
        # one curve per device the index was on (lucene_ltm runs on two read-aheads)
        ra = re.search(r"read-ahead [0-9]+ KiB", r.get("device") or "")
        if ra:
            d += " (%s)" % ra.group(0)
        curves.setdefault(d, []).append((float(pct), float(r["median"])))
    return {d: sorted(v, reverse=True) for d, v in curves.items()}


def summary_markdown(cells, groups):
    out = ["## Summary", ""]
    if not cells:
        return out + ["No row with a target on a ratio in this run: nothing to summarise.", ""]
    out.append("Per runtime and job: nativedir's speed as a multiple of the row it is compared "
               "with (that runtime's own best built-in, or the device's limit where the row says "
               "so), higher is better (a time's ratio inverted), judged per round where the row "
               "was; the target in the same terms. Jobs found: %s."
               % ", ".join(j for j, _ in JOBS if any(c["job"] == j for c in cells)))
    out.append("")
    out.append("| runtime | job | x the built-in | target | met | row |")
    out.append("|---|---|---:|---:|---|---|")
    for c in cells:
        r = c["row"]
        out.append("| %s | %s | %sx | %s | %s | %s |" % (
            c["runtime"], c["job"], num(c["speed"], 2),
            ">= %sx" % num(c["target"], 2) if c["target"] else "",
            {True: "yes", False: "**no**"}.get(c["met"], ""),
            cell("%s: %s vs %s" % (r["group"], r["name"], r.get("baseline")))))
    out.append("")
    curves = ltm_curves(groups)
    if curves:
        out.append("Search when the index does not fit (q/s, %s): %s." % (
            LTM_GROUP, "; ".join("%s %s" % (d, ", ".join("%g%% %s" % (p, num(q, 0)) for p, q in v))
                                 for d, v in curves.items())))
        out.append("")
    return out


def without_rounds(groups):
    """(group, row) of every row judged per round whose file lacks the rounds that judged it
    (its own or its baseline's, of the same count): a miss there could not be shown round by
    round."""
    return [(g, r) for g, rows in groups.items() for r in rows
            if re.search(r"per[- ]round", str(r.get("target") or ""))
            and round_ratios(r, rows)[1] != "ratio"]


def misses_markdown(groups):
    missed = [(g, r, rows) for g, rows in groups.items() for r in rows if r.get("met") is False]
    out = ["## Missed targets, round by round", ""]
    bare = without_rounds(groups)
    if bare:
        out += ["Judged per round, but without the rounds in the results (the suite must record "
                "them, the row's and its baseline's): " +
                "; ".join("%s / %s / %s" % (r["suite"], g, r["name"]) for g, r in bare) + ".", ""]
    if not missed:
        return out + ["Every target was met.", ""]
    out.append("A round's ratio is the row's figure over its baseline's in the same round; a miss "
               "by a wide spread is the machine's, a miss in every round is the code's.")
    out.append("")
    for g, r, rows in missed:
        out.append("- %s / %s / %s (target %s): %s" % (
            r["suite"], g, r["name"], r.get("target"), rounds_text(r, rows)))
    out.append("")
    return out


def markdown(suites, groups, cells=None, summary_png=None):
    out = ["# nativedir benchmark results", ""]
    if summary_png:
        out += ["![summary: nativedir against each runtime's best built-in](%s)" % summary_png, ""]
    if cells is not None:
        out += summary_markdown(cells, groups)
    for s in suites:
        out.append("- `%s`: %s MiB file, %s, %s%s%s%s" % (
            s["suite"], s.get("file_mib", "?"), s.get("host", "unknown host"),
            s.get("date", "unknown date"),
            "" if s.get("loadavg") is None else ", load average %.2f" % s["loadavg"],
            "" if not s.get("page_cache_reclaim") else
            ", the kernel's own page-cache reclaim: %s" % s["page_cache_reclaim"],
            "" if not s.get("command") else ", command `%s`" % s["command"]))
    for s in suites:
        start, end = s.get("cpu_speed_start"), s.get("cpu_speed_end")
        if start:
            out.append("- CPU speeds at a spin loop, relative to the fastest, at the start and the "
                       "end of the `%s` suite: %s" % (s["suite"], ", ".join(
                           "CPU %d %s / %s" % (c, num(a, 2), num(b, 2))
                           for c, (a, b) in enumerate(zip(start, end or start)) if a > 0)))
    out.append("")
    slowest = min([v for s in suites for k in ("cpu_speed_start", "cpu_speed_end")
                   for v in (s.get(k) or []) if v > 0] or [1])
    if slowest < 0.8:
        out.append("**The CPUs were not alike in this run:** the slowest ran the spin loop at %s "
                   "of the fastest's speed (the host's doing on a VM). Rows that use two threads, "
                   "or whose baseline ran on another CPU, measure the machine as much as the "
                   "code here." % num(slowest, 2))
        out.append("")
    out.append("Ratio = median / the median of the row named in *baseline*, measured in the "
               "same run (lower is better for times; for rates such as IOPS higher is better; "
               "a baseline row is the limit itself).")
    met = [r.get("met") for rows in groups.values() for r in rows if r.get("met") is not None]
    out.append("Targets met: %d of %d. In the chart: blue = the baseline (1x), green = target met, "
               "red = target missed, grey = no target; a black dot marks the CPU-time ratio (what waiting "
               "for a CPU on a busy machine cannot inflate)." % (sum(1 for m in met if m), len(met)))
    out.append("")
    out += misses_markdown(groups)
    for g, rows in groups.items():
        out.append("## %s" % g)
        out.append("")
        notes = {r.get("note") for r in rows}
        shared = notes.pop() if len(notes) == 1 else None
        if shared:
            out += [str(shared), ""]
        if higher_is_better(rows):
            out += ["Rates (%s): higher is better; ratio = this row's rate / the baseline's."
                    % ", ".join(sorted({str(r.get("unit")) for r in rows})), ""]
        multi = len({r["suite"] for r in rows}) > 1
        head = (["suite"] if multi else []) + ["name", "median", "min–max", "ratio", "baseline",
                                                "target", "met", "note"]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "|".join("---:" if h in ("median", "min–max", "ratio") else "---"
                                  for h in head) + "|")
        for r in rows:
            unit = r.get("unit", "ms")
            digits = 0 if is_rate(r) else 3  # thousands of IOPS need no decimals
            ratio = "limit" if r.get("baseline") is None else num(r.get("ratio"))
            met = {True: "yes", False: "**no**"}.get(r.get("met"), "")
            cells = ([r["suite"]] if multi else []) + [
                r["name"], "%s %s" % (num(r["median"], digits), unit),
                "%s–%s" % (num(r.get("min"), digits), num(r.get("max"), digits)), ratio,
                r.get("baseline") or "", r.get("target") or "", met, extras(r, shared, rows)]
            out.append("| " + " | ".join(cell(c) for c in cells) + " |")
        out.append("")
    return "\n".join(out)


def gp_str(s):
    return '"%s"' % str(s).replace("\\", "/").replace('"', "'")


def chart(groups, path):
    """One horizontal bar panel per group, stacked in one PNG; raises Problem on failure."""
    gnuplot = shutil.which("gnuplot")
    if gnuplot is None:
        raise Problem("gnuplot is not installed (scripts/deps.sh installs gnuplot-nox); "
                      "no chart drawn")
    panels = []
    for g, rows in groups.items():
        bars = [(r, ratio_of(r)) for r in rows]
        bars = [(r, v) for r, v in bars if v is not None]
        if bars:
            panels.append((g, bars))
    if not panels:
        raise Problem("no ratios to draw")
    multi_suite = len({r["suite"] for _, bars in panels for r, _ in bars}) > 1
    total = sum(len(b) + 3 for _, b in panels)
    height = max(400, total * 24)
    with tempfile.TemporaryDirectory() as tmp:
        script = ["set terminal pngcairo size 1400,%d font 'Sans,10' noenhanced" % height,
                  "set output %s" % gp_str(path),
                  "set multiplot",
                  "set style fill solid 0.85 border -1",
                  "set grid xtics",
                  "unset key",
                  "set lmargin at screen 0.36", "set rmargin at screen 0.95"]
        top = 1.0
        for i, (g, bars) in enumerate(panels):
            data = os.path.join(tmp, "g%d.dat" % i)
            ratios = [v for _, v in bars]
            ratios += [r["cpu_ratio"] for r, _ in bars
                       if isinstance(r.get("cpu_ratio"), (int, float)) and r["cpu_ratio"] > 0]
            has_cpu = False
            lo, hi = min(ratios + [1.0]), max(ratios + [1.0])
            log = hi / lo > 20
            with open(data, "w", encoding="utf-8") as fh:
                for k, (r, v) in enumerate(bars):
                    # colour: baseline blue, met green, missed red, informative grey
                    color = (0x3366cc if r.get("baseline") is None else
                             {True: 0x2e9d43, False: 0xd03030}.get(r.get("met"), 0x999999))
                    # the label sits at the bar's outer end, clear of the bar itself
                    at = max(v, 1.0) if log else v
                    # rates carry CPU per op, not a CPU-time ratio: no dot for them
                    cpu = (None if is_rate(r) else 1.0 if r.get("baseline") is None
                           else r.get("cpu_ratio"))
                    cpu = "%.6g" % cpu if isinstance(cpu, (int, float)) and cpu > 0 else "NaN"
                    has_cpu = has_cpu or cpu != "NaN"
                    fh.write("%d %.6g %d %s %.6g %s\n" % (k, v, color, gp_str(num(v, 2) + "x"),
                                                          at, cpu))
            frac = (len(bars) + 3) / total
            script += ["set origin 0,%.5f" % (top - frac), "set size 1,%.5f" % frac,
                       "set title %s" % gp_str(panel_title(g, [r for r, _ in bars], log, has_cpu)),
                       "set yrange [%.1f:-0.6]" % (len(bars) - 0.4),
                       "set ytics (%s)" % ", ".join(
                           "%s %d" % (gp_str((r["suite"] + ": " if multi_suite else "")
                                             + r["name"]), k) for k, (r, _) in enumerate(bars))]
            if log:
                script += ["set logscale x", "set xrange [%g:%g]" % (lo / 2, hi * 3)]
                base = 1.0
            else:
                script += ["unset logscale x", "set xrange [0:%g]" % (hi * 1.25)]
                base = 0.0
            plot = ("plot %s using (%g):1:(%g):2:($1-0.38):($1+0.38):3 with boxxyerror "
                    "lc rgb variable, '' using 5:1:4 with labels left offset 0.5,0"
                    % (gp_str(data), base, base))
            if has_cpu:
                plot += ", '' using 6:1 with points pt 7 ps 0.7 lc rgb '#000000'"
            script += ["set arrow 1 from 1,graph 0 to 1,graph 1 nohead dt 2 lc rgb '#000000'", plot]
            top -= frac
        script.append("unset multiplot")
        proc = subprocess.run([gnuplot], input="\n".join(script) + "\n", text=True,
                              capture_output=True)
        if proc.returncode != 0 or not os.path.exists(path):
            raise Problem("gnuplot failed: %s" % proc.stderr.strip())


def summary_chart(cells, groups, path):
    """One screen: the headline bars per runtime and job (left) and the Lucene.NET
    memory-limit curves (right); raises Problem on failure."""
    gnuplot = shutil.which("gnuplot")
    if gnuplot is None:
        raise Problem("gnuplot is not installed (scripts/deps.sh installs gnuplot-nox); "
                      "no summary drawn")
    if not cells:
        raise Problem("no headline rows to summarise")
    curves = ltm_curves(groups)
    with tempfile.TemporaryDirectory() as tmp:
        bars = os.path.join(tmp, "bars.dat")
        values = [c["speed"] for c in cells] + [c["target"] for c in cells if c["target"]]
        lo, hi = min(values + [1.0]), max(values + [1.0])
        log = hi / lo > 8
        labels, k, last = [], 0, None
        with open(bars, "w", encoding="utf-8") as fh:
            for c in cells:
                if last is not None and c["runtime"] != last:
                    k += 1  # a gap between runtimes
                last = c["runtime"]
                color = {True: 0x2e9d43, False: 0xd03030}.get(c["met"], 0x999999)
                fh.write("%d %.6g %d %s %s %.6g\n" % (
                    k, c["speed"], color, gp_str(num(c["speed"], 2) + "x"),
                    "%.6g" % c["target"] if c["target"] else "NaN",
                    max(c["speed"], 1.0) if log else c["speed"]))
                labels.append("%s %d" % (gp_str("%s: %s" % (c["runtime"], c["job"])), k))
                k += 1
        base = 1.0 if log else 0.0
        script = ["set terminal pngcairo size 1400,%d font 'Sans,10' noenhanced"
                  % max(700, 26 * k + 140),
                  "set output %s" % gp_str(path), "set multiplot",
                  "set style fill solid 0.85 border -1", "set grid xtics", "unset key",
                  "set origin 0,0", "set size %s,1" % ("0.62" if curves else "1"),
                  "set lmargin 30", "set rmargin 8",
                  "set title \"nativedir's speed / the runtime's best built-in (higher is better)"
                  "\\n| = target, green = met, red = missed%s\"" % (", log scale" if log else ""),
                  "set yrange [%.1f:-0.6]" % (k - 0.4), "set ytics (%s)" % ", ".join(labels)]
        if log:
            script += ["set logscale x", "set xrange [%g:%g]" % (lo / 1.5, hi * 2)]
        else:
            script += ["set xrange [0:%g]" % (hi * 1.2)]
        script += ["set arrow 1 from 1,graph 0 to 1,graph 1 nohead dt 2 lc rgb '#000000'",
                   "plot %s using (%g):1:(%g):2:($1-0.38):($1+0.38):3 with boxxyerror "
                   "lc rgb variable, '' using 5:1 with points pt 'I' ps 2 lc rgb '#000000', "
                   "'' using 6:1:4 with labels left offset 0.5,0" % (gp_str(bars), base, base)]
        if curves:
            script += ["unset arrow 1", "unset logscale x", "set origin 0.62,0",
                       "set size 0.38,1", "set lmargin 10", "set rmargin 3",
                       "set title \"Lucene search (.NET and Java), the index larger than memory"
                       "\\nq/s by the page cache allowed\"",
                       "set xlabel 'page cache allowed, % of the index'", "set ylabel 'q/s'",
                       "set xrange [105:0]", "set autoscale y", "set yrange [0:*]",
                       "set ytics auto", "set xtics (100, 50, 25, 10, 5)", "set grid ytics",
                       # room above the highest curve for the key, so that it hides no point
                       "set offsets 0, 0, graph 0.3, 0", "set key top right box opaque"]
            plots, colors = [], {}
            for i, (d, pts) in enumerate(curves.items()):
                f = os.path.join(tmp, "ltm%d.dat" % i)
                with open(f, "w", encoding="utf-8") as fh:
                    fh.writelines("%g %.6g\n" % p for p in pts)
                color, dash, point = curve_style(d, list(curves)[:i], colors)
                # the key is narrow: the directory's name without its package's
                plots.append("%s using 1:2 with linespoints lw 2 pt %d ps 1.3 lc rgb '%s' dt %d "
                             "title %s" % (gp_str(f), point, color, dash,
                                           gp_str(re.sub(r"^(NativeDir\.Lucene|Lucene\.NET) ", "", d))))
            script.append("plot " + ", ".join(plots))
        script.append("unset multiplot")
        proc = subprocess.run([gnuplot], input="\n".join(script) + "\n", text=True,
                              capture_output=True)
        if proc.returncode != 0 or not os.path.exists(path):
            raise Problem("gnuplot failed on the summary: %s" % proc.stderr.strip())


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip())
        return 2
    results = argv[1] if len(argv) == 2 else os.environ.get("ND_BENCH_OUT") or \
        os.path.join("build", "bench", "results")
    if not os.path.isdir(results):
        print("runner: %s is not a directory of results" % results, file=sys.stderr)
        return 1
    suites, problems = load(results)
    if not suites:
        problems.append("%s: no benchmark results (*.json) found" % results)
    groups = grouped(suites)
    cells = headlines(suites)
    png = os.path.join(results, "chart.png")
    summary = os.path.join(results, "summary.png")
    for old in (png, summary):
        if os.path.exists(old):
            os.remove(old)  # a chart from an earlier run must not pass for this one
    if cells:
        try:
            summary_chart(cells, groups, summary)
        except Problem as e:
            problems.append(str(e))
    report = markdown(suites, groups, cells, "summary.png" if os.path.exists(summary) else None)
    if groups:
        try:
            chart(groups, png)
            report += "\n![every row's ratio to its baseline](chart.png)\n"
        except Problem as e:
            problems.append(str(e))
    with open(os.path.join(results, "report.md"), "w", encoding="utf-8") as fh:
        fh.write(report)
    print(report)
    print("report: %s" % os.path.join(results, "report.md"))
    if os.path.exists(summary):
        print("summary: %s (jobs: %s)" % (summary, ", ".join(
            j for j, _ in JOBS if any(c["job"] == j for c in cells))))
    if os.path.exists(png) and groups:
        print("chart:  %s" % png)
    for p in problems:
        print("runner: ERROR: %s" % p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
