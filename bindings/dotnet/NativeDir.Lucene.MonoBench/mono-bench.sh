#!/usr/bin/env bash
# Builds NativeDir.Lucene.MonoBench (a .NET Framework 4.7.2 application on the NativeDir.Lucene
# package of the built feed) and runs it on Mono over a search index that NativeDir.Lucene.Benchmarks
# writes on .NET (Lucene.NET 4.8 on Mono cannot read back the term dictionaries it writes: the
# README's "Mono"). Used by ctest dotnet_lucene_mono_bench_verify and bench/suites.d/lucene-mono.sh.
#   mono-bench.sh <build-dir> verify
#   mono-bench.sh <build-dir> run <rounds> <out.json> [--quick] [--search-rounds N]
# Exit 77 (after saying why) where mono is not installed.
set -euo pipefail
build=$(cd "$1" && pwd) mode=$2
shift 2
src=$(cd "$(dirname "$0")" && pwd)
command -v mono >/dev/null ||
  { echo "mono-bench: SKIPPED: mono is not installed (scripts/deps.sh installs mono-complete)"; exit 77; }
dn=$build/bindings/dotnet
feed=$dn/feed
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
net=$dn/artifacts/bin/NativeDir.Lucene.Benchmarks/release/NativeDir.Lucene.Benchmarks.dll
[ -f "$net" ] || { echo "mono-bench: $net is missing (cmake --build must build nativedir_lucene_bench)" >&2; exit 1; }
[ -f "$feed/NativeDir.Lucene.$version.nupkg" ] || { echo "mono-bench: the feed has no NativeDir.Lucene $version" >&2; exit 1; }
work=$dn/monobench
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
# our packages from the feed every time (the version does not change when they are rebuilt)
rm -rf "$work/packages/nativedir" "$work/packages/nativedir.lucene" "$work/out"
dotnet build "$src/NativeDir.Lucene.MonoBench.csproj" -c Release -p:Version="$version" \
  -p:NativeDirBuildDir="$build/" -p:ArtifactsPath="$work/artifacts" -p:RestorePackagesPath="$work/packages" \
  -p:RestoreAdditionalProjectSources="$feed" -nologo -v:q -o "$work/out"
quick=()
case "$mode" in
verify) quick=(--quick) ;;
run) rounds=$1 out=$2; shift 2; extra=("$@"); for a in "$@"; do [ "$a" = --quick ] && quick=(--quick); done ;;
*) echo "usage: mono-bench.sh <build-dir> verify|run <rounds> <out.json> [--quick] [--search-rounds N]" >&2; exit 2 ;;
esac
scratch=$work/scratch
rm -rf "$scratch" "$work/index"
dotnet "$net" --write-search-index "$work/index" ${quick[@]+"${quick[@]}"}
export DOTNET_ROOT=${DOTNET_ROOT:-$(dirname "$(readlink -f "$(command -v dotnet)")")}
if [ "$mode" = verify ]; then
  mono "$work/out/NativeDir.Lucene.MonoBench.exe" --verify --index "$work/index" --dir "$scratch" --out "$work/verify.json"
else
  mono "$work/out/NativeDir.Lucene.MonoBench.exe" --rounds "$rounds" --index "$work/index" --dir "$scratch" --out "$out" ${extra[@]+"${extra[@]}"}
fi
