#!/usr/bin/env bash
# Lucene.NET on Mono (bindings/dotnet/NativeDir.Lucene.MonoBench): parallel search and
# sequential and random file reads on NativeDir.Lucene's NativeFSDirectory against the same
# Lucene.NET release's SimpleFS, NIOFS and MMap directories, all on Mono, every directory once
# per round, back to back (the first of a round rotating; MMapDirectory, a third of the others'
# search rate, searches in one round only). The targets are judged on the median
# of the per-round ratios: parallel search at least 1.3x the queries per second of the best
# built-in, random reads at most half of NIOFSDirectory's time; and positional reads on 4 threads
# through NativeDir.IO.RandomAccess at least 3x as fast as through a FileStream behind a lock.
# Writes $ND_BENCH_OUT/lucene-mono.json.
set -euo pipefail
build="${ND_BUILD_DIR:-build/bench}"
out="${ND_BENCH_OUT:-$build/results}"
mkdir -p "$out"
dll="$build/bindings/dotnet/artifacts/bin/NativeDir.Lucene.Benchmarks/release/NativeDir.Lucene.Benchmarks.dll"
[ -f "$dll" ] || cmake --build "$build" --target nativedir_lucene_bench
# ParallelSearch runs more rounds than the file rows: its per-round ratio is judged against a
# target a few percent from what it measures, and MMapDirectory runs one of them only
rounds=5
extra=(--search-rounds 11)
[ "${ND_BENCH_QUICK:-0}" = 1 ] && rounds=3 && extra=(--quick)
raw="$build/bindings/dotnet/monobench/rounds.json"
rc=0
bash bindings/dotnet/NativeDir.Lucene.MonoBench/mono-bench.sh "$build" run "$rounds" "$raw" ${extra[@]+"${extra[@]}"} || rc=$?
if [ "$rc" -eq 77 ]; then
  # no Mono here: an empty suite that says why, not a failure of the others
  printf '{"suite": "lucene-mono", "file_mib": 0, "host": "%s", "date": "%s", "note": "mono is not installed", "results": []}\n' \
    "$(uname -srm)" "$(date -u +%FT%TZ)" >"$out/lucene-mono.json"
  exit 0
fi
[ "$rc" -eq 0 ] || exit "$rc"

/usr/bin/python3 - "$raw" "$out/lucene-mono.json" "$(uname -srm)" <<'PY'
import json, sys, datetime
raw, dest, host = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
NAMES = {"NativeDir": "NativeDir.Lucene NativeFSDirectory (Mono)", "SimpleFS": "Lucene.NET SimpleFSDirectory (Mono)",
         "NIOFS": "Lucene.NET NIOFSDirectory (Mono)", "MMap": "Lucene.NET MMapDirectory (Mono)"}
BUILTIN = ["SimpleFS", "NIOFS", "MMap"]

def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2

results = []
def group(name, note, baseline=None, target=None, check=None, qps=None):
    t = raw[name]
    full = len(t["NativeDir"])
    if baseline is None:  # the best built-in of this run, of those that ran every round
        baseline = min([d for d in BUILTIN if len(t[d]) == full] or BUILTIN, key=lambda d: median(t[d]))
    for d in ["NativeDir"] + BUILTIN:
        s = t[d]
        r = {"group": "Mono" + name, "name": NAMES[d], "unit": "ms", "median": round(median(s), 4),
             "min": round(min(s), 4), "max": round(max(s), 4), "runs": len(s),
             "baseline": None if d == baseline else NAMES[baseline],
             "ratio": None if d == baseline else round(median(s) / median(t[baseline]), 3),
             "target": None, "met": None, "alloc_bytes": None, "rounds": s,
             "note": note + (" (the baseline)" if d == baseline else "")
                     + ("; %d of %d rounds (far behind)" % (len(s), full) if len(s) < full else "")}
        if qps:
            r["qps"] = round(qps / (median(s) / 1e3), 1)
        if d == "NativeDir" and target:
            r["ratio_paired"] = round(median([a / b for a, b in zip(s, t[baseline])]), 3)
            r["target"] = target + " (per-round)"
            r["met"] = check(r["ratio_paired"])
        results.append(r)

q = raw["queries"]
group("ParallelSearch", f"{q} queries (term, boolean, phrase, prefix) via Parallel.For over one IndexSearcher, "
      f"{raw['docs']} documents indexed on .NET; {raw['runtime']}",
      target=">= 1.3x qps of the best built-in", check=lambda r: r <= 1 / 1.3, qps=q)
group("ReadSequential", f"{raw['file_mib']} MiB in 8 KiB ReadBytes, input kept open", baseline="NIOFS")
group("ReadRandom", "10,000 Seek + 64-byte ReadBytes at random offsets", baseline="NIOFS",
      target="<= 0.5", check=lambda r: r <= 0.5)
# positional reads on 4 threads: NativeDir.IO.RandomAccess (nativedir's pread on the stream's
# handle) against a FileStream behind a lock, what Lucene.NET reads with on Mono and the .NET
# Framework, which have no RandomAccess; target: at least 3x as fast (per-round)
if "RandomAccessThreads" in raw:
    t, ra = raw["RandomAccessThreads"], raw["random_access"]
    ours, lock = "NativeDir.IO.RandomAccess.Read (Mono)", "FileStream Position+Read under a lock (Mono)"
    note = (f"{ra['threads']} threads x {ra['reads_per_thread']} reads of {ra['read_bytes']} B at random offsets of one "
            f"{raw['file_mib']} MiB file (cached), one FileStream's handle; {raw['runtime']}")
    for name, key in ((ours, "RandomAccess"), (lock, "FileStreamLock")):
        s = t[key]
        r = {"group": "MonoRandomAccessThreads", "name": name, "unit": "ms", "median": round(median(s), 4),
             "min": round(min(s), 4), "max": round(max(s), 4), "runs": len(s),
             "baseline": None if key == "FileStreamLock" else lock,
             "ratio": None if key == "FileStreamLock" else round(median(s) / median(t["FileStreamLock"]), 3),
             "target": None, "met": None, "alloc_bytes": None, "rounds": s,
             "note": note + (" (the baseline)" if key == "FileStreamLock" else "")}
        if key == "RandomAccess":
            r["ratio_paired"] = round(median([a / b for a, b in zip(s, t["FileStreamLock"])]), 3)
            r["speedup"] = round(1 / r["ratio_paired"], 2)
            r["target"] = ">= 3x as fast as the locked FileStream (per-round)"
            r["met"] = r["ratio_paired"] <= 1 / 3
        results.append(r)

json.dump({"suite": "lucene-mono", "file_mib": raw["file_mib"], "host": host,
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "results": results}, open(dest, "w"), indent=1)
print(f"lucene-mono: {len(results)} rows -> {dest}")
for r in results:
    if r["target"]:
        print(f"  {r['group']:<22} {r['name']:<45} ratio {r['ratio']} (per-round {r['ratio_paired']})  target {r['target']}  met {r['met']}")
PY
