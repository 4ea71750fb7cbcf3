#!/usr/bin/python3
"""Turns the larger-than-memory run of NativeDir.Lucene.Benchmarks (--ltm-cache ... --out
ltm.json) into the shared results format (bench/suites.d/README.md) as suite "lucene".

    ltm_to_shared_json.py LTM_JSON OUT_JSON [HOST]

Groups:
  SearchLargerThanMemory    queries a second per directory per memory limit (rate: higher is
                            better); baseline: the built-in directory with the most queries a
                            second at that limit. Targets on NativeFSDirectory (default policy):
                            >= 1.2x at 25%, >= 1.0x at 100%, judged per round; its policy
                            variants (every search file random, at 10%) have none.
  SearchLargerThanMemoryP99 the same cells' 99th-percentile query latency (ms, lower is better)
  SearchWhileMerging        search queries a second and p99 while one more thread indexes with
                            merges running (target >= 1.3x the best built-in); then, with the
                            searches at a fixed offered rate, the same for every directory:
                            indexing documents a second (target >= 0.9x) and the search p99;
                            indexing beside the unpaced searches (no target: there the
                            indexer's share of the CPU is what the searches leave); and the page
                            cache the new (merged and flushed) files held at the end (MiB, lower
                            is better)

A ratio's verdict is the median over rounds of the ratio within a round (every cell of a limit
runs back to back in a round); with one round that is the plain ratio. Each row carries its
rounds (`rounds`) so that a miss shows them. A run skipped for want of a memory cgroup
(`skipped` in LTM_JSON, or no LTM_JSON) gives no rows and says why in `skipped`.
"""
import datetime
import json
import os
import statistics
import sys

BUILTINS = ("MMap", "NIOFS", "SimpleFS")
MINE = "NativeDir"  # the default policy: the targets are on it
SEARCH_TARGETS = {100: 1.0, 25: 1.2}
MERGE_QPS_TARGET = 1.3
MERGE_DOCS_TARGET = 0.9
MIB = 1 << 20


def median(xs):
    return statistics.median(xs) if xs else None


def mib(v):
    return round(v / MIB, 1)


class Rows:
    def __init__(self):
        self.rows = []

    def add(self, group, name, unit, values, baseline=None, base_values=None, higher=True,
            target=None, limit=None, note=None, **extra):
        med = median(values)
        r = {"group": group, "name": name, "unit": unit, "median": round(med, 3),
             "min": round(min(values), 3), "max": round(max(values), 3), "runs": len(values),
             "rounds": [round(v, 3) for v in values], "baseline": baseline, "ratio": None,
             "target": None, "met": None, "alloc_bytes": None, "note": note}
        if baseline is not None:
            base_med = median(base_values)
            r["ratio"] = round(med / base_med, 3) if base_med else None
            if len(base_values) == len(values) and all(base_values):
                r["ratio_paired"] = round(median([a / b for a, b in zip(values, base_values)]), 3)
            judged = r.get("ratio_paired", r["ratio"])
            if target is not None and judged is not None:
                r["target"] = target
                r["met"] = judged >= limit if higher else judged <= limit
        r.update(extra)
        self.rows.append(r)
        return r


def by_round(cells, key):
    """{directory: [value of round 0, round 1, ...]} for the cells given."""
    out = {}
    for c in sorted(cells, key=lambda c: c["round"]):
        out.setdefault(c["directory"], []).append(c[key])
    return out


def labels(cells):
    return {c["directory"]: c["label"] for c in cells}


def convert(ltm):
    rows = Rows()
    cells = ltm.get("cells") or []
    search = [c for c in cells if c["kind"] == "search"]
    merges = [c for c in cells if c["kind"] == "merge"]
    idx = "%d MiB index (%d docs, %d segments%s), %d threads, %d queries, %.0f s window after "\
          "the queries once untimed" % (
              ltm["index_bytes"] // MIB, ltm["docs"], ltm["segments"],
              ", cached" if ltm.get("index_reused") else ", built in %.0f s" % ltm["build_seconds"],
              ltm["threads"], ltm["queries"], ltm["window_seconds"])
    for pct in sorted({c["limit_pct"] for c in search}, reverse=True):
        at = [c for c in search if c["limit_pct"] == pct]
        qps, p99 = by_round(at, "qps"), by_round(at, "p99_ms")
        name = labels(at)
        builtins = [d for d in BUILTINS if d in qps]
        if not builtins:
            continue
        best = max(builtins, key=lambda d: median(qps[d]))
        budget = at[0]["cache_budget_bytes"]
        for d in qps:
            cached = median([c["index_cached_bytes"] for c in at if c["directory"] == d])
            p = median(p99[d])
            note = "%s; %.0f%% of the index (%.0f MiB) as page cache; %.0f MiB of the index cached "\
                   "at the end; p99 %.1f ms" % (idx, pct, budget / MIB, cached / MIB, p)
            row = "%s, %d%% of the index in memory" % (name[d], pct)
            base = "%s, %d%% of the index in memory" % (name[best], pct)
            if d == best:
                rows.add("SearchLargerThanMemory", row, "q/s", qps[d],
                         note=note + " (best built-in: the baseline)", p99_ms=p, limit_pct=pct)
                rows.add("SearchLargerThanMemoryP99", row, "ms", p99[d],
                         note="p99 query latency; " + note)
                continue
            t = SEARCH_TARGETS.get(int(pct)) if d == MINE else None
            rows.add("SearchLargerThanMemory", row, "q/s", qps[d], base, qps[best],
                     target=">= %.1fx the best built-in (per round)" % t if t else None,
                     limit=t, note=note, p99_ms=p, limit_pct=pct)
            rows.add("SearchLargerThanMemoryP99", row, "ms", p99[d], base, p99[best], higher=False,
                     note="p99 query latency; " + note)
    if merges:
        qps, p99 = by_round(merges, "qps"), by_round(merges, "p99_ms")
        docs, fresh = by_round(merges, "docs_per_s"), by_round(merges, "new_files_cached_bytes")
        docs_unpaced = by_round(merges, "docs_per_s_unpaced")
        paced_p99 = by_round(merges, "paced_p99_ms")
        rate = merges[0]["paced_rate"]
        name = labels(merges)
        builtins = [d for d in BUILTINS if d in qps]
        pct = merges[0]["limit_pct"]
        if builtins:
            best_q = max(builtins, key=lambda d: median(qps[d]))
            best_d = max(builtins, key=lambda d: median(docs[d]))
            best_du = max(builtins, key=lambda d: median(docs_unpaced[d]))
            best_pp = min(builtins, key=lambda d: median(paced_p99[d]))
            best_c = min(builtins, key=lambda d: median(fresh[d]))
            common = "%s; %.0f%% of the index as page cache; one more thread adds documents with "\
                     "merges of the index's segments running, then rolls back: %.0f s with the "\
                     "searches unpaced, then %.0f s with them at %.0f q/s offered" % (
                         idx, pct, ltm["merge_seconds"], ltm["merge_seconds"], rate)
            for d in qps:
                mine = [c for c in merges if c["directory"] == d]
                merged = median([c["merges"] for c in mine])
                est = median([c["merge_estimated_bytes"] for c in mine]) / MIB
                new_bytes = median([c["new_files_bytes"] for c in mine]) / MIB
                extra = "; %s merge(s) of ~%.0f MiB started, %.0f MiB of new files written, "\
                        "%.0f MiB of them cached at the end" % (merged, est, new_bytes,
                                                                median(fresh[d]) / MIB)
                for grp, suffix, vals, best, unit, higher, tgt in (
                        ("SearchWhileMerging", "search", qps, best_q, "q/s", True, MERGE_QPS_TARGET),
                        ("SearchWhileMerging", "search p99", p99, best_q, "ms", False, None),
                        ("SearchWhileMerging", "indexing, searches at %.0f q/s" % rate, docs,
                         best_d, "docs/s", True, MERGE_DOCS_TARGET),
                        ("SearchWhileMerging", "search p99 at %.0f q/s" % rate, paced_p99, best_pp,
                         "ms", False, None),
                        ("SearchWhileMerging", "indexing, searches unpaced", docs_unpaced, best_du,
                         "docs/s", True, None),
                        ("SearchWhileMerging", "new files' page cache", {k: [v / MIB for v in vs]
                                                                          for k, vs in fresh.items()},
                         best_c, "MiB", False, None)):
                    row = "%s: %s" % (name[d], suffix)
                    if d == best:
                        rows.add(grp, row, unit, vals[d], note=common + extra
                                 + " (best built-in: the baseline)")
                        continue
                    t = tgt if d == MINE else None
                    rows.add(grp, row, unit, vals[d], "%s: %s" % (name[best], suffix), vals[best],
                             higher=higher,
                             target=">= %.1fx the best built-in (per round)" % t if t else None,
                             limit=t, note=common + extra)
    return rows.rows


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, dest = argv[1], argv[2]
    host = argv[3] if len(argv) == 4 else " ".join(os.uname()[i] for i in (0, 2, 4))
    doc = {"suite": "lucene", "host": host,
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    if not os.path.exists(src):
        doc.update(results=[], skipped="no results: %s is missing" % src)
    else:
        with open(src, encoding="utf-8") as fh:
            ltm = json.load(fh)
        if ltm.get("skipped"):
            doc.update(results=[], skipped=ltm["skipped"])
        else:
            doc.update(file_mib=ltm["index_bytes"] // MIB, results=convert(ltm),
                       ltm_seconds=ltm.get("seconds"))
    with open(dest, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    print("lucene_ltm: %d rows -> %s%s" % (len(doc["results"]), dest,
                                           " (SKIPPED: %s)" % doc["skipped"] if doc.get("skipped") else ""))
    for r in doc["results"]:
        if r["target"]:
            print("  %-26s %-72s ratio %s (per-round %s)  target %s  met %s" % (
                r["group"], r["name"], r["ratio"], r.get("ratio_paired"), r["target"], r["met"]))
            if r["met"] is False:
                base = next(b for b in doc["results"] if b["group"] == r["group"]
                            and b["name"] == r["baseline"])
                print("    MISSED, round by round: this row %s; %s %s" % (
                    r["rounds"], base["name"], base["rounds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
