#!/usr/bin/env bash
# WindowsDirectory's file table (MiscDirs.cs) on Windows, under Wine: publishes
# NativeDir.Lucene.Benchmarks for win-x64 (self-contained, with the cross-built win-x64 glue library
# beside it) and runs --misc-dirs there. Used by bench/suites.d/lucene.sh.
#   misc-wine.sh <build-dir> <rounds> <out.json> [--quick]
# The glue is $ND_WIN_GLUE if set, else the build tree's cross-build of win64 (made here with
# cross/sub-build.cmake, the library only, when missing). Exit 77 (after saying why) where wine64
# or the MinGW cross compiler is not installed.
set -euo pipefail
build=$(cd "$1" && pwd) rounds=$2 out=$3
shift 3
src=$(cd "$(dirname "$0")/../../.." && pwd)
command -v wine64 >/dev/null || [ -x /usr/lib/wine/wine64 ] ||
  { echo "misc-wine: SKIPPED: wine64 is not installed (scripts/deps.sh installs it): no WindowsDirectory rows"; exit 77; }
glue=${ND_WIN_GLUE:-$build/runtimes/win-x64/native/nativedir_dotnet.dll}
if [ -z "${ND_WIN_GLUE:-}" ]; then
  command -v x86_64-w64-mingw32-gcc >/dev/null ||
    { echo "misc-wine: SKIPPED: x86_64-w64-mingw32-gcc is not installed (scripts/deps.sh): no WindowsDirectory rows"; exit 77; }
  echo "misc-wine: cross-building the win-x64 library ($build/cross/win64)"
  cmake -DPLATFORM=win64 -DKIND=windows -DSOURCE="$src" -DWORK="$build/cross/win64" \
    -DTOOLCHAIN="$src/cross/toolchain-x86_64-w64-mingw32.cmake" -DCC=x86_64-w64-mingw32-gcc \
    -DTRIPLET=x86_64-w64-mingw32 -DEMULATOR=wine64 -DURING=OFF -DZIG_DIR="$build/cross/zig" \
    -DRUNTIME="$build/runtimes/win-x64/native" -DOUT="$build/cross/win64/tests.cmake" \
    -DJOBS="$(nproc)" -DC_SUITE=OFF -DWERROR=OFF -P "$src/cross/sub-build.cmake"
fi
[ -f "$glue" ] || { echo "misc-wine: $glue is missing (see $build/cross/win64/build.log)" >&2; exit 1; }
work=$build/bindings/dotnet/misc-wine
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
rm -rf "$work/out"
dotnet publish "$src/bindings/dotnet/NativeDir.Lucene.Benchmarks/NativeDir.Lucene.Benchmarks.csproj" -c Release \
  -r win-x64 --self-contained -p:Version="$version" -p:NativeDirFromCMake=true -p:NativeDirBuildDir="$build/" \
  -p:NativeDirNativeLib="$build/bindings/dotnet/libnativedir_dotnet.so" -p:NativeDirWinGlue="$glue" \
  -p:ArtifactsPath="$work/artifacts" -nologo -v:q -o "$work/out"
win() { local p=$1; echo "Z:${p//\//\\}"; }
rm -rf "$work/scratch"
mkdir -p "$work/scratch" "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
# as the Wine test runs (scripts/platform-tests.sh): the runtime's IL images through Wine's
# mscoree, W^X off (Wine 8 mishandles the runtime's double mapping of JIT code)
WINEDLLOVERRIDES="mshtml=" DOTNET_EnableWriteXorExecute=0 \
  bash "$src/cross/wine-run.sh" "$build/cross/win64/wineprefix" - "$work/out/NativeDir.Lucene.Benchmarks.exe" \
  --misc-dirs "$rounds" --dir "$(win "$work/scratch")" --out "$(win "$out")" "$@"
[ -s "$out" ] || { echo "misc-wine: the run wrote no $out (Wine exits 0 for a process that died)" >&2; exit 1; }
