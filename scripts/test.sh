#!/usr/bin/env bash
# Every test of every language: installs what is missing, builds everything in
# build/test, and runs the whole suite through ctest (C, ASan+UBSan, TSan,
# .NET, Java, Python, Windows under Wine, arm64 under qemu).
# A part that fails to build does not stop the rest: ctest still runs and
# reports its tests as failed, and the command fails.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh || exit 1
cmake -S . -B build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DND_WERROR=ON "$@" || exit 1
built=0
cmake --build build/test -j"$(nproc)" -- -k || built=$?
ctest --test-dir build/test --output-on-failure -j"$(nproc)" --timeout 1500
tested=$?
if [ "$built" -ne 0 ]; then
  echo "test.sh: the build failed (see above); its tests count as failed" >&2
  exit 1
fi
exit "$tested"
