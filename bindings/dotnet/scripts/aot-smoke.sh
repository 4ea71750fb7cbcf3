#!/usr/bin/env bash
# Publishes a smoke app (NativeDir.AotSmoke, NativeDir.Lucene.AotSmoke) with NativeAOT (trimming and AOT analysis warnings are errors) and
# runs the native executable: it proves that no marshalling is generated at run time.
# Usage: aot-smoke.sh <dotnet> <project> <work-dir> [msbuild properties...]
set -euo pipefail
dotnet=$1 project=$2 work=$3
shift 3
rm -rf "$work"
# its own artifacts folder: a ctest -j neighbour may be using the shared one
mkdir -p "$work"
rc=0
"$dotnet" publish "$project" -c Release -r linux-x64 -p:PublishAot=true "$@" \
  -p:ArtifactsPath="$work/artifacts" -nologo -v:q -o "$work/publish" 2>&1 | tee "$work/publish.log" || rc=$?
[ "$rc" -eq 0 ] || { echo "aot-smoke: the NativeAOT publish failed" >&2; exit 1; }
# a project that lets a dependency's trim/AOT warnings through (Lucene.NET's) still gets none
# from ours: a warning located in NativeDir or NativeDir.Lucene fails here
if grep -E "(warning|error) IL[0-9]{4}: NativeDir\." "$work/publish.log"; then
  echo "aot-smoke: trim/AOT analysis warnings in NativeDir or NativeDir.Lucene (above)" >&2
  exit 1
fi
exe="$work/publish/$(basename "$project" .csproj)"
[ -x "$exe" ] || { echo "aot-smoke: $exe was not produced" >&2; exit 1; }
head -c 4 "$exe" | grep -q "ELF" || { echo "aot-smoke: $exe is not a native executable" >&2; exit 1; }
[ ! -e "$work/publish/NativeDir.dll" ] || { echo "aot-smoke: managed NativeDir.dll in an AOT publish" >&2; exit 1; }
"$exe" "$work/data"
