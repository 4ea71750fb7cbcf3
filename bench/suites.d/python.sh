#!/usr/bin/env bash
# The Python benchmark (bindings/python/bench_nativedir.py) against the
# binding built in $ND_BUILD_DIR; writes $ND_BENCH_OUT/python.json.
set -euo pipefail
build="${ND_BUILD_DIR:-build/bench}"
pkg="$build/bindings/python/pkg"
if ! ls "$pkg"/nativedir/_native*.so >/dev/null 2>&1; then
  # the bench tree may have been configured with ND_BUILD_PYTHON=OFF or not built yet
  cmake --build "$build" --target nativedir_python
fi
# LargerThanMemory runs its reads inside nd_memlimit's memory cgroup
[ -x "$build/bench/nd_memlimit" ] || cmake --build "$build" --target nd_memlimit || true
args=()
[ "${ND_BENCH_QUICK:-0}" = 1 ] && args+=(--quick)
PYTHONPATH="$pkg" exec /usr/bin/python3 "${ND_SOURCE_DIR:-.}/bindings/python/bench_nativedir.py" \
  --dir "${ND_BENCH_DIR:-$build}/bench-scratch-python" \
  --out "${ND_BENCH_OUT:-$build/results}" "${args[@]}"
