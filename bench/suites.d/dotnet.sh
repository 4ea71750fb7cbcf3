#!/usr/bin/env bash
# The .NET benchmark (bindings/dotnet/NativeDir.Benchmarks, BenchmarkDotNet with MemoryDiagnoser)
# against the library built in $ND_BUILD_DIR; converts BenchmarkDotNet's JSON report into
# $ND_BENCH_OUT/dotnet.json. About 4 minutes for the 64 MiB workload, 1 with --quick.
set -euo pipefail
src="${ND_SOURCE_DIR:-.}"
build="${ND_BUILD_DIR:-build/bench}"
out="${ND_BENCH_OUT:-$build/results}"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
# the glue library, the SWIG output and the benchmark assembly (a no-op when up to date)
cmake --build "$build" --target nativedir_dotnet_build
bench_dll="$build/bindings/dotnet/artifacts/bin/NativeDir.Benchmarks/release/NativeDir.Benchmarks.dll"
results="$build/bindings/dotnet/bench-results"
rm -rf "$results"
# --paired-rounds: the rows with a ratio target timed against their baselines back to back, round
# by round, after BenchmarkDotNet (paired.json; the targets are judged on those per-round ratios)
args=(--mib 64 --random-reads 100000 --iterations 9 --paired-rounds 21)
[ "${ND_BENCH_QUICK:-0}" = 1 ] && args=(--mib 16 --random-reads 20000 --iterations 3 --paired-rounds 5)
dotnet "$bench_dll" --dir "${ND_BENCH_DIR:-$build}/bench-scratch-dotnet" --out "$results" "${args[@]}"
mkdir -p "$out"
/usr/bin/python3 "$src/bindings/dotnet/NativeDir.Benchmarks/to_shared_json.py" "$results" "$out/dotnet.json"
