#!/usr/bin/env bash
# Lucene.NET on an index larger than memory (bindings/dotnet/NativeDir.Lucene.Benchmarks,
# LargerThanMemory.cs): NativeFSDirectory beside Lucene.NET's MMap, NIOFS and SimpleFS directories
# searching a >= 1 GiB index with several threads while the process's memory cgroup holds 100%,
# 50%, 25% and 10% of the index as page cache, and searching at 25% while another thread indexes
# with merges running; at 10% also NativeFSDirectory with every search file random, the advice
# that suits an index many times the memory. The cgroup is nd_memlimit's (bench/nd_memlimit.c);
# where no memory cgroup can be made the rows are skipped with the reason. The index is built once and kept in
# $ND_BUILD_DIR/ltm-cache, named by its parameters (a fresh tree builds it within the run).
# Writes $ND_BENCH_OUT/lucene_ltm.json (suite "lucene").
set -euo pipefail
build="${ND_BUILD_DIR:-build/bench}"
src="${ND_SOURCE_DIR:-.}"
out="${ND_BENCH_OUT:-$build/results}"
dll="$build/bindings/dotnet/artifacts/bin/NativeDir.Lucene.Benchmarks/release/NativeDir.Lucene.Benchmarks.dll"
tool="$build/bench/nd_memlimit"
[ -f "$dll" ] || cmake --build "$build" --target nativedir_lucene_bench
[ -x "$tool" ] || cmake --build "$build" --target nd_memlimit
tool="$(cd "$(dirname "$tool")" && pwd)/nd_memlimit"
cache="$(cd "$build" && pwd)/ltm-cache"
scratch="$(cd "$(dirname "${ND_BENCH_DIR:-$build}/x")" && pwd)/bench-scratch-lucene-ltm"
rm -rf "$scratch"
mkdir -p "$scratch" "$out"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 ND_MEMLIMIT="$tool"
args=()
# the quick run's small index has a cache of its own: one shape is kept per cache, and a quick
# run must not delete the full run's index
[ "${ND_BENCH_QUICK:-0}" = 1 ] && args=(--quick) && cache="$cache-quick"
convert=(/usr/bin/python3 "$src/bindings/dotnet/NativeDir.Lucene.Benchmarks/ltm_to_shared_json.py"
         "$scratch/ltm.json" "$out/lucene_ltm.json" "$(uname -srm)")

if ! why=$("$tool" check 2>&1); then
  echo "lucene_ltm: SKIPPED, NO RESULTS: $why" >&2
  /usr/bin/python3 -c 'import json, sys; json.dump({"skipped": sys.argv[2]}, open(sys.argv[1], "w"))' \
    "$scratch/ltm.json" "$why"
  exec "${convert[@]}"
fi
echo "-- the index (kept in $cache, keyed by its parameters)"
dotnet "$dll" --ltm-cache "$cache" --ltm-build --dir "$scratch" ${args[@]+"${args[@]}"}
echo "-- search at memory limits, search while merging (inside nd_memlimit's cgroup)"
"$tool" run --stat "$scratch/cgroup.json" -- \
  dotnet "$dll" --ltm-cache "$cache" --out "$scratch/ltm.json" --dir "$scratch" ${args[@]+"${args[@]}"}
exec "${convert[@]}"
