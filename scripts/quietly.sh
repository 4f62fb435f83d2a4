#!/usr/bin/env bash
# quietly.sh LOG COMMAND...
# Runs COMMAND with everything it prints sent to LOG, so that a long step says nothing while it
# works; if it fails, shows the last lines of LOG and exits with its status.
set -uo pipefail
log=$1
shift
mkdir -p "$(dirname "$log")"
"$@" >"$log" 2>&1
status=$?
[ "$status" -eq 0 ] && exit 0
echo "failed (exit $status): $*" >&2
echo "---- last 60 lines of $log ----" >&2
tail -n 60 "$log" >&2
exit "$status"
