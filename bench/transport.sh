#!/usr/bin/env bash
# The HTTP client sync uses on this platform (AsyncHTTPClient on Linux, URLSession on Apple's),
# behind PkgKit's transport protocol and read the way sync reads a body (bench/transportbench),
# beside curl on the same data. Issue 19 chose AsyncHTTPClient for Linux by running
# FoundationNetworking's URLSession the same way; PkgKit no longer builds URLSession on Linux
# (it linked libcurl into every program using PkgKit), so that side is gone from the runs and
# its numbers are quoted in the report.
#
#   bench/transport.sh       writes bench/TRANSPORT.md
#
# 1. Throughput and peak RSS: a 256 MiB file from nginx on loopback, written to disk; curl -o
#    and the transport interleaved, median of BENCH_RUNS (default 5).
# 2. A slow reader (2 ms per chunk, a disk that cannot keep up) on a 64 MiB file: peak RSS says
#    whether the client holds the server back or piles the body up in memory.
# 3. Issue 19's repro: a package, then 6 MB of zeros with no Content-Length (HTTP/1.0), from a
#    server that behaves like a broken proxy: does the download end by itself, and how fast?
#    With PKGTOOL_OLD set (a pkgtool built before this change), its sync is run too, stopped
#    with SIGTERM after 60 s and SIGKILL 10 s later if it does not end.
set -uo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$BENCH_DIR/.." && pwd -P)
WORK=$BENCH_DIR/work/transport
RUNS=${BENCH_RUNS:-5}
PY=${PYTHON:-python3}
TB=${TRANSPORTBENCH:-$ROOT/.build/release/transportbench}
PKGTOOL=${PKGTOOL:-$ROOT/.build/release/pkgtool}
OLD=${PKGTOOL_OLD:-}
OUT=$BENCH_DIR/TRANSPORT.md

die() { echo "bench transport: $*" >&2; exit 2; }
for t in nginx curl "$PY"; do command -v "$t" >/dev/null || [ -x "/usr/sbin/$t" ] || die "$t is required"; done
[ -x "$TB" ] || die "$TB not found: swift build -c release --product transportbench"
[ -x "$PKGTOOL" ] || die "$PKGTOOL not found: make build first"

mkdir -p "$WORK/site" "$WORK/out"
[ -s "$WORK/site/big.bin" ] || head -c $((256 << 20)) /dev/urandom > "$WORK/site/big.bin"
[ -s "$WORK/site/mid.bin" ] || head -c $((64 << 20)) /dev/urandom > "$WORK/site/mid.bin"

. "$(dirname "$0")/nginx.sh"
PORT=$(free_port)
start_nginx "$WORK/nginx" "    access_log off;
    sendfile on;
    server { listen 127.0.0.1:$PORT; root $WORK/site; location / { } }"
REPRO_PID=
cleanup() {
    stop_nginx
    [ -z "$REPRO_PID" ] || kill "$REPRO_PID" 2>/dev/null
    rm -rf "$WORK/out" "$WORK/docs-"*
}
trap cleanup EXIT
BASE=http://127.0.0.1:$PORT

timeit() { "$PY" -S -I "$BENCH_DIR/timeit.py" --timeout 600 -- "$@"; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# 1. Throughput.
declare -A WALL RSS
if [ "$(uname -s)" = Linux ]; then client=asynchttpclient; else client=urlsession; fi
ways=(curl "$client")
big=$((256 << 20))
run_way() {
    case $1 in
        curl) timeit curl -s -o "$WORK/out/big" "$BASE/big.bin" ;;
        *) timeit "$TB" "$1" "$BASE/big.bin" "$WORK/out/big" "$big" ;;
    esac
}
for way in "${ways[@]}"; do run_way "$way" >/dev/null; done   # warm-up
for ((run = 1; run <= RUNS; run++)); do
    for way in "${ways[@]}"; do
        read -r wall rss code < <(run_way "$way")
        [ "$code" = 0 ] || die "$way failed (exit $code)"
        WALL[$way]+="$wall "
        [ "${RSS[$way]:-0}" -gt "$rss" ] || RSS[$way]=$rss
    done
    echo "throughput run $run/$RUNS" >&2
done

# 2. A slow reader.
declare -A SLOW
mid=$((64 << 20))
for way in "$client"; do
    read -r wall rss code < <(timeit "$TB" "$way" "$BASE/mid.bin" "$WORK/out/mid" "$mid" --slow-reader 2)
    SLOW[$way]="$wall $rss $code"
done

# 3. The repro.
mkdir -p "$WORK/repro/src/Contents"
[ -s "$WORK/repro/src/Contents/data.bin" ] || head -c $((10 << 20)) /dev/urandom > "$WORK/repro/src/Contents/data.bin"
"$PKGTOOL" create "$WORK/repro/src" --product-id com.example.book --content-version 1.0 -o "$WORK/repro/p.pkg" --quiet \
    || die "create failed"
rm -rf "$WORK/repro/site"
"$PKGTOOL" publish "$WORK/repro/p.pkg" --to "$WORK/repro/site" --quiet || die "publish failed"
exec 3< <("$PY" "$BENCH_DIR/overlong_server.py" "$WORK/repro/site" $((6 << 20)))
REPRO_PID=$!
read -r RPORT <&3
RBASE=http://127.0.0.1:$RPORT
PKGSIZE=$(stat -c %s "$WORK/repro/p.pkg")
declare -A REPRO
for way in "$client"; do
    start=$(date +%s.%N)
    result=$(timeout -s KILL 70 "$TB" "$way" "$RBASE/com.example.book/1.0.pkg" "$WORK/out/repro" "$PKGSIZE" --timeout 30)
    code=$?
    REPRO[$way]="$(echo "$(date +%s.%N) - $start" | bc) $code ${result%% *}"
done
sync_repro() { # pkgtool: SIGTERM after 60 s, SIGKILL 10 s later; prints "seconds exit"
    local docs=$WORK/docs-$RANDOM$RANDOM start
    start=$(date +%s.%N)
    local code=0
    timeout -s TERM -k 10 60 "$1" sync "$RBASE/catalog.json" --documents "$docs" --product com.example.book >/dev/null 2>&1 || code=$?
    echo "$(echo "$(date +%s.%N) - $start" | bc) $code"
}
REPRO[pkgtool]=$(sync_repro "$PKGTOOL")
[ -z "$OLD" ] || REPRO[old]=$(sync_repro "$OLD")

{
    echo "# HTTP client on Linux: measured (issue 19)"
    echo
    echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) CPUs, $(uname -sr); loopback, nginx $("$NGINX" -v 2>&1 | sed 's/.*\///')"
    echo "- curl: $(curl --version | head -1 | cut -d' ' -f1-2); transportbench: PkgKit's transports read as sync reads a body (idle timeout, bound, back-pressure)"
    echo "- pkgtool: repository at $(git -C "$ROOT" rev-parse --short HEAD)"
    echo
    echo "## Throughput: 256 MiB to disk, median of $RUNS (interleaved, after a warm-up)"
    echo
    echo "| client | wall s | runs | ratio to curl | MB/s | peak RSS MiB |"
    echo "|---|---:|---|---:|---:|---:|"
    cm=$(printf '%s\n' ${WALL[curl]} | median)
    for way in "${ways[@]}"; do
        m=$(printf '%s\n' ${WALL[$way]} | median)
        printf '| %s | %.3f | %s | %.2f | %.0f | %.1f |\n' "$way" "$m" "${WALL[$way]% }" "$(echo "$m / $cm" | bc -l)" \
            "$(echo "$big / 1000000 / $m" | bc -l)" "$(echo "${RSS[$way]} / 1024" | bc -l)"
    done
    echo
    echo "## A slow reader (2 ms per chunk), 64 MiB"
    echo
    echo "| client | wall s | peak RSS MiB | exit |"
    echo "|---|---:|---:|---:|"
    for way in "$client"; do
        read -r wall rss code <<<"${SLOW[$way]}"
        printf '| %s | %.1f | %.1f | %s |\n' "$way" "$wall" "$(echo "$rss / 1024" | bc -l)" "$code"
    done
    echo
    echo "## Issue 19's repro: a $PKGSIZE-byte package, then 6 MB of zeros, no Content-Length"
    echo
    echo "| client | ended after s | exit | outcome |"
    echo "|---|---:|---:|---|"
    for way in "$client"; do
        read -r secs code outcome <<<"${REPRO[$way]}"
        printf '| transportbench %s | %.2f | %s | %s |\n' "$way" "$secs" "$code" "$outcome"
    done
    read -r secs code <<<"${REPRO[pkgtool]}"
    printf '| pkgtool sync (this build) | %.2f | %s | %s |\n' "$secs" "$code" "$([ "$code" = 1 ] && echo refused at once || echo "exit $code")"
    if [ -n "$OLD" ]; then
        read -r secs code <<<"${REPRO[old]}"
        printf '| pkgtool sync (%s) | %.2f | %s | %s |\n' "$(basename "$(dirname "$(dirname "$OLD")")")" "$secs" "$code" \
            "$([ "$code" = 137 ] && echo "hung; SIGTERM ignored, ended by SIGKILL" || echo "exit $code")"
    fi
    read -r _ slow_rss _ <<<"${SLOW[$client]}"
    echo
    echo "## What sync uses on Linux"
    echo
    echo "AsyncHTTPClient, behind PkgKit's \`HTTPTransport\` (Apple platforms keep URLSession). It moves the"
    echo "bytes as fast as curl does (the ratio above), and it reads at the reader's pace: under the slow"
    printf 'reader its peak RSS stays at %.1f MiB. Issue 19 ran FoundationNetworking'"'"'s URLSession the same way\n' \
        "$(echo "$slow_rss / 1024" | bc -l)"
    echo "(2026-11-25, 2 CPUs): as fast as curl, but 190.8 MiB peak RSS on the 256 MiB file and 101.0 MiB under"
    echo "the slow reader, because FoundationNetworking takes a body in as fast as the server sends it, on"
    echo "the one queue every session of a process shares. Both ended the repro at once; what hung in issue"
    echo "19 was sync waiting on its own full queue. PkgKit has not built URLSession on Linux since: it"
    echo "linked libcurl and the thirty-odd libraries libcurl needs into every program using PkgKit, for"
    echo "a client only this comparison used. These runs measure the transport this platform builds."
} > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
cat "$OUT"
