#!/usr/bin/env bash
# The Java benchmark (bindings/java/src/bench: nativedir beside FileChannel and
# MappedByteBuffer) against the jar built in $ND_BUILD_DIR; writes
# $ND_BENCH_OUT/java.json.
set -euo pipefail
build="${ND_BUILD_DIR:-build/bench}"
jars="$build/bindings/java"
if [ ! -f "$jars/nativedir-bench.jar" ] || [ ! -f "$jars/libnativedir_jni.so" ]; then
  # the bench tree may have been configured with ND_BUILD_JAVA=OFF or not built yet
  cmake --build "$build" --target nativedir_java_bench
fi
# LargerThanMemory runs its reads inside nd_memlimit's memory cgroup
[ -x "$build/bench/nd_memlimit" ] || cmake --build "$build" --target nd_memlimit || true
args=(--memlimit "$build/bench/nd_memlimit")
[ "${ND_BENCH_QUICK:-0}" = 1 ] && args+=(--quick)
# a fixed heap: the workload of record must not be measured through heap resizing
exec java -Xms512m -Xmx512m -cp "$jars/nativedir.jar:$jars/nativedir-bench.jar" \
  io.nativedir.bench.JavaBench \
  --dir "${ND_BENCH_DIR:-$build}/bench-scratch-java" \
  --out "${ND_BENCH_OUT:-$build/results}" \
  --host "$(uname -srm)" "${args[@]}"
