#!/bin/sh
# crash_c.sh DAEMON RECORDER SWEEP WORKDIR [SHIM CONTROL]
# Records nativedir's C protocol (crash_protocol) on the crash-model file
# system, unmounts, and checks every cut point of the log (crash_sweep).
# With SHIM and CONTROL (dir or file), the recorder runs with that kind of
# fsync made a no-op (noop_sync.c) and the sweep must find lost data.
set -u
. "$(dirname "$0")/mount.sh"
daemon=$1 recorder=$2 sweep=$3 work=$4
shim=${5:-} control=${6:-}
crash_mount "$daemon" "$work"
if [ -n "$control" ]; then
    LD_PRELOAD=$shim ND_CRASH_NOOP=$control ND_CRASH_NOOP_KEEP=$CRASH_MNT "$recorder" "$CRASH_MNT"
else
    "$recorder" "$CRASH_MNT"
fi
rc=$?
crash_unmount
[ $rc = 0 ] || { echo "crash_c: the recorder failed ($rc)" >&2; exit 1; }
echo "crash_c: log of $(wc -c <"$CRASH_LOG") bytes"
if [ -n "$control" ]; then
    exec "$sweep" "$CRASH_LOG" --control "$control"
fi
exec "$sweep" "$CRASH_LOG"
