#!/bin/sh
# crash_fs.sh DAEMON TEST WORKDIR
# Mounts the crash-model file system and runs crash_fs_test in it (which
# replays the log it recorded as it goes); always unmounts.
set -u
. "$(dirname "$0")/mount.sh"
crash_mount "$1" "$3"
"$2" "$CRASH_MNT" "$CRASH_LOG"
rc=$?
crash_unmount
exit $rc
