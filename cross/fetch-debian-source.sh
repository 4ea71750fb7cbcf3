#!/usr/bin/env bash
# fetch-debian-source.sh STATE PACKAGE DEST
#
# Unpacks the Debian source package PACKAGE (as this machine's Debian release
# has it, with Debian's patches applied) into DEST. The cross-builds need
# zlib and cmocka built for other targets, and Debian ships their sources,
# not their Windows or arm64 builds.
#
# The machine's own apt configuration is not touched: apt runs with a private
# state directory STATE whose sources are this machine's "deb" entries turned
# into "deb-src" ones, so the same mirror and release are used.
set -euo pipefail
state=$1 pkg=$2 dest=$3
mkdir -p "$state"
exec 9>"$state/lock"
flock 9 # the Windows and arm64 builds may ask at the same time

mkdir -p "$state/sources.list.d" "$state/lists/partial" "$state/cache/archives/partial" \
         "$state/download"
if [ ! -e "$state/updated" ]; then
  : >"$state/sources.list"
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >>"$state/sources.list"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    sed 's/^Types:.*/Types: deb-src/' "$f" >"$state/sources.list.d/$(basename "$f")"
  done
fi
apt_opts=(-o "Dir::Etc::SourceList=$state/sources.list"
          -o "Dir::Etc::SourceParts=$state/sources.list.d"
          -o "Dir::State::Lists=$state/lists"
          -o "Dir::Cache=$state/cache"
          -o "APT::Sandbox::User=$(id -un)"
          -o "Debug::NoLocking=1")
if [ ! -e "$state/updated" ]; then
  # third-party repositories often publish no sources: their errors do not
  # matter as long as the Debian archive answers, which `source` checks below
  apt-get "${apt_opts[@]}" -qq update >"$state/update.log" 2>&1 || true
  touch "$state/updated"
fi
cd "$state/download"
# The newest source first; where the archive's index names a version that its pool no longer
# (or does not yet) serve, as a security suite's index can, the older versions in turn: any
# Debian release of the package builds the same library for these tests.
fetch_source() {
  apt-get "${apt_opts[@]}" -qq source --download-only "$pkg" >"$state/source-$pkg.log" 2>&1 && return 0
  local v
  for v in $(apt-cache "${apt_opts[@]}" showsrc "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | sort -Vru); do
    echo "fetch-debian-source: trying $pkg $v" >>"$state/source-$pkg.log"
    rm -f "${pkg}"_*
    apt-get "${apt_opts[@]}" -qq source --download-only "$pkg=$v" >>"$state/source-$pkg.log" 2>&1 && return 0
  done
  return 1
}
if ! ls "${pkg}"_*.dsc >/dev/null 2>&1; then
  if ! fetch_source; then
    cat "$state/update.log" "$state/source-$pkg.log" >&2
    echo "fetch-debian-source: cannot download the Debian source of '$pkg'" >&2
    rm -f "$state/updated" # try the index again next time
    exit 1
  fi
fi
dsc=$(ls "${pkg}"_*.dsc | sort -V | tail -n 1)
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
# the signature was checked by apt through the archive's signed index
dpkg-source --no-check -x "$dsc" "$dest" >/dev/null
echo "fetch-debian-source: $pkg from $dsc in $dest"
