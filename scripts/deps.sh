#!/usr/bin/env bash
# Installs, with apt-get, whatever the build, the tests and the benchmark need
# and this Debian machine lacks. Safe to run again: it installs only what is
# missing. The .NET SDK is not a Debian package: it must already be on PATH.
#
#   scripts/deps.sh           everything (scripts/test.sh)
#   scripts/deps.sh --bench   only what scripts/bench.sh builds and runs: no arm64 or musl
#                             cross-builds, sanitizers or checkers (on a new machine, about 60 s
#                             of installs instead of 100 s)
#   scripts/deps.sh --list [--bench]   prints the packages, one a line, and installs nothing
set -euo pipefail

bench_only=0 list=0
for a in "$@"; do
  case "$a" in
    --bench) bench_only=1 ;;
    --list) list=1 ;;
    *) echo "deps: unknown option $a (--bench, --list)" >&2; exit 2 ;;
  esac
done

# the library, its bindings and the benchmark
bench_packages=(
  build-essential cmake pkg-config zlib1g-dev libdeflate-dev liburing-dev   # the library
  swig                                                        # .NET and Java glue
  python3-dev python3-cffi python3-pytest python3-pip python3-setuptools # Python binding (its build checks pytest too)
  python3-aiofiles                                            # Python benchmark: asyncio file reads to compare with
  default-jdk-headless junit4                                 # Java binding (its tests jar is built with it)
  liblucene8-java                                             # Lucene 8.8.1 (jars *-8.7.0.jar): nativedir-lucene.jar and its benchmark
  gnuplot-nox fio                                             # benchmark chart, device limits
  mono-complete                                               # the .NET Framework builds' tests and benchmark, on Mono
  gcc-mingw-w64-x86-64 wine64                                 # Windows cross-build: WindowsDirectory's rows under Wine
)
# the tests on top of that
packages=(
  "${bench_packages[@]}"
  libcmocka-dev strace clang lld libclang-rt-14-dev           # C tests, sanitizers, fuzzing, NativeAOT link
  libfuse3-dev fuse3                                          # C tests in FUSE mounts with 1-4 MiB blocks
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user       # Linux arm64 cross-build, tests under qemu
  musl-tools                                                  # Linux musl x64 (Alpine) cross-build, tests natively
  gcc-mingw-w64-i686                                          # Windows x86 cross-build
  clang-format                                                # the C format check (ctest c_format)
  llvm                                                        # llvm-nm/objdump/strip: macOS and Windows arm64 checks
  libcarrotsearch-randomizedtesting-java                      # Lucene's test framework runs on it (nativedir-lucene's suites)
)

# The .NET tests on linux-arm64 (qemu-user) run on Debian's arm64 C and C++ runtimes and OpenSSL
# (xunit hashes with it), through multiarch: the arm64 loader finds them at its own paths. The Linux
# musl arm64 cross-build takes Debian's arm64 musl the same way (its aarch64-linux-musl-gcc, and
# the loader its tests run on under qemu-user).
arm64_packages=(libc6:arm64 libstdc++6:arm64 libssl3:arm64 musl-dev:arm64)

if ((bench_only)); then
  packages=("${bench_packages[@]}")
  arm64_packages=()
fi
if ((list)); then
  printf '%s\n' "${packages[@]}" "${arm64_packages[@]}"
  exit 0
fi

missing=()
if ((${#arm64_packages[@]})) && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  if [ "$(id -u)" -eq 0 ]; then dpkg --add-architecture arm64; else sudo dpkg --add-architecture arm64; fi
fi
for p in "${packages[@]}" "${arm64_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# npm fetches Zig (cross/fetch-zig.sh), the compiler of the macOS and Windows arm64 builds; a
# Node.js that brings its own npm is kept
if ((!bench_only)) && ! command -v npm >/dev/null 2>&1; then
  echo "deps: installing npm"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends npm >/dev/null
fi
# Lucene's own core tests (run on nativedir-lucene.jar's directory) are compiled from Debian's
# source of Lucene 8: the upstream tarball alone (apt-get source --tar-only; the archive lacks the
# Debian patch tarball of that version), kept in build/deps. apt-get source needs deb-src lines:
# where none are configured, the same archive's are added for the release's main component.
if ((!bench_only)); then
  deps_dir="$(cd "$(dirname "$0")/.." && pwd)/build/deps"
  if ! compgen -G "$deps_dir/lucene8_*.orig.tar.*" >/dev/null; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    if [ -z "$(apt-get indextargets 'Identifier: Sources')" ]; then
      codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
      uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' 'Identifier: Packages' |
            awk -v r="$codename" '$2 == r && $3 == "main" { print $1; exit }')
      [ -n "$uri" ] || { echo "deps: no archive of $codename main to take Lucene's source from" >&2; exit 1; }
      keyring=/usr/share/keyrings/debian-archive-keyring.gpg
      echo "deps: adding deb-src lines for $uri $codename main"
      printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\n%s' "$uri" "$codename" \
             "$([ -f "$keyring" ] && echo "Signed-By: $keyring")" |
        $sudo tee /etc/apt/sources.list.d/nativedir-deb-src.sources >/dev/null
    fi
    $sudo apt-get update -qq
    mkdir -p "$deps_dir"
    echo "deps: fetching Lucene 8's source (apt-get source --tar-only lucene8)"
    (cd "$deps_dir" && apt-get source -qq --tar-only lucene8 2>&1 | grep -v "unsandboxed" || true)
    compgen -G "$deps_dir/lucene8_*.orig.tar.*" >/dev/null ||
      { echo "deps: apt-get source --tar-only lucene8 fetched nothing" >&2; exit 1; }
  fi
fi
if ! command -v dotnet >/dev/null 2>&1; then
  echo "deps: the .NET SDK (dotnet) is not on PATH; the .NET suites will be reported as failed" >&2
fi
