#!/usr/bin/env bash
# Delivery benchmark (issue 10): a 1.1 of the medium corpus that changes one 1 MiB file,
# published by `pkgtool publish`, served by nginx on loopback, synced from an installed 1.0.
#
#   bench/sync.sh            appends a "Delivery" section to bench/RESULTS.md (after bench/run.sh)
#
# Three ways to get from 1.0 to 1.1, each from the same starting Documents folder (a fresh copy
# with 1.0 installed, flushed before every timed run), interleaved, median of BENCH_RUNS:
#   delta:  pkgtool sync URL --documents D                 (header + TOC + the changed file)
#   full:   pkgtool sync URL --documents D --no-delta      (the whole package, then install)
#   curl:   curl -o 1.1.pkg URL && pkgtool extract 1.1.pkg --documents D
# Bytes: what nginx logged as sent for the package, per run. Peak RSS: the pkgtool process.
set -uo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$BENCH_DIR/.." && pwd -P)
WORK=$BENCH_DIR/work
SYNCW=$WORK/sync
# Five runs: a full sync varies more from run to run than the commands of run.sh (the kernel's
# page-cache work on this VM).
RUNS=${BENCH_RUNS:-5}
PY=${PYTHON:-python3}
PKGTOOL=${PKGTOOL:-$ROOT/.build/release/pkgtool}
case $PKGTOOL in /*) ;; *) PKGTOOL=$ROOT/$PKGTOOL ;; esac
ID=com.example.bench.medium

die() { echo "bench sync: $*" >&2; exit 2; }
for t in nginx curl "$PY"; do command -v "$t" >/dev/null || [ -x "/usr/sbin/$t" ] || die "$t is required"; done
[ -x "$PKGTOOL" ] || die "$PKGTOOL not found: make build first"

mkdir -p "$WORK" "$SYNCW"
"$PY" "$BENCH_DIR/gen_corpus.py" --out "$WORK/corpus" medium >/dev/null || die "medium corpus: generation failed"
CORPUS=$WORK/corpus/medium

# 1.0 is the corpus; 1.1 a copy (hard links: untouched files share the corpus's) with one file
# replaced by 1 MiB of new random bytes, and the version raised.
echo "== sync: packages" >&2
# Nothing is removed before or between the timed runs: ext4 without a journal passes over inodes
# freed in the last five minutes when it creates files, which made every run after the first pay
# seconds for the Documents folder removed before it (see bench/README.md). What the last run
# left and each run's Documents are moved here, and removed when the benchmark ends.
DOOMED=$WORK/sync-doomed
mkdir -p "$DOOMED"
trap 'rm -rf "$DOOMED"' EXIT
for old in "$SYNCW"/*; do [ ! -e "$old" ] || mv "$old" "$DOOMED/$(basename "$old")-$RANDOM$RANDOM"; done
cp -al "$CORPUS" "$SYNCW/v11"
CHANGED=$(cd "$SYNCW/v11" && find Contents -type f -size +900k -size -12M | sort | sed -n 1p)
[ -n "$CHANGED" ] || die "no file to change in the corpus"
rm -f "$SYNCW/v11/$CHANGED" "$SYNCW/v11/ContentInfo.plist"
head -c 1048576 /dev/urandom > "$SYNCW/v11/$CHANGED"
sed 's/<string>1.0<\/string>/<string>1.1<\/string>/' "$CORPUS/ContentInfo.plist" > "$SYNCW/v11/ContentInfo.plist"
"$PKGTOOL" create "$CORPUS" -o "$SYNCW/medium-1.0.pkg" --quiet || die "create 1.0 failed"
"$PKGTOOL" create "$SYNCW/v11" -o "$SYNCW/medium-1.1.pkg" --quiet || die "create 1.1 failed"
SITE=$SYNCW/site
"$PKGTOOL" publish "$SYNCW/medium-1.0.pkg" --to "$SITE" --quiet || die "publish 1.0 failed"

# nginx on a free loopback port, its own config, logging the bytes of every response.
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
NG=$SYNCW/nginx; mkdir -p "$NG/tmp" "$NG/logs"
cat > "$NG/nginx.conf" <<CONF
daemon on;
worker_processes 1;
pid $NG/nginx.pid;
error_log $NG/logs/error.log;
$( [ "$(id -u)" = 0 ] && echo "user root;" )
events { worker_connections 64; }
http {
    log_format bench '\$request_uri \$status \$body_bytes_sent "\$http_range"';
    access_log $NG/logs/access.log bench;
    client_body_temp_path $NG/tmp/body; proxy_temp_path $NG/tmp/proxy; fastcgi_temp_path $NG/tmp/fastcgi;
    uwsgi_temp_path $NG/tmp/uwsgi; scgi_temp_path $NG/tmp/scgi;
    sendfile on;
    server { listen 127.0.0.1:$PORT; root $SITE; location / { } }
}
CONF
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
"$NGINX" -c "$NG/nginx.conf" -p "$NG" || die "nginx did not start"
trap 'kill "$(cat "$NG/nginx.pid" 2>/dev/null)" 2>/dev/null; rm -rf "$DOOMED"' EXIT
URL=http://127.0.0.1:$PORT/catalog.json
PKGURL=http://127.0.0.1:$PORT/$ID/1.1.pkg

# The starting point: 1.0 installed by a sync, kept aside and copied afresh before each run.
BASE=$SYNCW/base
"$PKGTOOL" sync "$URL" --documents "$BASE" --product "$ID" --quiet || die "initial sync of 1.0 failed"
"$PKGTOOL" publish "$SYNCW/medium-1.1.pkg" --to "$SITE" --quiet || die "publish 1.1 failed"

RESULTS=$SYNCW/results.tsv    # way run wall_s maxrss_kb rc bytes
: > "$RESULTS"
DOCS=$SYNCW/Documents
prep() {
    [ ! -e "$DOCS" ] || mv "$DOCS" "$DOOMED/Documents-$RANDOM$RANDOM"
    rm -f "$SYNCW/1.1.pkg"; cp -a "$BASE" "$DOCS"; sync
}
# mawk prints sums past 2^31 in exponent form (and caps %d there): %.0f keeps every digit.
logged() { awk -v p="/$ID/1.1.pkg" '$1 == p { n += $3 } END { printf "%.0f\n", n }' "$NG/logs/access.log"; }

run() {
    local way=$1 run=$2; shift 2
    prep
    local before; before=$(logged)
    read -r wall rss rc < <("$PY" -S -I "$BENCH_DIR/timeit.py" --stderr "$SYNCW/$way.log" -- "$@")
    local bytes=$(( $(logged) - before ))
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$way" "$run" "$wall" "$rss" "$rc" "$bytes" >> "$RESULTS"
    printf '   sync %-6s run %s: %7.3f s %8d KB %12d bytes (exit %s)\n' "$way" "$run" "$wall" "$rss" "$bytes" "$rc" >&2
}

echo "== sync: delta, full, curl + extract (run 0 is a warm-up)" >&2
for ((r = 0; r <= RUNS; r++)); do
    run delta "$r" "$PKGTOOL" sync "$URL" --documents "$DOCS"
    run full "$r" "$PKGTOOL" sync "$URL" --documents "$DOCS" --no-delta
    # curl's and extract's peaks are separate processes: the shell's ru_maxrss covers both.
    run curl "$r" sh -c "curl -s -o '$SYNCW/1.1.pkg' '$PKGURL' && '$PKGTOOL' extract '$SYNCW/1.1.pkg' --documents '$DOCS' --quiet"
done

# What the issue bounds the delta by: the TOC (header + compressed TOC) and the changed file's stored bytes.
TOC=$("$PY" -c 'import sys,struct; h=open(sys.argv[1],"rb").read(28); print(28+struct.unpack(">Q",h[8:16])[0])' "$SYNCW/medium-1.1.pkg")
STORED=$("$PKGTOOL" inspect "$SYNCW/medium-1.1.pkg" --files --json | "$PY" -c '
import json,sys
changed=sys.argv[1]
for f in json.load(sys.stdin)["files"]:
    if f["path"] == changed: print(f["storedSize"])' "$CHANGED")
SIZE=$(stat -c %s "$SYNCW/medium-1.1.pkg")

"$PY" - "$RESULTS" "$TOC" "$STORED" "$SIZE" "$CHANGED" "$RUNS" >> "${BENCH_RESULTS:-$BENCH_DIR/RESULTS.md}" <<'PY'
import statistics, sys
path, toc, stored, size, changed, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
rows = [line.rstrip("\n").split("\t") for line in open(path)]
def med(way, col):
    values = [float(r[col]) for r in rows if r[0] == way and r[1] != "0" and r[4] == "0"]
    return statistics.median(values) if values else float("nan")
def worst(way, col):
    values = [float(r[col]) for r in rows if r[0] == way and r[1] != "0" and r[4] == "0"]
    return max(values) if values else float("nan")
delta_t, full_t, curl_t = med("delta", 2), med("full", 2), med("curl", 2)
delta_b, full_b = med("delta", 5), med("full", 5)
bound = 1.02 * (toc + stored) + 64 * 1024
rss = max(worst("delta", 3), worst("full", 3)) / 1024
def verdict(ok): return "met" if ok else "**not met**"
print()
print("## Delivery: sync over nginx (issue 10)")
print()
print(f"Medium corpus; 1.1 changes one file (`{changed}`, now 1 MiB of new random bytes, stored as {stored:,} bytes).")
print(f"Package 1.1: {size:,} bytes; header + TOC: {toc:,} bytes. nginx on loopback; Documents holds 1.0, copied afresh")
print(f"and flushed before each run (the last run's moved aside, not removed); median of {runs} timed runs after a")
print(f"warm-up, ways interleaved.")
print()
print("| way | wall s | bytes nginx sent | peak RSS MiB |")
print("|---|---:|---:|---:|")
for way, label in (("delta", "`sync` (delta)"), ("full", "`sync --no-delta`"), ("curl", "`curl -o` + `extract`")):
    print(f"| {label} | {med(way, 2):.3f} | {med(way, 5):,.0f} | {worst(way, 3) / 1024:.1f} |")
print()
print("| target | measured | verdict |")
print("|---|---:|---|")
print(f"| delta bytes ≤ 1.02 × (TOC + changed stored) + 64 KiB = {bound:,.0f} | {delta_b:,.0f} | {verdict(delta_b <= bound)} |")
print(f"| delta time ≤ 0.25 × full sync | {delta_t / full_t:.3f} | {verdict(delta_t <= 0.25 * full_t)} |")
print(f"| full sync ≤ 1.1 × (curl -o + extract) | {full_t / curl_t:.3f} | {verdict(full_t <= 1.1 * curl_t)} |")
print(f"| peak RSS ≤ 64 MiB (sync) | {rss:.1f} | {verdict(rss <= 64)} |")
PY
echo "== sync: results appended to bench/RESULTS.md" >&2
