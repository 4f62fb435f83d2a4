#!/usr/bin/env bash
# run-tests.sh NAME WHAT -- SWIFT test ARGS...
# One pass of the test suite, readable: says what the pass runs (WHAT), then every 30 seconds how
# far it has got, then its one-line summary. The per-test lines go to build/logs/test-NAME.log;
# when the pass fails, the lines of the tests that failed are shown, and where the log is.
set -uo pipefail
cd "$(dirname "$0")/.."
name=$1 what=$2
shift 2
[ "${1:-}" = -- ] && shift
logs=${BUILD_LOGS:-build/logs}
log=$logs/test-$name.log
mkdir -p "$logs"

# Tests finished so far: swift-testing's line for each test (not the run's own summary).
finished() { grep -E '^[^ ]+ Test .* ((passed|failed) after|skipped)' "$log" 2>/dev/null | grep -cv 'Test run with'; }

echo "==> $what"
start=$SECONDS
"$@" >"$log" 2>&1 &
pid=$!
next=30
while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if [ $((SECONDS - start)) -ge "$next" ]; then
        echo "    ... $((SECONDS - start)) s, $(finished) tests done"
        next=$((next + 30))
    fi
done
wait "$pid"
status=$?

summary=$(grep -E 'Test run with .* (passed|failed)' "$log" | tail -n 1)
if [ "$status" -eq 0 ]; then
    echo "    ${summary:-passed after $((SECONDS - start)) s}"
    exit 0
fi
echo "    FAILED (exit $status) after $((SECONDS - start)) s: ${summary:-no summary}" >&2
echo "---- the failures (the whole run is in $log) ----" >&2
# Everything but the lines of tests that started or passed: the issues, with their details.
grep -vE '^[^ ]+ (Test|Suite) .*(started\.|passed after)' "$log" | tail -n 200 >&2
exit "$status"
