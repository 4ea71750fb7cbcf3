#!/usr/bin/env bash
# Publishes the smoke app with NativeAOT (trimming and AOT analysis warnings are errors) and
# runs the native executable: it proves that no marshalling is generated at run time.
# Usage: aot-smoke.sh <dotnet> <project> <work-dir> [msbuild properties...]
set -euo pipefail
dotnet=$1 project=$2 work=$3
shift 3
rm -rf "$work"
# its own artifacts folder: a ctest -j neighbour may be using the shared one
"$dotnet" publish "$project" -c Release -r linux-x64 -p:PublishAot=true "$@" \
  -p:ArtifactsPath="$work/artifacts" -nologo -v:q -o "$work/publish"
exe="$work/publish/NativeDir.AotSmoke"
[ -x "$exe" ] || { echo "aot-smoke: $exe was not produced" >&2; exit 1; }
head -c 4 "$exe" | grep -q "ELF" || { echo "aot-smoke: $exe is not a native executable" >&2; exit 1; }
[ ! -e "$work/publish/NativeDir.dll" ] || { echo "aot-smoke: managed NativeDir.dll in an AOT publish" >&2; exit 1; }
"$exe" "$work/data"
