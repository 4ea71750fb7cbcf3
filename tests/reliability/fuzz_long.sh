#!/usr/bin/env bash
# The long fuzz run, on demand (the test command runs the same target for 60 s).
#
#   tests/reliability/fuzz_long.sh [SECONDS] [BUILD_DIR] [-- extra libFuzzer flags]
#
# SECONDS defaults to 3600; BUILD_DIR to build/test (where scripts/test.sh
# builds). The corpus grows in BUILD_DIR/.../fuzz-long-work/corpus and is kept
# between runs; a finding is saved in .../fuzz-long-work/artifacts (replay it
# with `ND_FUZZ_TRACE=1 fuzz_api <file>` to see the calls). The result row goes
# to .../long-counts/fuzz_long.tsv, which the ctest report (rel_report) and
# report.py --extra pick up for docs/reliability.md.
# Several processes at once: add `-- -jobs=4 -workers=4`.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-3600}"
build="${2:-build/test}"
shift $(( $# > 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift
fuzzer=""
for candidate in "$build/tests/reliability/fuzz_api" "$build/reliability/fuzz_api"; do
  [ -x "$candidate" ] && fuzzer="$candidate" && break
done
if [ -z "$fuzzer" ]; then
  echo "fuzz_long: no fuzz_api under $build (build the project first, e.g. scripts/test.sh)" >&2
  exit 2
fi
here="$(dirname "$fuzzer")"
export ND_REL_COUNTS="$here/long-counts"
mkdir -p "$ND_REL_COUNTS"
started="$(date -u +%Y-%m-%dT%H:%MZ)"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
ND_FUZZ_LABEL="fuzz_long.sh run of $started: " "$py" tests/reliability/run_fuzz.py "$fuzzer" tests/reliability/corpus "$here/fuzz-long-work" \
  "$seconds" fuzz_long "$@"
echo "fuzz_long: started $started; row written to $ND_REL_COUNTS/fuzz_long.tsv"
