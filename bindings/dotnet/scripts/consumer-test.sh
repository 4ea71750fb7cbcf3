#!/usr/bin/env bash
# Builds and runs a project that knows NativeDir only as a package: it is copied out of the
# source tree (no Directory.Build.props, no project reference can reach it), restored from a
# folder feed holding the freshly packed .nupkg into an empty package cache, built and run.
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

rm -rf "$work"
mkdir -p "$work/app"
cp "$src/NativeDir.Consumer.csproj" "$src/Program.cs" "$work/app/"
# the local feed beside the default sources; an empty cache so the fresh package is the one used
cat >"$work/app/nuget.config" <<CONFIG
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <add key="nativedir-local" value="$feed" />
  </packageSources>
</configuration>
CONFIG
export NUGET_PACKAGES="$work/packages"
cd "$work/app"
"$dotnet" build -c Release -p:NativeDirVersion="$version" -nologo -v:q -o "$work/out"
[ -f "$work/out/runtimes/linux-x64/native/libnativedir_dotnet.so" ] ||
  { echo "consumer-test: the package's native library did not reach the build output" >&2; exit 1; }
"$dotnet" "$work/out/NativeDir.Consumer.dll" "$work/data"
