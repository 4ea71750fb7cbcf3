#!/usr/bin/env bash
# NativeDir.Lucene's benchmark (bindings/dotnet/NativeDir.Lucene.Benchmarks, BenchmarkDotNet with
# MemoryDiagnoser): the NativeUnixDirectory port's file table (Write made durable, ReadSequential,
# ReadByte, ReadRandom, ConcurrentCloneReads) for NativeDir.Lucene beside Lucene.NET's SimpleFS,
# NIOFS, MMap and RAM directories, parallel search and indexing. The device's own limit for the
# durable write is the C suite's raw O_DIRECT write+fsync of the same run: its results where
# scripts/bench.sh names them (ND_BENCH_C_RESULTS) and they timed a file of this size, else run
# here. Writes $ND_BENCH_OUT/lucene.json.
set -euo pipefail
build="${ND_BUILD_DIR:-build/bench}"
out="${ND_BENCH_OUT:-$build/results}"
dll="$build/bindings/dotnet/artifacts/bin/NativeDir.Lucene.Benchmarks/release/NativeDir.Lucene.Benchmarks.dll"
ndbench="$build/bench/nd_bench"
# the bench tree may not be built yet, or was configured without the .NET binding
[ -f "$dll" ] || cmake --build "$build" --target nativedir_lucene_bench
[ -x "$ndbench" ] || cmake --build "$build" --target nd_bench

scratch="$(cd "$(dirname "${ND_BENCH_DIR:-$build}/x")" && pwd)/bench-scratch-lucene"
rm -rf "$scratch"
mkdir -p "$scratch" "$out"
quick=()
mib=64
if [ "${ND_BENCH_QUICK:-0}" = 1 ]; then quick=(--quick); mib=4; fi
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

c_results="${ND_BENCH_C_RESULTS:-}"
if [ -n "$c_results" ] && /usr/bin/python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
sys.exit(0 if c.get("file_mib") == int(sys.argv[2]) and any(
    r["group"] == "WriteSync" and r["baseline"] is None for r in c["results"]) else 1)
' "$c_results" "$mib" 2>/dev/null; then
  echo "-- raw O_DIRECT write+fsync of ${mib} MiB (the device's limit): the C suite's row ($c_results)"
else
  echo "-- raw O_DIRECT write+fsync of ${mib} MiB (the device's limit, C suite)"
  "$ndbench" --only Write --size-mib "$mib" --runs 7 --dir "$scratch/c" --out "$scratch/c-out" >/dev/null
  c_results="$scratch/c-out/c.json"
fi
echo "-- page cache left by a ${mib} MiB merge output"
dotnet "$dll" --cache-check --dir "$scratch/cache" --out "$scratch/cache.json" ${quick[@]+"${quick[@]}"}
echo "-- BenchmarkDotNet"
dotnet "$dll" --dir "$scratch/work" --artifacts "$scratch/artifacts" ${quick[@]+"${quick[@]}"}
rounds=15
# an indexing round's ratio to a built-in spreads 0.65-1.5 (the disk's syncs, GC, which vCPU):
# over 15 rounds the median moved by +-0.06 from run to run; 45 rounds cost ~20 s more
index_rounds=45
[ "${ND_BENCH_QUICK:-0}" = 1 ] && rounds=5 && index_rounds=5
echo "-- indexing, paired: $index_rounds rounds, each directory once per round (the Indexing row's per-round ratio)"
dotnet "$dll" --paired-index "$index_rounds" --dir "$scratch/paired" --out "$scratch/paired-index.json" ${quick[@]+"${quick[@]}"}
echo "-- file reads, paired: $rounds rounds of NativeDir.Lucene and each row's baseline, one CPU (the file rows' per-round ratios)"
dotnet "$dll" --paired-reads "$rounds" --dir "$scratch/paired" --out "$scratch/paired-reads.json" ${quick[@]+"${quick[@]}"}
echo "-- durable write, paired: $rounds rounds of raw O_DIRECT, NativeDir.Lucene and SimpleFS (the WriteSync row's per-round ratio)"
dotnet "$dll" --paired-write "$rounds" --dir "$scratch/paired" --out "$scratch/paired-write.json" ${quick[@]+"${quick[@]}"}
echo "-- NativeUnixDirectory's file table, paired: $rounds rounds (merge write made durable, sequential and random reads)"
dotnet "$dll" --misc-dirs "$rounds" --dir "$scratch/misc" --out "$scratch/misc-dirs.json" ${quick[@]+"${quick[@]}"}
wine_rounds=7
[ "${ND_BENCH_QUICK:-0}" = 1 ] && wine_rounds=3
echo "-- WindowsDirectory's file table under Wine, paired: $wine_rounds rounds"
wrc=0
bash bindings/dotnet/NativeDir.Lucene.Benchmarks/misc-wine.sh "$build" "$wine_rounds" "$scratch/misc-dirs-wine.json" \
  ${quick[@]+"${quick[@]}"} || wrc=$?
[ "$wrc" -eq 0 ] || [ "$wrc" -eq 77 ] || exit "$wrc"

/usr/bin/python3 - "$scratch" "$out/lucene.json" "$mib" "$(uname -srm)" "$c_results" <<'PY'
import glob, json, sys, datetime
scratch, dest, mib, host, c_results = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]

bdn = {}
for f in glob.glob(f"{scratch}/artifacts/results/*-report-full.json"):
    for b in json.load(open(f))["Benchmarks"]:
        d = b["Parameters"].replace("Directory=", "") or "nativedir"
        st = b["Statistics"]
        bdn[(b["Type"], b["Method"], d)] = {
            "median": st["Median"] / 1e6, "min": st["Min"] / 1e6, "max": st["Max"] / 1e6,
            "runs": st["N"], "alloc_bytes": (b.get("Memory") or {}).get("BytesAllocatedPerOperation")}
cache = json.load(open(f"{scratch}/cache.json"))
paired_index = json.load(open(f"{scratch}/paired-index.json"))
paired_write = json.load(open(f"{scratch}/paired-write.json"))  # {} where raw O_DIRECT is not measured
paired_reads = json.load(open(f"{scratch}/paired-reads.json"))
c = json.load(open(c_results))
raw = next(r for r in c["results"] if r["group"] == "WriteSync" and r["baseline"] is None)

NAMES = {"NativeDir": "NativeDir.Lucene NativeFSDirectory", "SimpleFS": "Lucene.NET SimpleFSDirectory",
         "NIOFS": "Lucene.NET NIOFSDirectory", "MMap": "Lucene.NET MMapDirectory",
         "RAM": "Lucene.NET RAMDirectory"}
DIRS = list(NAMES)
BUILTIN_FS = ["SimpleFS", "NIOFS", "MMap"]  # durable built-ins: RAM keeps nothing on disk
results = []

def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2

def row(group, name, s, baseline=None, base=None, target=None, met=None, note=None, **extra):
    r = {"group": group, "name": name, "unit": "ms", "median": round(s["median"], 4),
         "min": round(s["min"], 4), "max": round(s["max"], 4), "runs": s["runs"],
         "baseline": baseline, "ratio": round(s["median"] / base["median"], 3) if base else None,
         "target": target, "met": met, "alloc_bytes": s.get("alloc_bytes"), "note": note}
    r.update(extra)
    results.append(r)
    return r

def table(group, typ, method, base_dir, target, check, note):
    base = bdn[(typ, method, base_dir)]
    paired = paired_reads.get(method, {})
    # the rounds of the judged row and of its baseline: the per-round ratios a miss is shown by
    rounds = paired if paired.get("NativeDir") and paired.get(base_dir) else {}
    for d in DIRS:
        s = bdn[(typ, method, d)]
        if d == base_dir:
            row(group, NAMES[d], s, note=note, **({"rounds": rounds[d]} if rounds else {}))
            continue
        ratio = s["median"] / base["median"]
        mine = d == "NativeDir"
        extra = {}
        if mine and rounds:
            # the median of per-round ratios, both read back to back on one CPU (--paired-reads):
            # the verdict, as for the C rows; BenchmarkDotNet's medians stay in the table
            extra["ratio_paired"] = ratio = round(median(
                [a / b for a, b in zip(paired[d], paired[base_dir])]), 3)
            extra["rounds"] = paired[d]
        row(group, NAMES[d], s, NAMES[base_dir], base,
            (target + (" (per-round)" if "ratio_paired" in extra else "")) if mine and target else None,
            check(ratio) if mine and check else None, note, **extra)

table("ReadSequential", "FileReads", "ReadSequential", "RAM", "<= 1.5", lambda r: r <= 1.5,
      f"{mib} MiB in 8 KiB ReadBytes, input kept open (mapped for NativeDir.Lucene)")
table("ReadByteSequential", "FileReads", "ReadByteSequential", "RAM", "<= 1.5", lambda r: r <= 1.5,
      f"ReadByte over {mib // 4} MiB (a quarter of the file)")
table("ReadRandom", "FileReads", "ReadRandom", "NIOFS", "<= 0.5", lambda r: r <= 0.5,
      "10,000 Seek + 64-byte ReadBytes at random offsets")
table("ConcurrentCloneReads", "FileReads", "ConcurrentCloneReads", "RAM", None, None,
      f"4 threads, one clone each, each reading all {mib} MiB in 8 KiB reads")

# WriteSync: durable write of the file of record against the device's raw limit
rawname = "raw O_DIRECT write+fsync (C nd_bench, " + raw["name"].split("fsync ")[-1] + ")"
rawrow = {"median": raw["median"], "min": raw["min"], "max": raw["max"], "runs": raw["runs"],
          "alloc_bytes": None}
row("WriteSync", rawname, rawrow, note=f"{mib} MiB, no library: the device's limit (same run)",
    **({"rounds": paired_write["raw"]} if paired_write.get("raw") and paired_write.get("NativeDir") else {}))
nd = bdn[("DeviceLimit", "DirectWriteSync", "nativedir")]
row("WriteSync", "NativeDir NativeOutput (Merge|RequireDirect) + Sync", nd, rawname, rawrow,
    note="1 MiB writes through the .NET binding, direct I/O required")
simple = bdn[("FileWrite", "Write", "SimpleFS")]
for d in DIRS:
    s = bdn[("FileWrite", "Write", d)]
    extra = {"cached_pct": cache.get(d)}
    if d == "NativeDir":
        if paired_write.get("raw") and paired_write.get(d):
            # the median of per-round ratios to raw O_DIRECT written back to back (--paired-write)
            extra["ratio_paired"] = round(median(
                [a / b for a, b in zip(paired_write[d], paired_write["raw"])]), 3)
            extra["rounds"] = paired_write[d]
        # The verdict is the per-round ratio where it was measured: the raw row's median comes
        # from nd_bench minutes before BenchmarkDotNet's, and the device's rate moves by a third
        # between minutes on the development VM; the ratio of medians stays in the table.
        r1 = extra.get("ratio_paired", s["median"] / raw["median"])
        met = r1 <= 1.25 and s["median"] <= simple["median"] and (cache.get(d) or 0) <= 5
        row("WriteSync", NAMES[d], s, rawname, rawrow,
            "<= 1.25 x raw (per-round); <= SimpleFS; merged file not cached", met,
            f"merge-context output + Sync; {s['median'] / simple['median']:.2f}x SimpleFS; "
            f"{cache.get(d)}% of the file left in the page cache", **extra)
    else:
        row("WriteSync", NAMES[d], s, rawname, rawrow,
            note="RAM: nothing reaches the disk" if d == "RAM" else "output + Sync", **extra)

def best_table(group, typ, method, target, check, note, per_op=None, paired=None):
    best = min(BUILTIN_FS, key=lambda d: bdn[(typ, method, d)]["median"])
    base = bdn[(typ, method, best)]
    for d in DIRS:
        s = bdn[(typ, method, d)]
        extra = {}
        if per_op:
            extra["qps"] = round(per_op / (s["median"] / 1e3), 1)
        mine = d == "NativeDir"
        if paired and d in (best, "NativeDir"):
            extra["rounds"] = paired[d]
        if mine and paired:
            # the median of per-round ratios to the same baseline, measured back to back in
            # each round (--paired-index): the disk's slow minutes hit both sides alike
            extra["ratio_paired"] = round(median(
                [a / b for a, b in zip(paired[d], paired[best])]), 3)
        if d == best:
            row(group, NAMES[d], s, note=note + " (best built-in: the baseline)", **extra)
        else:
            # with per-round ratios (--paired-index) they are the verdict: the ratio of medians
            # sets one median against the least of three noisy ones, which leans against any
            # directory that is only as fast (it stays in the table)
            r = extra.get("ratio_paired", s["median"] / base["median"])
            row(group, NAMES[d], s, NAMES[best], base,
                (target + (" (per-round)" if "ratio_paired" in extra else "")) if mine else None,
                check(r) if mine else None, note, **extra)

quick = mib != 64
queries = (100 if quick else 500) * 4
best_table("ParallelSearch", "ParallelSearch", "Search", ">= 1.2x qps of the best built-in",
           lambda r: r <= 1 / 1.2,
           f"{queries} queries (term, boolean, phrase, prefix) via Parallel.For over one IndexSearcher",
           per_op=queries)
best_table("Indexing", "Indexing", "Index", "<= 1.0 (no slower than the best built-in)", lambda r: r <= 1.0,
           f"{1000 if quick else 5000} SDK doc members, default IndexWriterConfig, commit (synced)",
           paired=paired_index)

# NativeUnixDirectory (this OS) and WindowsDirectory (under Wine): the port's file table on ours
# (--misc-dirs: every directory once per round, back to back). Targets on per-round ratios: the
# durable merge write no slower than SimpleFS's; reads within 1.5x of the fastest on-disk built-in
# of the same round. NativeUnixDirectory reads through its delegate (search reads never go
# direct): over NativeFSDirectory, the one recommended, it is judged; over FSDirectory.Open's
# choice (MMapDirectory) its reads are that directory's, shown for comparison.
import os
MISC = {"NativeUnix(NativeFS)": "NativeDir.Lucene.Misc NativeUnixDirectory over NativeFSDirectory",
        "NativeUnix(FSDirectory.Open)": "NativeDir.Lucene.Misc NativeUnixDirectory over FSDirectory.Open",
        "Windows": "NativeDir.Lucene.Misc WindowsDirectory"}
def misc_rows(path, where):
    if not os.path.exists(path):
        return
    m = json.load(open(path))
    label = lambda k: (MISC.get(k) or NAMES[k]) + where
    for group, what in (("Write", "merge-context output of the file + Sync (durable)"),
                        ("ReadSequential", "the file in 8 KiB ReadBytes, input opened for search"),
                        ("ReadRandom", "10,000 Seek + 64-byte ReadBytes, input opened for search")):
        t = m[group]
        n = len(next(iter(t.values())))
        if group == "Write":
            base, per_round, aim = "SimpleFS", t["SimpleFS"], 1.0
            target, judged = "<= 1.0 x SimpleFS (per-round)", lambda k: k in MISC
        else:
            base = min(BUILTIN_FS, key=lambda d: median(t[d]))
            per_round = [min(t[d][i] for d in BUILTIN_FS) for i in range(n)]
            aim = 1.5
            target = "<= 1.5 x the fastest of SimpleFS, NIOFS, MMap in each round (per-round)"
            judged = lambda k: k in MISC and k != "NativeUnix(FSDirectory.Open)"
        note = f"{m['file_mib']} MiB: {what}; {n} rounds"
        for k, v in t.items():
            s = {"median": median(v), "min": min(v), "max": max(v), "runs": n, "alloc_bytes": None}
            if k == base:
                row("Misc" + group, label(k), s, note=note + " (the baseline)", rounds=v)
                continue
            extra = {"rounds": v}
            if k in MISC:
                extra["ratio_paired"] = round(median([a / b for a, b in zip(v, per_round)]), 3)
            row("Misc" + group, label(k), s, label(base), {"median": median(t[base])},
                target if judged(k) else None, (extra["ratio_paired"] <= aim) if judged(k) else None,
                note + ("; reads are the delegate's (MMapDirectory)" if k == "NativeUnix(FSDirectory.Open)" and group != "Write" else ""),
                **extra)
misc_rows(f"{scratch}/misc-dirs.json", "")
misc_rows(f"{scratch}/misc-dirs-wine.json", " (Wine)")

json.dump({"suite": "lucene", "file_mib": mib, "host": host,
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "results": results}, open(dest, "w"), indent=1)
print(f"lucene: {len(results)} rows -> {dest}")
for r in results:
    if r["target"]:
        paired = f" (per-round {r['ratio_paired']})" if r.get("ratio_paired") is not None else ""
        print(f"  {r['group']:<22} {r['name']:<40} ratio {r['ratio']}{paired}  target {r['target']}  met {r['met']}")
PY
