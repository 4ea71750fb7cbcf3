#!/usr/bin/env bash
# The comparison benchmark (the README's first command): installs what is
# missing, builds a Release tree in build/bench, runs the C benchmark and then
# every other language's benchmark that exists (bench/suites.d/*.sh), and
# merges their results into one Markdown table and one chart.
#
#   scripts/bench.sh [nd_bench options]     e.g. --quick, --runs 5, --dir /mnt/disk
#
# Results: $ND_BENCH_OUT (default build/bench/results): <suite>.json,
# report.md, summary.png (one screen: each runtime and job) and chart.png
# (every row). The scratch files go under build/bench (a real
# disk; set ND_BENCH_DIR or pass --dir to choose another, never tmpfs).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

scripts/deps.sh --bench
# the benchmark needs the library and every binding (said explicitly, so that a
# tree configured earlier without them gets them back), not the test or cross
# builds; ND_BENCH_CMAKE_ARGS adds cache settings of the user's own
cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DND_BUILD_TESTS=OFF \
      -DND_BUILD_SANITIZED_TESTS=OFF -DND_BUILD_CROSS=OFF \
      -DND_BUILD_DOTNET=ON -DND_BUILD_JAVA=ON -DND_BUILD_PYTHON=ON \
      ${ND_BENCH_CMAKE_ARGS:-} >/dev/null
# the C benchmark first, so that a binding that fails to build cannot stop it
cmake --build build/bench -j"$(nproc)" --target nd_bench
failed=()
cmake --build build/bench -j"$(nproc)" || failed+=("build")

export ND_BENCH_OUT="${ND_BENCH_OUT:-$root/build/bench/results}"
export ND_BUILD_DIR="$root/build/bench"
export ND_SOURCE_DIR="$root"
export ND_BENCH_QUICK=0
for a in "$@"; do [ "$a" = "--quick" ] && ND_BENCH_QUICK=1; done
mkdir -p "$ND_BENCH_OUT"
# only this run's results may reach the report
rm -f "$ND_BENCH_OUT"/*.json "$ND_BENCH_OUT"/report.md "$ND_BENCH_OUT"/chart.png \
      "$ND_BENCH_OUT"/summary.png

# each part's wall time, printed after it and again at the end (the whole run has 15 minutes)
times=("set-up and build: $SECONDS s")
t0=$SECONDS
echo "== C benchmark (bench/nd_bench.c)"
# this run's C results, for a suite that compares with one of its rows
if build/bench/bench/nd_bench "$@"; then
  export ND_BENCH_C_RESULTS="$ND_BENCH_OUT/c.json"
else
  failed+=("c")
fi
times+=("c: $((SECONDS - t0)) s")

# ---- hook: every other language's benchmark ------------------------------
# Each bench/suites.d/<suite>.sh runs one language's benchmark against the
# library built above and writes $ND_BENCH_OUT/<suite>.json in the shared
# format (see bench/suites.d/README.md). A failing suite is reported at the
# end; the others still run and still reach the table.
for suite in bench/suites.d/*.sh; do
  [ -e "$suite" ] || continue
  name=$(basename "$suite" .sh)
  echo "== $name benchmark ($suite)"
  t0=$SECONDS
  if ! bash "$suite"; then
    failed+=("$name")
  elif [ ! -s "$ND_BENCH_OUT/$name.json" ]; then
    echo "bench: $suite exited 0 but wrote no $ND_BENCH_OUT/$name.json" >&2
    failed+=("$name")
  fi
  times+=("$name: $((SECONDS - t0)) s")
  echo "-- $name: $((SECONDS - t0)) s"
done
# ---------------------------------------------------------------------------

echo "== report"
/usr/bin/python3 bench/runner.py "$ND_BENCH_OUT" || failed+=("runner")
echo
echo "table: $ND_BENCH_OUT/report.md"
echo "summary: $ND_BENCH_OUT/summary.png"
echo "chart: $ND_BENCH_OUT/chart.png"
echo "time: ${times[*]/%/;} whole run $SECONDS s"
if ((${#failed[@]})); then
  echo "bench: FAILED: ${failed[*]}" >&2
  exit 1
fi
