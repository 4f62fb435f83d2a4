#!/usr/bin/env bash
# run-tests.sh NAME WHAT -- SWIFT test ARGS...
# One pass of the test suite, readable: says what the pass runs (WHAT), then every 30 seconds how
# far it has got and which tests have been running for over 30 seconds, then its one-line
# summary. The per-test lines go to build/logs/test-NAME.log; when the pass fails, the lines of
# the tests that failed are shown, and where the log is. PROGRESS_SECONDS=N reports every N
# seconds, and tests running for over N, instead.
set -uo pipefail
cd "$(dirname "$0")/.."
name=$1 what=$2
shift 2
[ "${1:-}" = -- ] && shift
logs=${BUILD_LOGS:-build/logs}
every=${PROGRESS_SECONDS:-30}
log=$logs/test-$name.log
mkdir -p "$logs"

# Tests finished so far: swift-testing's line for each test (not the run's own summary).
finished() { grep -E '^[^ ]+ Test .* ((passed|failed) after|skipped)' "$log" 2>/dev/null | grep -cv 'Test run with'; }

# The tests that started and have not finished: name -> how many are running under that name
# (suites may share a test's name) and when the first of them was seen starting. The log is read
# a complete line at a time, each line once. (Associative arrays need bash 4: macOS's own bash 3.2
# reports progress without the names.)
tracking=$(( BASH_VERSINFO[0] >= 4 ))
[ "$tracking" = 1 ] && declare -A running=() since=()
read_lines=0
track() {
    local complete line name
    [ "$tracking" = 1 ] || return 0
    complete=$(wc -l <"$log" 2>/dev/null || echo 0)
    [ "$complete" -gt "$read_lines" ] || return 0
    while IFS= read -r line; do
        # A parameterized test's cases start under it ("Test case passing …") and end with it;
        # "Test run started." is the run's own line.
        [[ $line =~ ^[^\ ]+\ Test\ (case\ |run\ started\.$) ]] && continue
        if [[ $line =~ ^[^\ ]+\ Test\ (.+)\ started\.$ ]]; then
            name=${BASH_REMATCH[1]}
            running[$name]=$(( ${running[$name]:-0} + 1 ))
            [ -n "${since[$name]:-}" ] || since[$name]=$SECONDS
        elif [[ $line =~ ^[^\ ]+\ Test\ (.+)\ ((passed|failed)\ after|skipped) ]]; then
            name=${BASH_REMATCH[1]}
            # "Test f(x:) with 3 test cases passed after …"
            [[ $name =~ ^(.+)\ with\ [0-9]+\ test\ cases?$ ]] && name=${BASH_REMATCH[1]}
            [ -n "${running[$name]:-}" ] || continue
            running[$name]=$(( running[$name] - 1 ))
            if [ "${running[$name]}" -le 0 ]; then unset 'running[$name]' 'since[$name]'; fi
        fi
    done < <(sed -n "$((read_lines + 1)),${complete}p" "$log")
    read_lines=$complete
}
# The tests running for more than $every seconds, longest first: "name (N s), ..." -- once at
# most five are left running. swift-testing starts every test at once and they wait for one
# another, so until then a name says nothing; a test that holds the run up is named as soon as
# the others are done, and before that the count of tests still running is given.
slow() {
    local name
    [ "$tracking" = 1 ] || return 0
    if [ "${#since[@]}" -gt 5 ]; then
        echo "${#since[@]} still running"
        return 0
    fi
    for name in "${!since[@]}"; do
        [ $((SECONDS - since[$name])) -gt "$every" ] && printf '%s\t%s\n' $((SECONDS - since[$name])) "$name"
    done | sort -rn | awk -F '\t' '
        { printf "%s%s (%d s)", (NR > 1 ? ", " : "running for over '"$every"' s: "), $2, $1 }'
}

echo "==> $what"
start=$SECONDS
"$@" >"$log" 2>&1 &
pid=$!
next=$every
while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    track
    if [ $((SECONDS - start)) -ge "$next" ]; then
        long=$(slow)
        echo "    ... $((SECONDS - start)) s, $(finished) tests done${long:+; $long}"
        next=$((next + every))
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
