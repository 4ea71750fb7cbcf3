#!/usr/bin/env bash
# Every test of every language: installs what is missing, builds everything in
# build/test, and runs the whole suite through ctest (C, ASan+UBSan, TSan,
# .NET, Java, Python, Windows under Wine, arm64 under qemu).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build build/test -j"$(nproc)"
ctest --test-dir build/test --output-on-failure -j"$(nproc)" --timeout 1500
