#!/usr/bin/env bash
# What a catalog check costs: bytes on the wire, time and memory of `sync` against nginx with
# ETags and gzip (as docs/publishing.md sets it up).
#
#   bench/catalog.sh [PRODUCTS...]   appends a "Catalog checks" section to bench/RESULTS.md
#
# For each catalog size (default 500 and 10000 products): one real package is published and
# signed, and the catalog is grown to that many products (the others synthetic, re-signed with
# openssl). Then, each measured with /usr/bin/time (wall time, peak RSS) and nginx's access log
# ($body_bytes_sent of every request, chunked framing included):
#   first     sync --product of the real one, into an empty Documents (catalog + signature + package)
#   current   sync again, nothing changed (one conditional request: 304)
#   check     sync --check, nothing changed (304 too)
#   changed   sync --check after the catalog changed (a full, compressed catalog and its signature)
set -uo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$BENCH_DIR/.." && pwd -P)
W=$BENCH_DIR/work/catalog
PY=${PYTHON:-python3}
PKGTOOL=${PKGTOOL:-$ROOT/.build/release/pkgtool}
case $PKGTOOL in /*) ;; *) PKGTOOL=$ROOT/$PKGTOOL ;; esac
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(500 10000)

die() { echo "bench catalog: $*" >&2; exit 2; }
for t in nginx openssl "$PY"; do command -v "$t" >/dev/null || [ -x "/usr/sbin/$t" ] || die "$t is required"; done
[ -x /usr/bin/time ] || die "/usr/bin/time is required"
[ -x "$PKGTOOL" ] || die "$PKGTOOL not found: make build first"
TRASH=$BENCH_DIR/work/trash
mkdir -p "$TRASH"
[ ! -e "$W" ] || mv "$W" "$TRASH/catalog-$RANDOM$RANDOM"
mkdir -p "$W"
. "$BENCH_DIR/nginx.sh"

"$PKGTOOL" keygen --out "$W/key" --quiet >/dev/null || die "keygen failed"
mkdir -p "$W/src/Contents"
printf '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>ContentVersion</key><string>1.0</string><key>IAPProductIdentifier</key><string>com.example.bench.a</string></dict></plist>\n' > "$W/src/ContentInfo.plist"
head -c 200000 /dev/urandom > "$W/src/Contents/data.bin"
"$PKGTOOL" create "$W/src" -o "$W/a-1.0.pkg" --quiet || die "create failed"

# grow CATALOG N VERSION: the catalog with N products in all, the synthetic ones at VERSION, signed.
grow() {
    "$PY" - "$1" "$2" "$3" <<'PY' || die "growing the catalog failed"
import hashlib, json, sys
path, count, version = sys.argv[1], int(sys.argv[2]), sys.argv[3]
catalog = json.load(open(path))
real = [p for p in catalog["products"] if not p["productIdentifier"].startswith("com.example.bench.p")][0]
products = [real]
for i in range(count - 1):
    # Digests as random as real ones: they are most of what does not compress.
    digest = lambda kind: hashlib.sha256(f"{kind} {i} {version}".encode()).hexdigest()
    entry = dict(real["versions"][0], contentVersion=version, url=f"com.example.bench.p{i:05}/{version}.pkg",
                 sha256=digest("package"), tocSHA256=digest("toc"), size=100000 + i * 37)
    products.append({"productIdentifier": f"com.example.bench.p{i:05}", "latest": version, "versions": [entry]})
catalog["products"] = sorted(products, key=lambda p: p["productIdentifier"])
open(path + ".new", "w").write(json.dumps(catalog, indent=2, sort_keys=True) + "\n")
PY
    local site=${1%/catalog.json} digest
    digest=$(sha256sum < "$1.new" | cut -c1-64)
    openssl pkeyutl -sign -inkey "$W/key.pem" -rawin -in "$1.new" | base64 -w0 > "$site/signatures/$digest.sig" || die "signing failed"
    echo >> "$site/signatures/$digest.sig"
    mv "$1.new" "$1"
}

# measure LABEL ARGS...: runs sync, prints a table row from /usr/bin/time and the new log lines.
measure() {
    local label=$1; shift
    local before after
    before=$(wc -l < "$NG/logs/access.log")
    /usr/bin/time -f '%e %M' -o "$W/time" "$PKGTOOL" sync "$URL" --documents "$W/Documents" --trust "$W/key.pub.pem" --quiet "$@"
    local status=$?
    sleep 0.2   # nginx writes a request's log line when it has sent the response
    after=$(tail -n +"$((before + 1))" "$NG/logs/access.log")
    read -r seconds kib < "$W/time"
    printf '| %s | %s | %s | %s | %s | %s |\n' "$N" "$label" "$status" \
        "$(echo "$after" | awk -F'\t' 'NF { s = s (s ? ", " : "") $3 } END { print s }')" \
        "$(echo "$after" | awk -F'\t' '{ n += $4 } END { print n + 0 }')" "$seconds s, $((kib / 1024)) MiB"
}

ROWS=()
for N in "${SIZES[@]}"; do
    echo "== catalog: $N products" >&2
    rm -rf "$W/site" "$W/Documents"
    "$PKGTOOL" publish "$W/a-1.0.pkg" --to "$W/site" --sign "$W/key.pem" --quiet >/dev/null || die "publish failed"
    grow "$W/site/catalog.json" "$N" 1.0
    SIZE=$(stat -c %s "$W/site/catalog.json")
    PORT=$(free_port)
    start_nginx "$W/nginx-$N" "
    types { application/json json; application/octet-stream pkg; text/plain sig; }
    log_format bench '\$request_uri\t\$http_range\t\$status\t\$body_bytes_sent';
    access_log $W/nginx-$N/logs/access.log bench;
    server {
        listen 127.0.0.1:$PORT;
        root $W/site;
        etag on;
        gzip on;
        gzip_types application/json;
        location / { }
    }"
    URL=http://127.0.0.1:$PORT/catalog.json
    ROWS+=("$(measure "first sync (catalog $SIZE bytes)" --product com.example.bench.a)")
    ROWS+=("$(measure "up-to-date sync")")
    ROWS+=("$(measure "up-to-date --check" --check)")
    sleep 1.1   # nginx's ETag counts whole seconds
    grow "$W/site/catalog.json" "$N" 1.1
    ROWS+=("$(measure "--check, catalog changed" --check)")
    stop_nginx
done

{
    echo
    echo "## Catalog checks ($(date -u +%Y-%m-%d), $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null))"
    echo
    echo "nginx on loopback with \`etag on\` and gzip for JSON; bytes are nginx's \`\$body_bytes_sent\` summed over the run's requests."
    echo
    echo "| products | run | exit | statuses | body bytes on the wire | time, peak RSS |"
    echo "|---|---|---|---|---|---|"
    printf '%s\n' "${ROWS[@]}"
} | tee -a "$BENCH_DIR/RESULTS.md"
