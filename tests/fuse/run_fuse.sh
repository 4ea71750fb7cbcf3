#!/bin/sh
# run_fuse.sh DAEMON BLKSIZE WORKDIR TEST...
#
# Mounts nd_blkfs (a pass-through FUSE file system reporting st_blksize =
# BLKSIZE and no STATX_DIOALIGN) on WORKDIR/mnt and runs each TEST executable
# with ND_TEST_TMPDIR inside the mount. Whatever happens, the mount is taken
# down and the daemon ended before this exits. Exit 77 (ctest: skipped) when
# FUSE cannot be had here, with the reason printed.
set -u
daemon=$1 blksize=$2 work=$3
shift 3
mnt=$work/mnt
pid=""
backing=""

say() { echo "run_fuse ($blksize-byte blocks): $*" >&2; }
skip() {
    echo "*** SKIPPED: FUSE file system with st_blksize $blksize: $*" >&2
    exit 77
}

unmount() {
    # a clean unmount first; a lazy one if something still holds the mount
    mountpoint -q "$mnt" 2>/dev/null || return 0
    fusermount3 -u -q "$mnt" 2>/dev/null || umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
}

cleanup() {
    unmount
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null
        for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null
    fi
    [ -n "$pid" ] && wait "$pid" 2>/dev/null
    unmount
    [ -n "$backing" ] && rm -rf "$backing"
}

[ -c /dev/fuse ] || skip "/dev/fuse is missing (a container without the FUSE device)"
if [ "$(id -u)" != 0 ] && ! command -v fusermount3 >/dev/null 2>&1; then
    skip "not root and no fusermount3 (Debian: fuse3)"
fi
command -v mountpoint >/dev/null 2>&1 || skip "no mountpoint(1) to see the mount with"

mkdir -p "$mnt" || exit 1
unmount # a run killed by a ctest timeout may have left one behind
# The backing files live in RAM where there is a tmpfs: FUSE is under test, not the disk.
shm=/dev/shm
[ -d "$shm" ] && [ -w "$shm" ] || shm=$work
backing=$(mktemp -d "$shm/nd-blkfs-XXXXXX") || exit 1
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# auto_unmount: fusermount3 takes the mount down even if this script is killed
autoun=""
command -v fusermount3 >/dev/null 2>&1 && autoun=",auto_unmount"
"$daemon" --backing="$backing" --blksize="$blksize" "$mnt" -f \
    -o "fsname=nd_blkfs,subtype=nd_blkfs$autoun" &
pid=$!
up=0
for _ in $(seq 1 100); do
    if mountpoint -q "$mnt"; then up=1; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
[ "$up" = 1 ] || skip "the mount failed (nd_blkfs exited or did not mount within 10 s)"

# the file system must really look as described, or the run proves nothing
echo x > "$mnt/probe" || { say "cannot write into the mount"; exit 1; }
got=$(stat -c %o "$mnt/probe")
rm -f "$mnt/probe"
if [ "$got" != "$blksize" ]; then
    say "st_blksize in the mount is $got, not $blksize"
    exit 1
fi
say "mounted on $mnt (backing $backing), st_blksize $got"

rc=0
for t in "$@"; do
    say "running $(basename "$t")"
    ND_TEST_TMPDIR=$mnt/tmp "$t" || { say "$(basename "$t") FAILED"; rc=1; }
done
exit $rc
