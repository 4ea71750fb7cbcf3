#!/usr/bin/env bash
# A .NET Framework 4.8 console application and a netstandard2.0 library, as users write them, on
# the NativeDir.Lucene package from the built feed (copied out of the source tree, restored into
# an empty package cache): built once, then run on Mono (net48) and on .NET 10 (net10.0), each
# with the package's native library in place, removed, and damaged.
#
#   netfx-test.sh build <dotnet> <feed> <version> <work>
#   netfx-test.sh run mono|net10 <dotnet> <feed> <version> <work>
#
# In place: NativeFSDirectory.OpenOrFallback picks NativeFSDirectory, and the library indexes
# and finds 10 hits. Removed: it picks Lucene.NET's own FSDirectory.Open choice and the same
# search finds the same 10 hits, unchanged; new NativeFSDirectory throws
# NativeDirUnavailableException on the first call and the very same on the second, naming the
# RID, the file looked for, the loader's reason and the RIDs the package carries (which must be
# the package's runtimes/ folders). Damaged (a file that is no shared library; another RID's
# library where the package has one): the same exception, with the loader's own reason.
set -euo pipefail
mode=$1
shift
src=$(cd "$(dirname "$0")" && pwd)
fail() { echo "netfx-test: $*" >&2; exit 1; }
case "$mode" in
build)
  dotnet=$1 feed=$2 version=$3 work=$4
  for p in NativeDir NativeDir.Lucene; do
    [ -f "$feed/$p.$version.nupkg" ] || fail "$feed/$p.$version.nupkg is missing (cmake --build must pack first)"
  done
  rm -rf "$work"
  mkdir -p "$work/lib" "$work/app"
  cp "$src/NetFxSearch.csproj" "$src/Search.cs" "$work/lib/"
  cp "$src/NetFxApp.csproj" "$src/Program.cs" "$work/app/"
  cat >"$work/nuget.config" <<CONFIG
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <add key="nativedir-local" value="$feed" />
  </packageSources>
</configuration>
CONFIG
  export NUGET_PACKAGES="$work/packages"
  for f in net48 net10.0; do
    (cd "$work/app" && "$dotnet" build -c Release -f "$f" -p:NativeDirVersion="$version" -nologo -v:q -o "$work/out-$f")
  done
  # the library was built for netstandard2.0 and the .NET Framework app carries the package's
  # runtimes/ tree and Mono's dllmap (the package's .targets)
  for f in net48 net10.0; do
    grep -q ".NETStandard,Version=v2.0" "$work/out-$f/NetFxSearch.dll" ||
      fail "$work/out-$f/NetFxSearch.dll is not the netstandard2.0 library"
  done
  [ -f "$work/out-net48/NetFxApp.exe" ] || fail "the net48 application was not built"
  [ -f "$work/out-net48/runtimes/linux-x64/native/libnativedir_dotnet.so" ] || fail "the net48 output has no runtimes/linux-x64/native/ (the package's .targets)"
  [ -f "$work/out-net48/NativeDir.dll.config" ] || fail "the net48 output has no NativeDir.dll.config (Mono's dllmap)"
  # the RIDs the package carries, from its own file list
  /usr/bin/python3 -c '
import sys, zipfile
rids = sorted({n.split("/")[1] for n in zipfile.ZipFile(sys.argv[1]).namelist() if n.startswith("runtimes/") and "/native/" in n})
print(",".join(rids))' "$feed/NativeDir.$version.nupkg" >"$work/package-rids"
  echo "netfx-test: built; the package carries $(cat "$work/package-rids")"
  ;;
run)
  runtime=$1 dotnet=$2 feed=$3 version=$4 work=$5
  case "$runtime" in
  mono)
    command -v mono >/dev/null ||
      { echo "netfx-test: SKIPPED: mono is not installed (scripts/deps.sh installs mono-complete): the net48 application is not run"; exit 77; }
    out=$work/out-net48
    native=$out/runtimes/linux-x64/native/libnativedir_dotnet.so
    run() { mono "$out/NetFxApp.exe" "$@"; } ;;
  net10)
    out=$work/out-net10.0
    native=$out/runtimes/linux-x64/native/libnativedir_dotnet.so
    run() { "$dotnet" "$out/NetFxApp.dll" "$@"; } ;;
  *) fail "unknown runtime $runtime" ;;
  esac
  [ -f "$native" ] || fail "$native is missing from the build"
  rids=$(cat "$work/package-rids")
  scratch=$work/run-$runtime
  rm -rf "$scratch"
  mkdir -p "$scratch"
  cp "$native" "$scratch/good.so"
  restore() { cp "$scratch/good.so" "$native"; }
  trap restore EXIT

  # 1. in place
  log=$scratch/present.log
  run fallback "$scratch/index" | tee "$log"
  grep -qx "chose: NativeFSDirectory" "$log" || fail "with the library in place OpenOrFallback did not choose NativeFSDirectory"
  grep -qx "hits: 10" "$log" || fail "with the library in place the search did not find 10 hits"

  # 2. removed: the same application runs unchanged on Lucene.NET's own directory
  rm "$native"
  log=$scratch/removed.log
  run fallback "$scratch/index" | tee "$log"
  grep -q "^chose: \(MMap\|NIOFS\|SimpleFS\)Directory$" "$log" || fail "without the library OpenOrFallback did not choose a built-in directory"
  grep -q "^event: fell back to " "$log" || fail "without the library no FellBack event was raised"
  grep -qx "hits: 10" "$log" || fail "without the library the search on the built-in directory did not find 10 hits"
  grep -q "^reason: .*linux-x64.*carries native libraries for: " "$log" || fail "the fallback's reason does not name the RID and the package's RIDs"
  check_unavailable() { # <log> <what the reason must match>
    local log=$1 why=$2 a
    for a in 1 2; do
      grep -q "^attempt $a: NativeDir.NativeDirUnavailableException: " "$log" ||
        fail "attempt $a did not throw NativeDirUnavailableException ($(grep "^attempt $a:" "$log" | head -1))"
      grep -qx "attempt $a rid: linux-x64" "$log" || fail "attempt $a does not name the RID linux-x64"
      grep -qx "attempt $a packaged: $rids" "$log" || fail "attempt $a's packaged RIDs are not the package's ($rids)"
      grep -q "^attempt $a searched: .*$native" "$log" || fail "attempt $a does not name $native among the files looked for"
      grep -q "^attempt $a reason: .*$why" "$log" || fail "attempt $a's loader reason does not match '$why'"
    done
    # the second call gets the very same answer: nothing is poisoned by the first
    [ "$(grep "^attempt 1: " "$log" | sed 's/^attempt 1//')" = "$(grep "^attempt 2: " "$log" | sed 's/^attempt 2//')" ] ||
      fail "the second attempt's exception differs from the first's"
  }
  log=$scratch/missing.log
  run strict "$scratch/index" | tee "$log"
  check_unavailable "$log" "probing"

  # 3. damaged: a file that is no shared library
  head -c 100 /dev/urandom >"$native"
  log=$scratch/garbage.log
  run strict "$scratch/index" | tee "$log"
  check_unavailable "$log" "$native: .*\(too short\|invalid ELF header\|not a dynamic\)"

  # 4. the wrong architecture: the package's library for another RID in this RID's place
  other=""
  for r in linux-arm64 win-x64; do
    case ",$rids," in *",$r,"*) other=$r; break ;; esac
  done
  if [ -n "$other" ]; then
    case "$other" in win-*) file=nativedir_dotnet.dll ;; *) file=libnativedir_dotnet.so ;; esac
    unzip -p "$feed/NativeDir.$version.nupkg" "runtimes/$other/native/$file" >"$native"
    log=$scratch/wrong-arch.log
    run strict "$scratch/index" | tee "$log"
    check_unavailable "$log" "$native: "
    echo "netfx-test: $runtime: the $other library in linux-x64's place is refused with the loader's reason"
  else
    echo "netfx-test: $runtime: NOT COVERED: the package carries no other RID's library to put in linux-x64's place"
  fi
  restore
  echo "netfx-test: $runtime: present, removed, damaged: all as documented"
  ;;
*)
  fail "usage: netfx-test.sh build|run ..."
  ;;
esac
