#!/usr/bin/env bash
# Lucene (Java) on nativedir (bindings/java/lucene/src/bench: nativedir-lucene's NativeFSDirectory
# beside Lucene's MMapDirectory, NIOFSDirectory and SimpleFSDirectory, Debian's Lucene 8.8.1):
# reads through IndexInput, indexing, parallel search, and search of a >= 1 GiB index with 25%
# and 10% of it as page cache inside nd_memlimit's memory cgroup (bench/nd_memlimit.c; skipped
# with the reason where none can be made). The index is built once and kept in
# $ND_BUILD_DIR/ltm-cache-java, named by its parameters. Writes $ND_BENCH_OUT/lucene_java.json
# (suite "lucene-java").
set -euo pipefail
build="${ND_BUILD_DIR:-build/bench}"
jars="$build/bindings/java"
lucene=$(ls /usr/share/java/lucene-core-8*.jar 2>/dev/null | head -1)
[ -n "$lucene" ] || { echo "lucene_java: no lucene-core-8*.jar (scripts/deps.sh --bench installs liblucene8-java)" >&2; exit 1; }
if [ ! -f "$jars/nativedir-lucene-bench.jar" ] || [ ! -f "$jars/libnativedir_jni.so" ]; then
  cmake --build "$build" --target nativedir_lucene_java_bench nativedir_java_jar
fi
[ -x "$build/bench/nd_memlimit" ] || cmake --build "$build" --target nd_memlimit || true
args=(--memlimit "$(cd "$build" && pwd)/bench/nd_memlimit" --cache "$(cd "$build" && pwd)/ltm-cache-java")
# the quick run's small index has a cache of its own: a quick run must not delete the full index
[ "${ND_BENCH_QUICK:-0}" = 1 ] && args=(--memlimit "$(cd "$build" && pwd)/bench/nd_memlimit" \
  --cache "$(cd "$build" && pwd)/ltm-cache-java-quick" --quick)
# a fixed heap: indexing and search must not be measured through heap resizing
exec java -Xms1g -Xmx1g -cp "$jars/nativedir.jar:$jars/nativedir-lucene.jar:$jars/nativedir-lucene-bench.jar:$lucene" \
  io.nativedir.lucene.bench.LuceneBench \
  --dir "${ND_BENCH_DIR:-$build}" \
  --out "${ND_BENCH_OUT:-$build/results}" \
  --host "$(uname -srm)" "${args[@]}"
