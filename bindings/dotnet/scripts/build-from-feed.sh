#!/usr/bin/env bash
# Builds a project that knows the NativeDir packages only as packages, as a user would: its files
# are copied out of the source tree (no Directory.Build.props, no project reference can reach
# them) and restored from a folder feed, beside the default sources, into an empty package cache,
# so the freshly packed .nupkg files are the ones used. The build goes to <work>/out.
# Usage: build-from-feed.sh <dotnet> <feed-dir> <version> <work-dir> <project files...>
# The consumer tests run it: each checks its packages first and runs what was built after.
set -euo pipefail
dotnet=$1 feed=$2 version=$3 work=$4
shift 4
rm -rf "$work"
mkdir -p "$work/app"
cp "$@" "$work/app/"
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
