#!/usr/bin/env bash
# The .NET suites where users run the packages: each test project (xunit v3, a self-hosting
# executable) is published as an application would be, RID-specific and self-contained, against
# the NativeDir packages of the built feed (never the project references), then run natively,
# under Wine (win-x64) or under qemu-user (linux-arm64).
#
#   platform-tests.sh publish <dotnet> <feed> <version> <rid> <work> <project.csproj>...
#       publishes each project to <work>/<rid>/<name>/. A publish that puts two files of one name
#       into one folder (NETSDK1152) fails here, as it would for a user. Two <rid>s are builds,
#       not RIDs: "mono" builds the suites as a .NET Framework 4.7.2 application (AnyCPU, no RID,
#       the packages' net462 assets, the native libraries laid out by the package's .targets) for
#       Mono; "netstandard2.0" publishes them for linux-x64 against the packages' netstandard2.0
#       assemblies, on Lucene.NET 4.8.0-beta00018 (the other end of NativeDir.Lucene's range).
#   platform-tests.sh run <rid> <work> <name> <wineprefix> <dotnet-root> [runner args...]
#       runs <work>/<rid>/<name>/<name>[.exe], with DOTNET_ROOT naming the SDK whose reference
#       pack the Lucene end-to-end tests index (a self-contained app has no SDK of its own; Wine
#       sees the host's files on drive Z:). Exit 77 (ctest SKIP_RETURN_CODE) when the
#       emulator the RID needs is not installed, after saying so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=$1
shift
case "$mode" in
publish)
  dotnet=$1 feed=$2 version=$3 rid=$4 work=$5
  shift 5
  for p in NativeDir NativeDir.Lucene; do
    [ -f "$feed/$p.$version.nupkg" ] ||
      { echo "platform-tests: $feed/$p.$version.nupkg is missing (cmake --build must pack first)" >&2; exit 1; }
  done
  # Third-party packages stay cached between runs; ours are taken from the feed every time (the
  # version does not change when the package is rebuilt).
  cache="$work/packages"
  mkdir -p "$cache"
  rm -rf "$cache/nativedir" "$cache/nativedir.lucene"
  for project in "$@"; do
    name=$(basename "$project" .csproj)
    out="$work/$rid/$name"
    rm -rf "$out"
    case "$rid" in
    mono) how=(-p:NativeDirTestFramework=net472) ;;
    netstandard2.0) how=(-r linux-x64 --self-contained -p:NativeDirAsset=netstandard2.0 -p:LuceneNetVersion=4.8.0-beta00018) ;;
    *) how=(-r "$rid" --self-contained) ;;
    esac
    echo "platform-tests: dotnet publish $name ${how[*]} (packages from $feed)"
    "$dotnet" publish "$project" -c Release "${how[@]}" \
      -p:NativeDirFromFeed=true -p:Version="$version" \
      -p:ArtifactsPath="$work/$rid/artifacts" -p:RestorePackagesPath="$cache" \
      -p:RestoreAdditionalProjectSources="$feed" -nologo -v:q -o "$out"
    # the package's glue library, flattened beside the assemblies as the SDK does for a RID; for
    # .NET Framework the package's .targets keeps runtimes/<rid>/native/ and adds the dllmap
    case "$rid" in
    win-*) glue=nativedir_dotnet.dll ;;
    osx-*) glue=libnativedir_dotnet.dylib ;;
    mono) glue=runtimes/linux-x64/native/libnativedir_dotnet.so
      [ -f "$out/NativeDir.dll.config" ] || { echo "platform-tests: $out/NativeDir.dll.config (Mono's dllmap) is missing" >&2; exit 1; } ;;
    *) glue=libnativedir_dotnet.so ;;
    esac
    [ -f "$out/$glue" ] || { echo "platform-tests: $out/$glue is missing from the publish" >&2; exit 1; }
    [ -f "$out/NativeDir.dll" ] || { echo "platform-tests: $out/NativeDir.dll is missing from the publish" >&2; exit 1; }
    # the managed assembly must be the managed one (a forced colliding publish swaps them): only
    # a .NET assembly holds the CLI metadata root, whose signature is "BSJB"
    grep -q BSJB "$out/NativeDir.dll" && ! grep -q BSJB "$out/$glue" ||
      { echo "platform-tests: $out/NativeDir.dll is not the managed assembly" >&2; exit 1; }
    # and the glue is the package's own for this RID, not a fallback RID's (on Alpine, .NET would
    # otherwise take linux-x64's, built against glibc)
    # ("mono" and "netstandard2.0" are builds for linux-x64: theirs is linux-x64's)
    case "$rid" in
    mono) entry=$glue ;;
    netstandard2.0) entry=runtimes/linux-x64/native/$glue ;;
    *) entry=runtimes/$rid/native/$glue ;;
    esac
    /usr/bin/python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
      "$feed/NativeDir.$version.nupkg" "$entry" | cmp -s - "$out/$glue" ||
      { echo "platform-tests: $out/$glue is not the package's $entry" >&2; exit 1; }
  done
  ;;
run)
  rid=$1 work=$2 name=$3 prefix=$4 root=$5
  shift 5
  # absolute: qemu-user answers /proc/self/exe (Environment.ProcessPath, which the lock tests
  # start their child from) by resolving the path it was given against the CURRENT directory,
  # and xunit moves that to the test assembly's folder
  dir=$(cd "$work/$rid/$name" && pwd)
  args=(-noColor -noLogo "$@")
  case "$rid" in
  linux-x64 | netstandard2.0)
    export DOTNET_ROOT=$root
    launch=("$dir/$name")
    ;;
  mono)
    command -v mono >/dev/null ||
      { echo "platform-tests: SKIPPED: mono is not installed (scripts/deps.sh installs mono-complete): $name is not run on Mono"; exit 77; }
    # the SDK whose reference pack the Lucene end-to-end tests index
    export DOTNET_ROOT=$root
    launch=(mono "$dir/$name.exe")
    ;;
  win-x64)
    command -v wine64 >/dev/null || [ -x /usr/lib/wine/wine64 ] ||
      { echo "platform-tests: SKIPPED: wine64 is not installed (scripts/deps.sh installs it): $name is not run on $rid"; exit 77; }
    export ND_TEST_EMULATOR=wine64
    # Wine's loader hands IL-only images (System.Runtime.dll...) to its mscoree: without it .NET
    # dies with "Module not found" (and Wine still exits 0, hence the summary check below)
    export WINEDLLOVERRIDES="mshtml="
    # Wine 8 mishandles the runtime's W^X double mapping of JIT code: "Internal CLR error
    # (0x80131506)" in a finalizer within seconds. Off, the suite runs (see README's table).
    export DOTNET_EnableWriteXorExecute=0
    winroot="Z:${root//\//\\}"
    export DOTNET_ROOT=$winroot
    launch=(bash "$here/../../../cross/wine-run.sh" "$prefix" - "$dir/$name.exe")
    ;;
  linux-arm64)
    command -v qemu-aarch64 >/dev/null ||
      { echo "platform-tests: SKIPPED: qemu-aarch64 is not installed (scripts/deps.sh installs qemu-user): $name is not run on $rid"; exit 77; }
    # the target's C and C++ runtimes and OpenSSL (xunit hashes with it) are Debian's arm64
    # packages, installed through multiarch by scripts/deps.sh: one consistent set, found by the
    # arm64 loader at its own paths (mixing in the cross toolchain's libc through -L hangs .NET)
    [ -e /lib/ld-linux-aarch64.so.1 ] && [ -e /usr/lib/aarch64-linux-gnu/libssl.so.3 ] ||
      { echo "platform-tests: SKIPPED: Debian's arm64 libc6, libstdc++6 and libssl3 are not installed (scripts/deps.sh): $name is not run on $rid"; exit 77; }
    export ND_TEST_EMULATOR=qemu-aarch64 DOTNET_ROOT=$root
    # qemu-user runs guest code from its own translations and drops one when the guest writes to
    # the page it came from. With W^X on, the runtime writes JIT code and stubs through a SECOND
    # mapping of the same memory, a write qemu never sees: it goes on running the stale
    # translation (seen: "Illegal instruction" in a reflection invoke stub, SIGSEGV in
    # OutputAndLockTests, at a random test of a full run). Off, code is written where it runs and
    # qemu notices. The GC and tiering knobs only move the timing; this removes the cause.
    export DOTNET_EnableWriteXorExecute=0
    # no arm64 ICU here: .NET's invariant globalization mode (the tests compare ordinally)
    export DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1
    # a child process of the tests runs under the same emulator (qemu-user cannot exec arm64 code
    # without binfmt_misc, which a container does not have)
    export ND_TEST_CHILD_LAUNCHER=qemu-aarch64
    launch=(qemu-aarch64 "$dir/$name")
    ;;
  linux-musl-*)
    # The .NET runtime for musl (libcoreclr.so, the app host) needs libstdc++.so.6 and
    # libgcc_s.so.1 built against musl, found by musl's loader; Debian builds them for glibc only
    # (glibc's cannot stand in: they need glibc-only symbols)
    arch=${rid#linux-musl-}; [ "$arch" = x64 ] && arch=x86_64; [ "$arch" = arm64 ] && arch=aarch64
    paths=$(tr ':\n' '  ' <"/etc/ld-musl-$arch.path" 2>/dev/null || true)
    missing=""
    for lib in $(readelf -d "$dir/libcoreclr.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      case "$lib" in libc.musl-*|ld-musl-*|libc.so) continue ;; esac
      found=""
      for d in $paths /lib /usr/local/lib /usr/lib; do [ -e "$d/$lib" ] && found=$d; done
      [ -n "$found" ] || missing+=" $lib"
    done
    if [ -n "$missing" ]; then
      echo "platform-tests: SKIPPED: the .NET runtime for $rid (libcoreclr.so) needs musl builds of$missing, which musl's loader finds nowhere here (${paths:-no /etc/ld-musl-$arch.path} /lib /usr/local/lib /usr/lib): $name is not run on $rid"
      exit 77
    fi
    export DOTNET_ROOT=$root DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1
    launch=("$dir/$name")
    ;;
  *)
    echo "platform-tests: no way to run $rid here" >&2
    exit 1
    ;;
  esac
  # The runner's exit code alone is not enough: Wine reports 0 for a process that died of an
  # unhandled exception. The run counts only with xunit's summary of this assembly, which must
  # show tests run and none failed.
  # A hang (a runtime stuck under an emulator) must end here, well before ctest's TIMEOUT, and
  # take its processes with it: timeout kills the runner (wine-run.sh execs Wine), and Wine's
  # server is told to end whatever is left in the prefix.
  # (qemu-user emulates every instruction, the JIT's own included: the Lucene suite takes minutes)
  case "$rid" in linux-arm64) limit=${ND_PLATFORM_RUN_LIMIT:-1000} ;; *) limit=${ND_PLATFORM_RUN_LIMIT:-480} ;; esac
  log="$work/$rid/$name.log"
  rc=0
  timeout -k 10 "$limit" "${launch[@]}" "${args[@]}" 2>&1 | tee "$log" || rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "platform-tests: $name on $rid did not finish within $limit s (ND_PLATFORM_RUN_LIMIT): killed" >&2
    if [ "$rid" = win-x64 ]; then
      WINEPREFIX=$prefix "$(command -v wineserver || echo /usr/lib/wine/wineserver64)" -k 2>/dev/null || true
    fi
    exit 1
  fi
  summary=$(tr -d '\r' <"$log" | grep -E "^ +$name +Total: [0-9]+" | tail -1)
  if [ -z "$summary" ]; then
    echo "platform-tests: $name on $rid printed no test summary (exit $rc): it did not run" >&2
    exit 1
  fi
  echo "platform-tests: $rid:$summary"
  [[ $summary =~ Total:\ ([0-9]+),\ Errors:\ ([0-9]+),\ Failed:\ ([0-9]+),\ Skipped:\ ([0-9]+) ]] || exit 1
  total=${BASH_REMATCH[1]} errors=${BASH_REMATCH[2]} failed=${BASH_REMATCH[3]} skipped=${BASH_REMATCH[4]}
  if [ "$rc" -ne 0 ] || [ "$errors" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$total" -eq "$skipped" ]; then
    echo "platform-tests: $name on $rid failed (exit $rc, $failed failed, $errors errors, $skipped of $total skipped)" >&2
    exit 1
  fi
  ;;
*)
  echo "usage: platform-tests.sh publish|run ..." >&2
  exit 2
  ;;
esac
