#!/usr/bin/env bash
# wine-run.sh PREFIX DLLDIRS PROGRAM [ARGS...]
#
# Runs a Windows program under Wine with its own prefix (created on first
# use: wineboot is slow, so once per prefix; PROGRAM --init-only does just
# that) and DLLDIRS (':'-separated Unix directories holding nativedir.dll and
# cmocka's DLL, or -) on its PATH. Wine's drive Z: is the Unix root.
set -euo pipefail
export WINEPREFIX=$1
dlldirs=$2
shift 2
export WINEDEBUG=-all
# no Mono/Gecko install dialogs; a caller running .NET Core keeps mscoree (below) by setting its own
export WINEDLLOVERRIDES=${WINEDLLOVERRIDES-"mscoree,mshtml="}
export DISPLAY= # no window may open
wine=$(command -v wine64 || true)
[ -n "$wine" ] || [ ! -x /usr/lib/wine/wine64 ] || wine=/usr/lib/wine/wine64 # Debian keeps it off PATH
if [ -z "$wine" ]; then
  echo "wine-run: wine64 is not installed (Debian package wine64): cannot run ${1:-}" >&2
  exit 127
fi
if [ ! -e "$WINEPREFIX/.nd-ready" ]; then
  mkdir -p "$WINEPREFIX"
  exec 9>"$WINEPREFIX.lock"
  flock 9
  if [ ! -e "$WINEPREFIX/.nd-ready" ]; then
    "$wine" wineboot --init >/dev/null 2>&1 || true
    wineserver=$(command -v wineserver || echo /usr/lib/wine/wineserver64)
    "$wineserver" -w 2>/dev/null || true # the prefix is written when the server is gone
    [ -d "$WINEPREFIX/drive_c/windows" ] || { echo "wine-run: wineboot failed in $WINEPREFIX" >&2; exit 1; }
    touch "$WINEPREFIX/.nd-ready"
  fi
  exec 9>&-
fi
[ "${1:-}" != "--init-only" ] || exit 0
if [ -n "$dlldirs" ] && [ "$dlldirs" != "-" ]; then
  wp=""
  IFS=: read -r -a dirs <<<"$dlldirs"
  for d in "${dirs[@]}"; do wp+="${wp:+;}Z:${d//\//\\}"; done
  export WINEPATH=$wp
fi
exec "$wine" "$@"
