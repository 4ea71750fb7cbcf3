#!/usr/bin/env bash
# ctest bench_memlimit: nd_memlimit makes a memory cgroup, runs a command in it
# under the limit (the page cache it reads is charged and held to the limit),
# reports the figures, removes the cgroup, passes the command's exit status on,
# and where no cgroup can be made says so and runs nothing (exit 77).
#
#   test_memlimit.sh ND_MEMLIMIT WORKDIR
set -euo pipefail
tool=$(readlink -f "$1")
work=$2
rm -rf "$work"
mkdir -p "$work"
cd "$work"
MIB=$((1 << 20))
fail() { echo "bench_memlimit: FAILED: $*" >&2; exit 1; }
field() { /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

rc=0
"$tool" check || rc=$?
if [ "$rc" = 77 ]; then
  echo "bench_memlimit: SKIPPED: no memory cgroup can be made here (reason above)"
  exit 77
fi
[ "$rc" = 0 ] || fail "check exited $rc"

# a 96 MiB file, then out of the page cache
head -c $((96 * MIB)) /dev/urandom > data
"$tool" evict data > evict0.json

# 1. under a 32 MiB limit, reading the file keeps at most 32 MiB of it cached
"$tool" run --limit 32M --stat run.json -- \
  sh -c 'echo "$ND_MEMLIMIT_CGROUP" > cg.txt; cat data > /dev/null; "$0" stat > inner.json' "$tool"
cg=$(cat cg.txt)
[ -n "$cg" ] || fail "ND_MEMLIMIT_CGROUP was not set in the command"
[ ! -e "$cg" ] || fail "the cgroup $cg is still there after run"
peak=$(field run.json peak)
limit=$(field run.json limit)
file=$(field inner.json file)
[ "$limit" = $((32 * MIB)) ] || fail "limit $limit, not 32 MiB"
[ "$file" -le $((32 * MIB)) ] || fail "page cache $file B charged under a 32 MiB limit"
[ "$file" -ge $((8 * MIB)) ] || fail "page cache $file B: the read was not charged to the cgroup"
[ "$peak" = -1 ] || [ "$peak" -le $((32 * MIB)) ] || fail "peak $peak B above the 32 MiB limit"
echo "ok   32 MiB limit: $file B of page cache charged at the end, peak $peak"

# negative control: the same read with no limit charges more than 32 MiB
"$tool" evict data > /dev/null
"$tool" run --stat free.json -- sh -c 'cat data > /dev/null; "$0" stat > free-inner.json' "$tool"
file=$(field free-inner.json file)
[ "$file" -gt $((64 * MIB)) ] || fail "control: without a limit only $file B were charged (the 32 MiB check proves nothing)"
echo "ok   control: $file B charged without a limit"

# 2. limit --cache: that much page cache on top of the cgroup's own memory
"$tool" evict data > /dev/null
"$tool" run -- sh -c '"$0" limit --cache 16M > l.json; cat data > /dev/null; "$0" stat > l-inner.json' "$tool"
limit=$(field l.json limit)
file=$(field l-inner.json file)
[ "$limit" -ge $((16 * MIB)) ] && [ "$limit" -le $((48 * MIB)) ] || fail "limit --cache 16M set $limit"
# the limit is the usage at the moment it is set plus 16 MiB; that usage includes nd_memlimit's own
# pages, which it frees on exit, so the cache may grow by that much (KiB, well under 1 MiB): far
# below the 64 MiB file that the no-limit control caches whole
[ "$file" -le $((17 * MIB)) ] || fail "page cache $file B under limit --cache 16M"
[ "$file" -ge $((8 * MIB)) ] || fail "page cache $file B under limit --cache 16M: the read was not charged"
echo "ok   limit --cache 16M: limit $limit B, $file B of page cache"

# 3. evict drops a cached file's pages
cat data > /dev/null
"$tool" evict data > evict.json
bytes=$(field evict.json bytes)
after=$(field evict.json cached_after)
[ "$bytes" = $((96 * MIB)) ] || fail "evict counted $bytes B"
[ "$after" -lt $((MIB)) ] || fail "$after B still cached after evict"
if command -v fincore > /dev/null; then
  cat data > /dev/null
  res=$(fincore --bytes --noheadings --output RES data)
  [ "$res" -gt $((64 * MIB)) ] || fail "control: the file was not cached before evict ($res B)"
  "$tool" cached data > cached.json
  [ "$(field cached.json cached)" -gt $((64 * MIB)) ] || fail "cached says $(cat cached.json) of a cached file"
  "$tool" evict . > evict-dir.json   # a directory: its files
  res=$(fincore --bytes --noheadings --output RES data)
  [ "$res" -lt $((MIB)) ] || fail "evict of the directory left $res B cached"
fi
echo "ok   evict: $after B left of $bytes"

# 4. the command's exit status is passed on
set +e
"$tool" run -- sh -c 'exit 3' 2> /dev/null
rc=$?
set -e
[ "$rc" = 3 ] || fail "run passed on exit status $rc, not 3"
echo "ok   exit status passed on"

# 5. where no cgroup hierarchy can be reached: exit 77, the reason, the command not run
if command -v unshare > /dev/null && unshare -m true 2> /dev/null; then
  set +e
  unshare -m sh -c 'mount -t tmpfs none /sys/fs/cgroup && exec "$0" run --limit 32M -- touch ran' \
    "$tool" 2> skip.txt
  rc=$?
  set -e
  [ "$rc" = 77 ] || fail "run without a reachable cgroup exited $rc, not 77: $(cat skip.txt)"
  grep -q "SKIPPED" skip.txt || fail "no SKIPPED reason printed: $(cat skip.txt)"
  [ ! -e ran ] || fail "the command ran although no cgroup was made"
  echo "ok   no cgroup: $(cat skip.txt)"
else
  echo "note: unshare -m is not allowed here: the no-cgroup case is not checked"
fi
echo "bench_memlimit: passed"
