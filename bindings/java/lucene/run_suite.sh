#!/usr/bin/env bash
# run_suite.sh WORK TMPROOT COMMAND [ARG...]
# Runs one of Lucene's suites from a fresh WORK folder, with its temporary folders (Lucene's
# createTempDir, java.io.tmpdir) in a new folder under TMPROOT that is removed afterwards.
# COMMAND's "@TMP@" arguments become -Djava.io.tmpdir=<that folder>.
set -uo pipefail
work=$1 root=$2
shift 2
rm -rf "$work" && mkdir -p "$work" "$root" || exit 1
tmp=$(mktemp -d "$root/nd-lucene-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
args=()
for a in "$@"; do
  [ "$a" = "@TMP@" ] && a="-Djava.io.tmpdir=$tmp"
  args+=("$a")
done
cd "$work" && "${args[@]}"
