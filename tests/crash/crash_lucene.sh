#!/bin/sh
# crash_lucene.sh DAEMON SWEEP RUNTIME APP WORK [SHIM CONTROL]
# Records a Lucene commit loop (APP "record": NativeDir.CrashLucene.dll run by
# dotnet for Lucene.NET, crash-lucene-java.jar run by java -jar for Lucene in
# Java) on the crash-model file system once per directory kind, unmounts,
# materializes every distinct cut state of the log on local disk
# (lucene_sweep), checks them with one process per kind (APP "check") and
# counts (lucene_sweep report). With SHIM and CONTROL (dir or file), only the
# nativedir kind runs, with that kind of fsync made a no-op (noop_sync.c), and
# the cuts must find a loss.
set -u
. "$(dirname "$0")/mount.sh"
daemon=$1 sweep=$2
runtime=$3 app=$4 work=$5
shim=${6:-} control=${7:-}
command -v "$runtime" >/dev/null 2>&1 || crash_skip "no $runtime to run $app with"
[ -f "$app" ] || { echo "crash_lucene: $app is not built" >&2; exit 1; }
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
case $app in
*.jar)
    run() { "$runtime" -jar "$app" "$@"; }
    kinds="java-native java-mmap java-niofs" native=java-native ;;
*)
    run() { "$runtime" "$app" "$@"; }
    kinds="native mmap niofs simplefs" native=native ;;
esac
[ -n "$control" ] && kinds=$native
crash_mount "$daemon" "$work"
if [ -n "$control" ]; then
    LD_PRELOAD=$shim ND_CRASH_NOOP=$control ND_CRASH_NOOP_KEEP=$CRASH_MNT \
        run record "$CRASH_MNT" $kinds
else
    run record "$CRASH_MNT" $kinds
fi
rc=$?
crash_unmount
[ $rc = 0 ] || { echo "crash_lucene: the recorder failed ($rc)" >&2; exit 1; }
echo "crash_lucene: log of $(wc -c <"$CRASH_LOG") bytes"
states=$work/states
rm -rf "$states" && mkdir -p "$states" || exit 1
"$sweep" materialize "$CRASH_LOG" "$states" $kinds || exit 1
for kind in $kinds; do
    run check "$states/$kind" || { echo "crash_lucene: the check of $kind failed" >&2; exit 1; }
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
