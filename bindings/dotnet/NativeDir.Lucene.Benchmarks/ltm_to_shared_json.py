#!/usr/bin/python3
"""Turns the larger-than-memory runs of NativeDir.Lucene.Benchmarks (--ltm-cache ... --out
ltm.json), one per device the index was on, into the shared results format
(bench/suites.d/README.md) as suite "lucene".

    ltm_to_shared_json.py LTM_JSON[,LTM_JSON...] OUT_JSON [HOST]

A run that names its device (--ltm-device) gets it in every row's name, so the same cells on
two devices are two rows.

Groups:
  SearchLargerThanMemory    queries a second per directory per memory limit (rate: higher is
                            better); baseline: the built-in directory with the most queries a
                            second at that limit. Target on NativeFSDirectory (default policy):
                            >= 1.2x at every limit, judged per round; its policy variants have
                            none. A directory that ran fewer rounds at a limit says so.
  SearchLargerThanMemoryP99 the same cells' 99th-percentile query latency (ms, lower is better)
                            with the same queries offered at one fixed rate to every directory
                            (the cells' paced window): latency at equal load. Target on
                            NativeFSDirectory: no worse than the best built-in's (<= 1.0x, per
                            round). Where the baseline has no paced window (a run with none)
                            the unpaced p99 is judged; where only it has one, a directory without
                            (it ran one round) gets no row here.
  SearchLargerThanMemoryP99Unpaced  the p99 of the unpaced window's first queries (no target: it
                            ranks how busy each directory keeps the CPU as much as its latency)
  SearchWhileMerging        per merge limit: search queries a second and p99 while one more
                            thread indexes with merges running (target >= 1.3x the best
                            built-in); then, with the searches at a fixed offered rate, the same
                            for every directory: indexing documents a second (target >= 0.9x)
                            and the search p99; indexing beside the unpaced searches (no target:
                            there the indexer's share of the CPU is what the searches leave);
                            and the page cache the new (merged and flushed) files held at the
                            end (MiB, lower is better)
  SettleAfterLimitChange    NativeFSDirectory's searches while the cgroup's limit drops from
                            the high limit to the low one and rises back: per change, the
                            seconds until the rate stays within 25% of that of a directory
                            opened at the new limit next to the cell (the low one just before
                            it, the high one just after; without those, the search cells'
                            median), and the rate
                            over the phase's last three seconds as a multiple of it (target
                            >= 0.8x: it settles where a fresh open would be)

A ratio's verdict is the median over rounds of the ratio within a round (every cell of a limit
runs back to back in a round); with one round that is the plain ratio. Each row carries its
rounds (`rounds`) so that a miss shows them. A run skipped for want of a memory cgroup
(`skipped` in LTM_JSON, or no LTM_JSON) gives no rows and says why in `skipped`.

The suite also records `page_cache_reclaim`: what the kernel of the machine reclaims on its own,
before any limit is reached (see page_cache_reclaim()), or "none".
"""
import datetime
import json
import os
import statistics
import sys

BUILTINS = ("MMap", "NIOFS", "SimpleFS")
MINE = "NativeDir"  # the default policy: the targets are on it
SEARCH_TARGET = 1.2   # at every limit
P99_TARGET = 1.0      # no worse than the best built-in's
MERGE_QPS_TARGET = 1.3
MERGE_DOCS_TARGET = 0.9
SETTLE_TARGET = 0.8
SETTLE_BAND = 0.25
MIB = 1 << 20


def _read(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return None


def _int(path):
    """A whole number from a /sys file, or None where it is missing or not one (a kernel that
    words it otherwise must not cost the run its results)."""
    try:
        return int(_read(path))
    except (TypeError, ValueError):
        return None


def _mib_a_second(quota_bytes, reset_ms):
    if not quota_bytes or not reset_ms or quota_bytes <= 0 or reset_ms <= 0:
        return ""
    return ", at most %d MiB a second" % (quota_bytes * 1000 // reset_ms // MIB)


def page_cache_reclaim(root="/sys"):
    """What the kernel pages out on its own, before any memory limit is reached, as a phrase, or
    "none". Virtual machines often run DAMON for this: memory left cold for a while is paged out.
    It matters to these cells: where it spares mapped pages (its usual filter), the page cache a
    built-in reads into with read() goes, and a mapping's touched pages stay, so at 100% and 50%
    a cell measures the machine's policy as well as the directory's."""
    found = []
    kdamonds = os.path.join(root, "kernel", "mm", "damon", "admin", "kdamonds")
    for k in sorted(os.listdir(kdamonds)) if os.path.isdir(kdamonds) else []:
        kd = os.path.join(kdamonds, k)
        if _read(os.path.join(kd, "state")) != "on":
            continue
        contexts = os.path.join(kd, "contexts")
        for c in sorted(os.listdir(contexts)) if os.path.isdir(contexts) else []:
            ctx = os.path.join(contexts, c)
            aggr_us = _int(os.path.join(ctx, "monitoring_attrs", "intervals", "aggr_us"))
            schemes = os.path.join(ctx, "schemes")
            for sc in sorted(os.listdir(schemes)) if os.path.isdir(schemes) else []:
                scheme = os.path.join(schemes, sc)
                if _read(os.path.join(scheme, "action")) != "pageout":
                    continue
                age = _int(os.path.join(scheme, "access_pattern", "age", "min"))
                seconds = age * aggr_us / 1e6 if age is not None and aggr_us else None
                kinds = {}
                for kind in ("ops_filters", "filters"):
                    base = os.path.join(scheme, kind)
                    for f in os.listdir(base) if os.path.isdir(base) else []:
                        t = _read(os.path.join(base, f, "type"))
                        if t:
                            kinds[t] = _read(os.path.join(base, f, "allow")) != "N" and \
                                _read(os.path.join(base, f, "matching")) != "N"
                what = "page cache no process maps" if kinds.get("unmapped") and \
                    kinds.get("anon") is False else "memory"
                found.append("DAMON pages out %s once it has stayed cold %s%s" % (
                    what, "%g s" % seconds if seconds is not None else "a while",
                    _mib_a_second(_int(os.path.join(scheme, "quotas", "bytes")),
                                  _int(os.path.join(scheme, "quotas", "reset_interval_ms")))))
    module = os.path.join(root, "module", "damon_reclaim", "parameters")
    if _read(os.path.join(module, "enabled")) == "Y":
        age_us = _int(os.path.join(module, "min_age"))
        found.append("DAMON_RECLAIM pages out memory once it has stayed cold %s%s" % (
            "%g s" % (age_us / 1e6) if age_us is not None else "a while",
            _mib_a_second(_int(os.path.join(module, "quota_sz")),
                          _int(os.path.join(module, "quota_reset_interval_ms")))))
    return "; ".join(found) or "none"


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


def paired(vals, base_vals, rounds, base_rounds):
    """The values of the rounds both ran (a directory that ran fewer rounds at a limit is
    compared round by round where it ran)."""
    common = sorted(set(rounds) & set(base_rounds))
    pick = lambda vs, rs: [v for v, r in zip(vs, rs) if r in common]
    return pick(vals, rounds), pick(base_vals, base_rounds)


def rounds_of(cells, d):
    return [c["round"] for c in sorted(cells, key=lambda c: c["round"]) if c["directory"] == d]


def convert(ltm, rows=None):
    rows = rows or Rows()
    cells = ltm.get("cells") or []
    search = [c for c in cells if c["kind"] == "search"]
    merges = [c for c in cells if c["kind"] == "merge"]
    settles = [c for c in cells if c["kind"] == "settle"]
    device = ltm.get("device") or ""
    on = " [%s]" % device if device else ""
    idx = "%d MiB index (%d docs, %d segments%s), %d threads, %d queries, %g s window from the first query after "\
          "the queries once untimed%s" % (
              ltm["index_bytes"] // MIB, ltm["docs"], ltm["segments"],
              ", cached" if ltm.get("index_reused") else ", built in %.0f s" % ltm["build_seconds"],
              ltm["threads"], ltm["queries"], ltm["window_seconds"],
              "; on %s" % device if device else "")
    steady = {}  # (directory, limit %) -> median q/s, for the settle rows
    for pct in sorted({c["limit_pct"] for c in search}, reverse=True):
        at = [c for c in search if c["limit_pct"] == pct]
        qps, p99 = by_round(at, "qps"), by_round(at, "p99_ms")
        paced = by_round([c for c in at if "paced_p99_ms" in c], "paced_p99_ms")
        name = labels(at)
        builtins = [d for d in BUILTINS if d in qps]
        if not builtins:
            continue
        # the best built-in is the fastest of those that ran every round
        full = max(len(v) for v in qps.values())
        best = max([d for d in builtins if len(qps[d]) == full] or builtins,
                   key=lambda d: median(qps[d]))
        budget = at[0]["cache_budget_bytes"]
        for d in qps:
            steady[(d, pct)] = median(qps[d])
            cached = median([c["index_cached_bytes"] for c in at if c["directory"] == d])
            p = median(p99[d])
            n99 = median([c.get("p99_queries", c["queries"]) for c in at if c["directory"] == d])
            note = "%s; %.0f%% of the index (%.0f MiB) as page cache; %.0f MiB of the index cached "\
                   "at the end; p99 %.1f ms over the window's first %d queries (the same for every "\
                   "directory)" % (idx, pct, budget / MIB, cached / MIB, p, n99)
            if len(qps[d]) < full:
                shares = [c["far_behind"] for c in at if c["directory"] == d and "far_behind" in c]
                note += "; %d of %d rounds (far behind at this limit%s)" % (
                    len(qps[d]), full, ": its first round %.2fx the best built-in's, below %gx" % (
                        shares[0], ltm.get("far_behind_below", 0)) if shares else "")
            row = "%s, %d%% of the index in memory%s" % (name[d], pct, on)
            base = "%s, %d%% of the index in memory%s" % (name[best], pct, on)
            extra = {"limit_pct": pct, "device": device}
            # latency is judged at equal load where the baseline has a paced window; a
            # directory without one (it ran one round) has no judged p99 row then
            judged = paced if best in paced else p99
            if judged is paced and d in paced:
                pc = [c for c in at if c["directory"] == d and "paced_p99_ms" in c][0]
                p99_note = "p99 query latency with the window's first %d queries offered at %.0f "\
                           "q/s, the same for every directory; %s" % (pc["paced_queries"], pc["paced_rate"], note)
            else:
                p99_note = "p99 query latency of the unpaced window (no paced window here); " + note
            unpaced_note = "p99 query latency of the unpaced window (each directory's threads "\
                           "as busy as it lets them be); " + note
            if d == best:
                rows.add("SearchLargerThanMemory", row, "q/s", qps[d],
                         note=note + " (best built-in: the baseline)", p99_ms=p, **extra)
                rows.add("SearchLargerThanMemoryP99", row, "ms", judged[d], note=p99_note, **extra)
                rows.add("SearchLargerThanMemoryP99Unpaced", row, "ms", p99[d], note=unpaced_note, **extra)
                continue
            mine = d == MINE
            rs, brs = rounds_of(at, d), rounds_of(at, best)
            v, bv = paired(qps[d], qps[best], rs, brs)
            rows.add("SearchLargerThanMemory", row, "q/s", v, base, bv,
                     target=">= %.1fx the best built-in (per round)" % SEARCH_TARGET if mine else None,
                     limit=SEARCH_TARGET if mine else None, note=note, p99_ms=p, **extra)
            if d in judged:
                v, bv = paired(judged[d], judged[best], rs, brs)
                rows.add("SearchLargerThanMemoryP99", row, "ms", v, base, bv, higher=False,
                         target="<= %.1fx the best built-in's p99 (per round)" % P99_TARGET if mine else None,
                         limit=P99_TARGET if mine else None, note=p99_note, **extra)
            v, bv = paired(p99[d], p99[best], rs, brs)
            rows.add("SearchLargerThanMemoryP99Unpaced", row, "ms", v, base, bv, higher=False,
                     note=unpaced_note, **extra)
    for pct in sorted({c["limit_pct"] for c in merges}, reverse=True):
        convert_merges([c for c in merges if c["limit_pct"] == pct], ltm, idx, on, rows)
    for c in settles:
        convert_settle(c, steady, idx, on, rows)
    return rows.rows


def convert_settle(c, steady, idx, on, rows):
    """The two changes of a settle cell: from the high limit to the low one and back."""
    qps, width = c["bucket_qps"], c["bucket_s"]
    high, low = c["settle_high_pct"], c["settle_low_pct"]
    phases = ((c["drop_at_s"], c["raise_at_s"], low, high),
              (c["raise_at_s"], len(qps) * width, high, low))
    for start, end, to, frm in phases:
        # measured next to the cell where the run did (a drift over the run moves both sides alike)
        near = c.get("reference_%s_qps" % ("low" if to == low else "high"))
        target_rate = near or steady.get((MINE, to))
        if not target_rate:
            continue
        opened = "a directory opened at %d%% %s serves %.0f q/s" % (
            to, ("just before this cell" if to == low else "just after it") if near else "(the search cells)",
            target_rate)
        if near and steady.get((MINE, to)):
            opened += " (the search cells' median: %.0f)" % steady[(MINE, to)]
        first, last = int(start / width + 0.5), int(end / width)
        series = qps[first:last]
        # the first bucket from which every 1-s average (two buckets) stays within the band
        settled = None
        for i in range(len(series)):
            rest = [(series[j] + series[j + 1]) / 2 for j in range(i, len(series) - 1)]
            if rest and all(abs(r - target_rate) <= SETTLE_BAND * target_rate for r in rest):
                settled = i * width
                break
        tail = series[-int(3 / width):] if len(series) >= int(3 / width) else series
        ratio = (sum(tail) / len(tail)) / target_rate if tail else 0
        name = "NativeDir.Lucene NativeFSDirectory, page cache from %d to %d percent of the index%s" % (
            frm, to, on)
        note = "%s; searches on while the cgroup's limit changes; q/s per %.1f s after the change: "\
               "%s; %s" % (idx, width, " ".join("%.0f" % q for q in series), opened)
        rows.add("SettleAfterLimitChange", name + ": seconds to settle", "s",
                 [settled if settled is not None else (end - start)], higher=False,
                 note=note + ("" if settled is not None else "; never within 25%% in the phase"))
        rows.add("SettleAfterLimitChange", name + ": settled rate", "q/s", [ratio * target_rate],
                 "NativeDir.Lucene NativeFSDirectory, opened at %d%%%s" % (to, on), [target_rate],
                 target=">= %.1fx a directory opened at the new limit" % SETTLE_TARGET,
                 limit=SETTLE_TARGET, note=note)


def convert_merges(merges, ltm, idx, on, rows):
    if merges:
        qps, p99 = by_round(merges, "qps"), by_round(merges, "p99_ms")
        docs, fresh = by_round(merges, "docs_per_s"), by_round(merges, "new_files_cached_bytes")
        docs_unpaced = by_round(merges, "docs_per_s_unpaced")
        paced_p99 = by_round(merges, "paced_p99_ms")
        rate = merges[0]["paced_rate"]
        name = labels(merges)
        builtins = [d for d in BUILTINS if d in qps]
        # the best built-in is one that ran every round (one run far behind is not a baseline)
        full = max(len(v) for v in qps.values())
        builtins = [d for d in builtins if len(qps[d]) == full] or builtins
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
                    row = "%s, %d%% of the index in memory%s: %s" % (name[d], pct, on, suffix)
                    if d == best:
                        rows.add(grp, row, unit, vals[d], note=common + extra
                                 + " (best built-in: the baseline)")
                        continue
                    t = tgt if d == MINE else None
                    rows.add(grp, row, unit, vals[d],
                             "%s, %d%% of the index in memory%s: %s" % (name[best], pct, on, suffix), vals[best],
                             higher=higher,
                             target=">= %.1fx the best built-in (per round)" % t if t else None,
                             limit=t, note=common + extra)


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, dest = argv[1], argv[2]
    host = argv[3] if len(argv) == 4 else " ".join(os.uname()[i] for i in (0, 2, 4))
    doc = {"suite": "lucene", "host": host, "page_cache_reclaim": page_cache_reclaim(),
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    if not any(os.path.exists(one) for one in src.split(",")):
        doc.update(results=[], skipped="no results: %s is missing" % src)
    else:
        rows, skipped, seconds, mib = Rows(), [], 0, None
        for one in src.split(","):
            if not os.path.exists(one):
                skipped.append("no results: %s is missing" % one)
                continue
            with open(one, encoding="utf-8") as fh:
                ltm = json.load(fh)
            if ltm.get("skipped"):
                skipped.append(ltm["skipped"])
                continue
            convert(ltm, rows)
            seconds += ltm.get("seconds") or 0
            mib = ltm["index_bytes"] // MIB
        doc.update(results=rows.rows, ltm_seconds=seconds)
        if mib is not None:
            doc["file_mib"] = mib
        if skipped:
            doc["skipped"] = "; ".join(skipped)
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
                base = next((b for b in doc["results"] if b["group"] == r["group"]
                             and b["name"] == r["baseline"]), None)
                print("    MISSED, round by round: this row %s; %s %s" % (
                    r["rounds"], r["baseline"], base["rounds"] if base else "(a search cell's median)"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
