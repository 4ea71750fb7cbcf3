#!/bin/sh
# crash_lucene.sh DAEMON SWEEP DOTNET APP WORK [SHIM CONTROL]
# Records Lucene.NET's commit loop (APP: NativeDir.CrashLucene.dll, "record") on
# the crash-model file system once per directory kind, unmounts, materializes
# every distinct cut state of the log on local disk (lucene_sweep), checks them
# with one .NET process per kind (APP "check") and counts (lucene_sweep
# report). With SHIM and CONTROL (dir or file), only NativeFSDirectory runs,
# with that kind of fsync made a no-op (noop_sync.c), and the cuts must find a
# loss.
set -u
. "$(dirname "$0")/mount.sh"
daemon=$1 sweep=$2 dotnet=$3 app=$4 work=$5
shim=${6:-} control=${7:-}
command -v "$dotnet" >/dev/null 2>&1 || crash_skip "no dotnet ($dotnet) to run Lucene.NET with"
[ -f "$app" ] || { echo "crash_lucene: $app is not built" >&2; exit 1; }
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
kinds="native mmap niofs simplefs"
[ -n "$control" ] && kinds=native
crash_mount "$daemon" "$work"
if [ -n "$control" ]; then
    LD_PRELOAD=$shim ND_CRASH_NOOP=$control ND_CRASH_NOOP_KEEP=$CRASH_MNT \
        "$dotnet" "$app" record "$CRASH_MNT" $kinds
else
    "$dotnet" "$app" record "$CRASH_MNT" $kinds
fi
rc=$?
crash_unmount
[ $rc = 0 ] || { echo "crash_lucene: the recorder failed ($rc)" >&2; exit 1; }
echo "crash_lucene: log of $(wc -c <"$CRASH_LOG") bytes"
states=$work/states
rm -rf "$states" && mkdir -p "$states" || exit 1
"$sweep" materialize "$CRASH_LOG" "$states" $kinds || exit 1
for kind in $kinds; do
    "$dotnet" "$app" check "$states/$kind" || { echo "crash_lucene: the check of $kind failed" >&2; exit 1; }
done
if [ -n "$control" ]; then
    "$sweep" report "$states" --control "$control" $kinds
else
    "$sweep" report "$states" $kinds
fi
rc=$?
# the states are kept when something was found, for a look at them
[ $rc = 0 ] && rm -rf "$states"
exit $rc
