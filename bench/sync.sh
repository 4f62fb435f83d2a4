#!/usr/bin/env bash
# Delivery benchmark (issue 20): a 1.1 of the medium corpus that changes one 1 MiB file,
# published by `pkgtool publish`, served by nginx on loopback, synced from an installed 1.0.
#
#   bench/sync.sh            appends a "Delivery" section to bench/RESULTS.md (after bench/run.sh)
#
# Side by side, interleaved, median of BENCH_RUNS, each from the same starting Documents folder
# (1.0 installed by `pkgtool extract`, as a device has it, flushed before every timed run):
#   delta:  pkgtool sync URL --documents D                 (header + TOC + the changed file)
#   full:   pkgtool sync URL --documents D --no-delta      (the whole package, installed as it arrives)
#   curl:   curl -o 1.1.pkg URL && pkgtool extract 1.1.pkg --documents D
# Then, from a server throttled to 50 MB/s (nginx limit_rate), `sync --no-delta` against `curl -o`
# alone: the install should hide behind the download. Last, a fresh sync of the huge corpus's
# 2 GiB package, for its peak RSS.
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
# Nothing is removed before or between the timed runs (before_timing.sh): what the last run left and each
# run's Documents are moved into the shared trash, which is emptied (then waited out) before
# timing starts, and by `make bench` once everything is timed.
. "$BENCH_DIR/before_timing.sh"
empty_trash_before_timing
for old in "$SYNCW"/*; do [ ! -e "$old" ] || mv "$old" "$TRASH/$(basename "$old")-$RANDOM$RANDOM"; done
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
. "$(dirname "$0")/nginx.sh"
PORT=$(free_port)
SLOWPORT=$(free_port)
start_nginx "$SYNCW/nginx" "    log_format bench '\$request_uri \$status \$body_bytes_sent \"\$http_range\"';
    access_log $SYNCW/nginx/logs/access.log bench;
    sendfile on;
    server { listen 127.0.0.1:$PORT; root $SITE; location / { } }
    # The same folder at 50 MB/s per connection.
    server { listen 127.0.0.1:$SLOWPORT; root $SITE; location / { limit_rate 50m; } }"
trap stop_nginx EXIT
URL=http://127.0.0.1:$PORT/catalog.json
PKGURL=http://127.0.0.1:$PORT/$ID/1.1.pkg

SLOWURL=http://127.0.0.1:$SLOWPORT/catalog.json
SLOWPKGURL=http://127.0.0.1:$SLOWPORT/$ID/1.1.pkg
"$PKGTOOL" publish "$SYNCW/medium-1.1.pkg" --to "$SITE" --quiet || die "publish 1.1 failed"

RESULTS=$SYNCW/results.tsv    # way run wall_s maxrss_kb rc bytes
: > "$RESULTS"
DOCS=$SYNCW/Documents
# Each run starts from 1.0 installed the way a device has it: by pkgtool itself (which records its
# stat cache), never a copy (a copy's files are other inodes, which no cache may vouch for).
prep() {
    [ ! -e "$DOCS" ] || mv "$DOCS" "$TRASH/Documents-$RANDOM$RANDOM"
    [ ! -e "$SYNCW/1.1.pkg" ] || mv "$SYNCW/1.1.pkg" "$TRASH/1.1-$RANDOM$RANDOM.pkg"
    "$PKGTOOL" extract "$SYNCW/medium-1.0.pkg" --documents "$DOCS" --quiet || die "installing 1.0 failed"
    sync
}
# mawk prints sums past 2^31 in exponent form (and caps %d there): %.0f keeps every digit.
logged() { awk -v p="/$ID/1.1.pkg" '$1 == p { n += $3 } END { printf "%.0f\n", n }' "$NG/logs/access.log"; }

run() {
    local way=$1 run=$2; shift 2
    [ "$way" = download-50 ] || prep
    local before; before=$(logged)
    read -r wall rss rc < <("$PY" -S -I "$BENCH_DIR/timeit.py" --stderr "$SYNCW/$way.log" -- "$@")
    local bytes=$(( $(logged) - before ))
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$way" "$run" "$wall" "$rss" "$rc" "$bytes" >> "$RESULTS"
    printf '   sync %-11s run %s: %7.3f s %8d KB %12d bytes (exit %s)\n' "$way" "$run" "$wall" "$rss" "$bytes" "$rc" >&2
}

echo "== sync: delta, full, curl + extract (run 0 is a warm-up)" >&2
empty_page_cache
for ((r = 0; r <= RUNS; r++)); do
    run delta "$r" "$PKGTOOL" sync "$URL" --documents "$DOCS"
    run full "$r" "$PKGTOOL" sync "$URL" --documents "$DOCS" --no-delta
    # curl's and extract's peaks are separate processes: the shell's ru_maxrss covers both.
    run curl "$r" sh -c "curl -s -o '$SYNCW/1.1.pkg' '$PKGURL' && '$PKGTOOL' extract '$SYNCW/1.1.pkg' --documents '$DOCS' --quiet"
done
echo "== sync: at 50 MB/s, full sync against the download alone" >&2
empty_page_cache
for ((r = 0; r <= RUNS; r++)); do
    run full-50 "$r" "$PKGTOOL" sync "$SLOWURL" --documents "$DOCS" --no-delta
    run download-50 "$r" curl -s -o "$SYNCW/1.1.pkg" "$SLOWPKGURL"
done

# The 2 GiB package: one fresh sync, for its peak RSS (and time, reported).
echo "== sync: the huge corpus's 2 GiB package" >&2
empty_page_cache
"$PY" "$BENCH_DIR/gen_corpus.py" --out "$WORK/corpus" huge >/dev/null || die "huge corpus: generation failed"
HUGEPKG=$SYNCW/huge-1.0.pkg
HUGEID=com.example.bench.huge
[ -s "$HUGEPKG" ] || "$PKGTOOL" create "$WORK/corpus/huge" -o "$HUGEPKG" --quiet || die "create huge failed"
"$PKGTOOL" publish "$HUGEPKG" --to "$SITE" --quiet || die "publish huge failed"
HUGEDOCS=$SYNCW/HugeDocuments
[ ! -e "$HUGEDOCS" ] || mv "$HUGEDOCS" "$TRASH/Huge-$RANDOM$RANDOM"
read -r wall rss rc < <("$PY" -S -I "$BENCH_DIR/timeit.py" --stderr "$SYNCW/huge.log" -- \
    "$PKGTOOL" sync "$URL" --documents "$HUGEDOCS" --product "$HUGEID")
printf '%s\t%s\t%s\t%s\t%s\t%s\n' huge 1 "$wall" "$rss" "$rc" "$(stat -c %s "$HUGEPKG")" >> "$RESULTS"
printf '   sync huge        run 1: %7.3f s %8d KB (exit %s)\n' "$wall" "$rss" "$rc" >&2
mv "$HUGEDOCS" "$TRASH/Huge-$RANDOM$RANDOM"

# What the issue bounds the delta by: the TOC (header + compressed TOC) and the changed file's stored bytes.
TOC=$("$PY" -c 'import sys,struct; h=open(sys.argv[1],"rb").read(28); print(28+struct.unpack(">Q",h[8:16])[0])' "$SYNCW/medium-1.1.pkg")
STORED=$("$PKGTOOL" inspect "$SYNCW/medium-1.1.pkg" --files --json | "$PY" -c '
import json,sys
changed=sys.argv[1]
for f in json.load(sys.stdin)["files"]:
    if f["path"] == changed: print(f["storedSize"])' "$CHANGED")
SIZE=$(stat -c %s "$SYNCW/medium-1.1.pkg")

"$PY" - "$RESULTS" "$TOC" "$STORED" "$SIZE" "$CHANGED" "$RUNS" "$(git -C "$ROOT" rev-parse --short HEAD)" "$PAGE_CACHE" \
    >> "${BENCH_RESULTS:-$BENCH_DIR/RESULTS.md}" <<'PY'
import statistics, sys
path, toc, stored, size, changed, runs, commit, page_cache = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7], sys.argv[8]
rows = [line.rstrip("\n").split("\t") for line in open(path)]
def values(way, col):
    return [float(r[col]) for r in rows if r[0] == way and r[1] != "0" and r[4] == "0"]
def med(way, col):
    v = values(way, col)
    return statistics.median(v) if v else float("nan")
def worst(way, col):
    v = [float(r[col]) for r in rows if r[0] == way and r[4] == "0"]
    return max(v) if v else float("nan")
delta_t, full_t, curl_t = med("delta", 2), med("full", 2), med("curl", 2)
slow_t, download_t = med("full-50", 2), med("download-50", 2)
delta_b = med("delta", 5)
bound = 1.02 * (toc + stored) + 64 * 1024
syncs = ("delta", "full", "full-50", "huge")
rss = max(worst(way, 3) for way in syncs) / 1024
def verdict(ok): return "met" if ok else "**not met**"
print()
print("## Delivery: sync over nginx (issue 20)")
print()
print(f"Medium corpus; 1.1 changes one file (`{changed}`, now 1 MiB of new random bytes, stored as {stored:,} bytes).")
print(f"Package 1.1: {size:,} bytes; header + TOC: {toc:,} bytes. nginx on loopback; each run starts from 1.0 installed by")
print(f"`pkgtool extract` and flushed (the last run's Documents moved aside, not removed); median of {runs} timed runs")
print(f"after a warm-up (run 0), ways interleaved; page cache {page_cache} before each series; pkgtool at {commit}.")
print()
print("| way | wall s | bytes nginx sent | peak RSS MiB |")
print("|---|---:|---:|---:|")
labels = (("delta", "`sync` (delta)"), ("full", "`sync --no-delta`"), ("curl", "`curl -o` + `extract`"),
          ("full-50", "`sync --no-delta`, server at 50 MB/s"), ("download-50", "`curl -o` alone, server at 50 MB/s"),
          ("huge", "`sync` of the 2 GiB package (fresh)"))
for way, label in labels:
    wall = med(way, 2) if way != "huge" else worst(way, 2)
    print(f"| {label} | {wall:.3f} | {med(way, 5) if way != 'huge' else worst(way, 5):,.0f} | {worst(way, 3) / 1024:.1f} |")
print()
print("| target | measured | verdict |")
print("|---|---:|---|")
print(f"| full sync ≤ 0.8 × (curl -o + extract) | {full_t / curl_t:.3f} | {verdict(full_t <= 0.8 * curl_t)} |")
print(f"| delta sync ≤ 0.15 × full sync | {delta_t / full_t:.3f} | {verdict(delta_t <= 0.15 * full_t)} |")
print(f"| at 50 MB/s, full sync ≤ 1.05 × the download alone | {slow_t / download_t:.3f} | {verdict(slow_t <= 1.05 * download_t)} |")
print(f"| peak RSS ≤ 64 MiB, every sync, the 2 GiB package's included | {rss:.1f} | {verdict(rss <= 64)} |")
print(f"| delta bytes ≤ 1.02 × (TOC + changed stored) + 64 KiB = {bound:,.0f} | {delta_b:,.0f} | {verdict(delta_b <= bound)} |")
print()
print("All runs (s; run 0 = warm-up, not counted):")
print()
print("| way | runs | peak RSS KB |")
print("|---|---|---:|")
for way, label in labels:
    walls = " ".join(r[2] for r in rows if r[0] == way)
    print(f"| {way} | {walls} | {worst(way, 3):.0f} |")
PY
echo "== sync: results appended to bench/RESULTS.md" >&2
