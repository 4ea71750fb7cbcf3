#!/usr/bin/env bash
# Builds and runs a project that knows NativeDir only as a package (scripts/build-from-feed.sh:
# copied out of the source tree, restored from the folder feed holding the fresh .nupkg into an
# empty package cache), after checking the package's layout.
# Usage: consumer-test.sh <dotnet> <consumer-src-dir> <feed-dir> <version> <work-dir>
set -euo pipefail
dotnet=$1 src=$2 feed=$3 version=$4 work=$5
nupkg="$feed/NativeDir.$version.nupkg"
[ -f "$nupkg" ] || { echo "consumer-test: $nupkg is missing (cmake --build must pack first)" >&2; exit 1; }

# the package layout itself
listing=$(/usr/bin/python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$nupkg")
for entry in runtimes/linux-x64/native/libnativedir_dotnet.so lib/net8.0/NativeDir.dll lib/net10.0/NativeDir.dll; do
  grep -qx "$entry" <<<"$listing" || { echo "consumer-test: $entry missing from $nupkg" >&2; echo "$listing" >&2; exit 1; }
done
echo "consumer-test: $nupkg holds $(grep -c . <<<"$listing") entries, the native library among them"

bash "$(dirname "$0")/build-from-feed.sh" "$dotnet" "$feed" "$version" "$work" \
  "$src/NativeDir.Consumer.csproj" "$src/Program.cs"
[ -f "$work/out/runtimes/linux-x64/native/libnativedir_dotnet.so" ] ||
  { echo "consumer-test: the package's native library did not reach the build output" >&2; exit 1; }
"$dotnet" "$work/out/NativeDir.Consumer.dll" "$work/data"
