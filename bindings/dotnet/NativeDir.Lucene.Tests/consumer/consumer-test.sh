#!/usr/bin/env bash
# Builds and runs an application that knows NativeDir.Lucene only as a package
# (bindings/dotnet/scripts/build-from-feed.sh: copied out of the source tree, restored into an
# empty package cache from the folder feed that holds the fresh NativeDir and NativeDir.Lucene
# packages, and Lucene.NET from the configured sources), after checking the package's dependency.
# Usage: consumer-test.sh <dotnet> <feed-dir> <version> <work-dir>
set -euo pipefail
dotnet=$1 feed=$2 version=$3 work=$4
src=$(cd "$(dirname "$0")" && pwd)
for p in NativeDir NativeDir.Lucene; do
  [ -f "$feed/$p.$version.nupkg" ] || { echo "consumer-test: $feed/$p.$version.nupkg is missing (cmake --build must pack first)" >&2; exit 1; }
done
nuspec=$(/usr/bin/python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print(z.read("NativeDir.Lucene.nuspec").decode())' "$feed/NativeDir.Lucene.$version.nupkg")
grep -q "<dependency id=\"NativeDir\" version=\"$version\"" <<<"$nuspec" ||
  { echo "consumer-test: NativeDir.Lucene.$version.nupkg does not depend on NativeDir $version" >&2; echo "$nuspec" >&2; exit 1; }

bash "$src/../../scripts/build-from-feed.sh" "$dotnet" "$feed" "$version" "$work" \
  "$src/LuceneConsumer.csproj" "$src/Program.cs"
"$dotnet" "$work/out/LuceneConsumer.dll" "$work/index"
