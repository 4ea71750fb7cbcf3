# mount.sh - sourced by the crash tests' drivers: mounts the crash-model file
# system and always takes it down again.
#
#   . mount.sh
#   crash_mount DAEMON WORKDIR   # crashfs on WORKDIR/mnt, its log WORKDIR/log;
#                                # sets CRASH_MNT and CRASH_LOG
#   ...record something in $CRASH_MNT...
#   crash_unmount                # the log is complete once this returns
#
# Exit 77 (ctest: skipped) with the reason when FUSE cannot be had here. Any
# exit of the sourcing script takes the mount down and ends the daemon.

crash_pid=""
CRASH_MNT=""
CRASH_LOG=""

crash_skip() {
    echo "*** SKIPPED: crash-model file system (FUSE): $*" >&2
    exit 77
}

crash_unmount() {
    if [ -n "$CRASH_MNT" ] && mountpoint -q "$CRASH_MNT" 2>/dev/null; then
        fusermount3 -u -q "$CRASH_MNT" 2>/dev/null || umount "$CRASH_MNT" 2>/dev/null ||
            umount -l "$CRASH_MNT" 2>/dev/null
    fi
    if [ -n "$crash_pid" ]; then
        # the daemon leaves its loop when the mount goes
        for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
            kill -0 "$crash_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill "$crash_pid" 2>/dev/null
        wait "$crash_pid" 2>/dev/null
        crash_pid=""
    fi
}

crash_mount() {
    daemon=$1 work=$2
    [ -c /dev/fuse ] || crash_skip "/dev/fuse is missing (a container without the FUSE device)"
    if [ "$(id -u)" != 0 ] && ! command -v fusermount3 >/dev/null 2>&1; then
        crash_skip "not root and no fusermount3 (Debian: fuse3)"
    fi
    command -v mountpoint >/dev/null 2>&1 || crash_skip "no mountpoint(1) to see the mount with"
    CRASH_MNT=$work/mnt
    CRASH_LOG=$work/log
    mkdir -p "$CRASH_MNT" || exit 1
    crash_unmount # a run killed by a ctest timeout may have left one behind
    rm -f "$CRASH_LOG"
    trap crash_unmount EXIT
    trap 'exit 130' INT TERM HUP
    # auto_unmount: fusermount3 takes the mount down even if this script is killed
    autoun=""
    command -v fusermount3 >/dev/null 2>&1 && autoun=",auto_unmount"
    "$daemon" --log="$CRASH_LOG" "$CRASH_MNT" -f -o "fsname=crashfs,subtype=crashfs$autoun" &
    crash_pid=$!
    for _ in $(seq 1 100); do
        mountpoint -q "$CRASH_MNT" && return 0
        kill -0 "$crash_pid" 2>/dev/null || break
        sleep 0.1
    done
    crash_skip "the mount failed (crashfs exited or did not mount within 10 s)"
}
