#!/usr/bin/env bash
# Lucene.NET on an index larger than memory (bindings/dotnet/NativeDir.Lucene.Benchmarks,
# LargerThanMemory.cs): NativeFSDirectory beside Lucene.NET's MMap, NIOFS and SimpleFS directories
# searching a >= 1 GiB index with several threads while the process's memory cgroup holds 100%,
# 50%, 25%, 10% and 5% of the index as page cache (three rounds, the directories' order rotating),
# searching at 25% and 10% while another thread indexes with merges running, and NativeFSDirectory
# searching while the limit drops from 100% to 10% and rises back (how long it takes to settle).
# All of it twice: with the index on the scratch disk as it is, and on a block device of the
# benchmark's own with a read-ahead of 128 KiB, what most NVMe and SATA disks have (a loop device
# with direct I/O over a file on the scratch disk, formatted ext4, removed afterwards; where it
# cannot be made, root and losetup being needed, that half is skipped with the reason). A mapped
# file's page fault reads around the page by the device's read-ahead, so the two devices show
# what the design does, not what one disk's setting does. The cgroup is nd_memlimit's
# (bench/nd_memlimit.c); where no memory cgroup can be made the rows are skipped with the reason.
# The index is built once and kept in $ND_BUILD_DIR/ltm-cache, named by its parameters (a fresh
# tree builds it within the run). Writes $ND_BENCH_OUT/lucene_ltm.json (suite "lucene").
set -euo pipefail
build="${ND_BUILD_DIR:-build/bench}"
src="${ND_SOURCE_DIR:-.}"
out="${ND_BENCH_OUT:-$build/results}"
dll="$build/bindings/dotnet/artifacts/bin/NativeDir.Lucene.Benchmarks/release/NativeDir.Lucene.Benchmarks.dll"
tool="$build/bench/nd_memlimit"
[ -f "$dll" ] || cmake --build "$build" --target nativedir_lucene_bench
[ -x "$tool" ] || cmake --build "$build" --target nd_memlimit
tool="$(cd "$(dirname "$tool")" && pwd)/nd_memlimit"
cache="$(cd "$build" && pwd)/ltm-cache"
scratch="$(cd "$(dirname "${ND_BENCH_DIR:-$build}/x")" && pwd)/bench-scratch-lucene-ltm"
rm -rf "$scratch"
mkdir -p "$scratch" "$out"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 ND_MEMLIMIT="$tool"
args=()
# the quick run's small index has a cache of its own: one shape is kept per cache, and a quick
# run must not delete the full run's index
[ "${ND_BENCH_QUICK:-0}" = 1 ] && args=(--quick) && cache="$cache-quick"
results="$scratch/ltm.json"
convert() {
  exec /usr/bin/python3 "$src/bindings/dotnet/NativeDir.Lucene.Benchmarks/ltm_to_shared_json.py" \
    "$results" "$out/lucene_ltm.json" "$(uname -srm)"
}

# "name, read-ahead N KiB" of the block device a path is on
device_of() {
  local dev name ra
  dev=$(findmnt -no SOURCE -T "$1" 2>/dev/null || true)
  name=$(basename "${dev:-unknown}")
  ra=$(cat "/sys/class/block/$name/queue/read_ahead_kb" 2>/dev/null ||
       cat "/sys/class/block/$name/../queue/read_ahead_kb" 2>/dev/null || echo "?")
  echo "$name, read-ahead $ra KiB"
}

if ! why=$("$tool" check 2>&1); then
  echo "lucene_ltm: SKIPPED, NO RESULTS: $why" >&2
  /usr/bin/python3 -c 'import json, sys; json.dump({"skipped": sys.argv[2]}, open(sys.argv[1], "w"))' \
    "$scratch/ltm.json" "$why"
  convert
fi
echo "-- the index (kept in $cache, keyed by its parameters)"
dotnet "$dll" --ltm-cache "$cache" --ltm-build --dir "$scratch" ${args[@]+"${args[@]}"}
device=$(device_of "$cache")
echo "-- search at memory limits, search while merging (inside nd_memlimit's cgroup), on $device"
"$tool" run --stat "$scratch/cgroup.json" -- \
  dotnet "$dll" --ltm-cache "$cache" --out "$scratch/ltm.json" --dir "$scratch" \
  --ltm-device "$device" ${args[@]+"${args[@]}"}

# the same on a device of 128 KiB read-ahead
loop_img="$scratch/loop.img" loop_mnt="$scratch/loop-mnt" loop_dev=""
cleanup() {
  if [ -n "$loop_dev" ]; then
    umount "$loop_mnt" 2>/dev/null || true
    losetup -d "$loop_dev" 2>/dev/null || true
  fi
  rm -f "$loop_img"
}
trap cleanup EXIT
index=$(ls -d "$cache"/ltm-* 2>/dev/null | head -1)
why=""
if [ "$(id -u)" -ne 0 ]; then
  why="not root (a loop device needs it)"
elif ! command -v losetup >/dev/null || ! command -v mkfs.ext4 >/dev/null; then
  why="losetup or mkfs.ext4 is missing"
elif [ -z "$index" ]; then
  why="no index in $cache"
else
  # the index, its merge cells' new segments, and room for ext4's own
  size=$(( $(du -sb "$index" | cut -f1) * 3 / 2 + (256 << 20) ))
  truncate -s "$size" "$loop_img" &&
    loop_dev=$(losetup --find --show --direct-io=on "$loop_img" 2>/dev/null) &&
    mkfs.ext4 -q -F "$loop_dev" &&
    mkdir -p "$loop_mnt" && mount "$loop_dev" "$loop_mnt" &&
    echo 128 > "/sys/class/block/$(basename "$loop_dev")/queue/read_ahead_kb" &&
    mkdir -p "$loop_mnt/ltm-cache" && cp -r "$index" "$loop_mnt/ltm-cache/" ||
    why="the loop device could not be made (losetup --direct-io, mkfs.ext4, mount)"
fi
if [ -n "$why" ]; then
  echo "lucene_ltm: SKIPPED the 128 KiB read-ahead device: $why" >&2
else
  device=$(device_of "$loop_mnt/ltm-cache")
  echo "-- the same on $device (a loop device over $loop_img)"
  "$tool" run --stat "$scratch/cgroup-loop.json" -- \
    dotnet "$dll" --ltm-cache "$loop_mnt/ltm-cache" --out "$scratch/ltm-loop.json" --dir "$scratch" \
    --ltm-device "$device" ${args[@]+"${args[@]}"}
  results="$scratch/ltm.json,$scratch/ltm-loop.json"
fi
cleanup
trap - EXIT
loop_dev=""
convert
