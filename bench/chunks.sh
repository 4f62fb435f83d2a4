#!/usr/bin/env bash
# Chunked deltas: what `sync` downloads when one 256 MiB compressible file changes inside.
#
#   bench/chunks.sh          appends a "Chunked deltas" section to bench/RESULTS.md
#
# Two products, each 1.0 → 1.1 of one 256 MiB text file (words drawn at random: it compresses
# about 3:1 and no stretch repeats): 1.1 of the first overwrites 1 MiB in the middle, 1.1 of the
# second inserts 1 MiB near the start (at 1 MiB). Each 1.0 is installed by `sync`, then 1.1 is
# published and synced from nginx on loopback; nginx's access log gives every byte it sent for
# the update (catalog, signature look-up, header, TOC with its chunk tables, chunk ranges),
# headers included ($bytes_sent). Also: package size and create time with and without chunks.
set -uo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$BENCH_DIR/.." && pwd -P)
W=$BENCH_DIR/work/chunks
PY=${PYTHON:-python3}
PKGTOOL=${PKGTOOL:-$ROOT/.build/release/pkgtool}
case $PKGTOOL in /*) ;; *) PKGTOOL=$ROOT/$PKGTOOL ;; esac
MIB=$((1 << 20))

die() { echo "bench chunks: $*" >&2; exit 2; }
for t in nginx curl "$PY"; do command -v "$t" >/dev/null || [ -x "/usr/sbin/$t" ] || die "$t is required"; done
[ -x "$PKGTOOL" ] || die "$PKGTOOL not found: make build first"
# Nothing is removed here (bench/before_timing.sh says why): an earlier run's folder goes into the
# shared trash, which `make bench` empties at the end.
TRASH=$BENCH_DIR/work/trash
mkdir -p "$TRASH"
[ ! -e "$W" ] || mv "$W" "$TRASH/chunks-$RANDOM$RANDOM"
mkdir -p "$W"

echo "== chunks: 256 MiB files" >&2
"$PY" - "$W" <<'PY' || die "generating the files failed"
import os, random, sys
w = sys.argv[1]
MIB = 1 << 20
rng = random.Random(27)
words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))) for _ in range(4096)]
def text(size, seed):
    r = random.Random(seed); out = bytearray()
    while len(out) < size:
        out += b" ".join(r.choices(words, k=100000)) + b"\n"
    return bytes(out[:size])
def source(name, product, version, data):
    os.makedirs(f"{w}/{name}/Contents", exist_ok=True)
    with open(f"{w}/{name}/ContentInfo.plist", "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict>'
                f"<key>ContentVersion</key><string>{version}</string>"
                f"<key>IAPProductIdentifier</key><string>{product}</string></dict></plist>\n")
    with open(f"{w}/{name}/Contents/bundle.dat", "wb") as f:
        for part in data:
            f.write(part)
base = text(256 * MIB, 1)
new = text(MIB, 2)
source("inplace-1.0", "com.example.bench.inplace", "1.0", [base])
source("inplace-1.1", "com.example.bench.inplace", "1.1", [base[:128 * MIB], new, base[129 * MIB:]])
source("insert-1.0", "com.example.bench.insert", "1.0", [base])
source("insert-1.1", "com.example.bench.insert", "1.1", [base[:MIB], new, base[MIB:]])
PY

echo "== chunks: packages" >&2
now() { date +%s.%N; }
t0=$(now); "$PKGTOOL" create "$W/inplace-1.0" -o "$W/inplace-1.0.pkg" --quiet || die "create failed"
t1=$(now); "$PKGTOOL" create "$W/inplace-1.0" -o "$W/plain-1.0.pkg" --quiet --no-chunks || die "create --no-chunks failed"
t2=$(now)
CREATE_CHUNKS=$(echo "$t1 - $t0" | bc); CREATE_PLAIN=$(echo "$t2 - $t1" | bc)
for name in inplace-1.1 insert-1.0 insert-1.1; do
    "$PKGTOOL" create "$W/$name" -o "$W/$name.pkg" --quiet || die "create $name failed"
done
SITE=$W/site
"$PKGTOOL" publish "$W/inplace-1.0.pkg" "$W/insert-1.0.pkg" --to "$SITE" --quiet || die "publish 1.0 failed"

. "$(dirname "$0")/nginx.sh"
PORT=$(free_port)
start_nginx "$W/nginx" "    log_format bench '\$request_uri \$status \$bytes_sent \$body_bytes_sent \"\$http_range\"';
    access_log $W/nginx/logs/access.log bench;
    server { listen 127.0.0.1:$PORT; root $SITE; location / { } }"
trap stop_nginx EXIT
URL=http://127.0.0.1:$PORT/catalog.json
DOCS=$W/Documents
"$PKGTOOL" sync "$URL" --documents "$DOCS" --product com.example.bench.inplace --product com.example.bench.insert --quiet \
    || die "installing 1.0 failed"
"$PKGTOOL" publish "$W/inplace-1.1.pkg" "$W/insert-1.1.pkg" --to "$SITE" --quiet || die "publish 1.1 failed"

# Every byte nginx sent from line $1 of its log on: all headers and bodies, and bodies alone.
sent() { sleep 0.2; awk -v from="$1" 'NR > from { a += $3; b += $4 } END { printf "%.0f %.0f\n", a, b }' "$NG/logs/access.log"; }
lines() { wc -l < "$NG/logs/access.log"; }
update() {
    local product=$1 before; before=$(lines)
    local t0; t0=$(now)
    "$PKGTOOL" sync "$URL" --documents "$DOCS" --product "$product" --quiet || die "sync $product failed"
    local t1; t1=$(now)
    cmp -s "$DOCS/$product/1.1/bundle.dat" "$W/${2}-1.1/Contents/bundle.dat" || die "$product: the installed file differs"
    echo "$(sent "$before") $(echo "$t1 - $t0" | bc)"
}
read -r INPLACE_ALL INPLACE_BODY INPLACE_T < <(update com.example.bench.inplace inplace)
read -r INSERT_ALL INSERT_BODY INSERT_T < <(update com.example.bench.insert insert)
echo "   in place: $INPLACE_ALL bytes sent ($INPLACE_BODY body), $INPLACE_T s; insertion: $INSERT_ALL ($INSERT_BODY), $INSERT_T s" >&2

"$PY" - "$INPLACE_ALL" "$INPLACE_BODY" "$INPLACE_T" "$INSERT_ALL" "$INSERT_BODY" "$INSERT_T" \
    "$(stat -c %s "$W/inplace-1.0.pkg")" "$(stat -c %s "$W/plain-1.0.pkg")" "$CREATE_CHUNKS" "$CREATE_PLAIN" \
    "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" >> "${BENCH_RESULTS:-$BENCH_DIR/RESULTS.md}" <<'PY'
import sys
ia, ib, it, sa, sb, st, chunked, plain, cc, cp, commit = sys.argv[1:]
MIB = 1 << 20
def verdict(ok): return "met" if ok else "**not met**"
print()
print("## Chunked deltas: a change inside a 256 MiB file")
print()
print(f"One 256 MiB compressible file (random words); nginx on loopback; every byte nginx sent for the update")
print(f"(catalog, signature look-up, header and TOC with the chunk table, chunk ranges; response headers included).")
print(f"pkgtool at {commit}; one run each.")
print()
print("| change | bytes sent (all) | of which bodies | sync s | target | verdict |")
print("|---|---:|---:|---:|---:|---|")
print(f"| 1 MiB overwritten in the middle | {int(ia):,} | {int(ib):,} | {float(it):.2f} | ≤ 2.5 MiB | {verdict(int(ia) <= 2.5 * MIB)} |")
print(f"| 1 MiB inserted at 1 MiB | {int(sa):,} | {int(sb):,} | {float(st):.2f} | ≤ 3.5 MiB | {verdict(int(sa) <= 3.5 * MIB)} |")
print()
print(f"Package of the 256 MiB file: {int(chunked):,} bytes with chunks, {int(plain):,} with `--no-chunks` "
      f"({(int(chunked) / int(plain) - 1) * 100:+.2f} %); create {float(cc):.2f} s against {float(cp):.2f} s.")
PY
stop_nginx
trap - EXIT
mv "$W" "$TRASH/chunks-$RANDOM$RANDOM"
echo "bench chunks: done" >&2
