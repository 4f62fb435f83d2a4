#!/usr/bin/env bash
# Chunked deltas: what `sync` downloads when one 256 MiB compressible file changes inside.
#
#   bench/chunks.sh          appends a "Chunked deltas" section to bench/RESULTS.md
#
# Two products, each 1.0 → 1.1 of one 256 MiB text file (words drawn at random: it compresses
# about 3:1 and no stretch repeats): 1.1 of the first overwrites 1 MiB in the middle, 1.1 of the
# second inserts 1 MiB near the start (at 1 MiB). Two more make the same changes to a bundle
# named by its content hash (`Contents/<sha256 prefix>.bundle`, as asset pipelines name them),
# so 1.1 renames it. A fifth, the pipeline run: 20 hash-named bundles of 4 to 40 MiB, two of
# them changed by small edits (64 KiB overwritten in one, 16 KiB inserted in the other) and so
# renamed; its bound is 1.5 times the compressed bytes of 1.1's chunks that no chunk of 1.0 has,
# plus 1.1's header and TOC (read from both packages' chunk tables). Each 1.0 is installed by
# `sync`, then 1.1 is published and synced from nginx on loopback; nginx's access log gives every
# byte it sent for the update (catalog, signature look-up, header, TOC with its chunk tables,
# chunk ranges), headers included ($bytes_sent). Also: package size and create time with and
# without chunks.
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
import hashlib, os, random, sys
w = sys.argv[1]
MIB = 1 << 20
rng = random.Random(27)
words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))) for _ in range(4096)]
def text(size, seed):
    r = random.Random(seed); out = bytearray()
    while len(out) < size:
        out += b" ".join(r.choices(words, k=100000)) + b"\n"
    return bytes(out[:size])
def plist(name, product, version):
    os.makedirs(f"{w}/{name}/Contents", exist_ok=True)
    with open(f"{w}/{name}/ContentInfo.plist", "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict>'
                f"<key>ContentVersion</key><string>{version}</string>"
                f"<key>IAPProductIdentifier</key><string>{product}</string></dict></plist>\n")
def source(name, product, version, data, file="bundle.dat"):
    plist(name, product, version)
    with open(f"{w}/{name}/Contents/{file}", "wb") as f:
        for part in data:
            f.write(part)
def hashed(parts):
    h = hashlib.sha256()
    for part in parts:
        h.update(part)
    return h.hexdigest()[:16] + ".bundle"
base = text(256 * MIB, 1)
new = text(MIB, 2)
inplace = [base[:128 * MIB], new, base[129 * MIB:]]
insert = [base[:MIB], new, base[MIB:]]
source("inplace-1.0", "com.example.bench.inplace", "1.0", [base])
source("inplace-1.1", "com.example.bench.inplace", "1.1", inplace)
source("insert-1.0", "com.example.bench.insert", "1.0", [base])
source("insert-1.1", "com.example.bench.insert", "1.1", insert)
# The same bytes named by their hash: hard links, not copies.
for name, parts in [("renamed-inplace", inplace), ("renamed-insert", insert)]:
    product = "com.example.bench." + name.replace("-", "_")
    plist(f"{name}-1.0", product, "1.0")
    os.link(f"{w}/inplace-1.0/Contents/bundle.dat", f"{w}/{name}-1.0/Contents/{hashed([base])}")
    plist(f"{name}-1.1", product, "1.1")
    os.link(f"{w}/{name.split('-')[1]}-1.1/Contents/bundle.dat", f"{w}/{name}-1.1/Contents/{hashed(parts)}")
# The pipeline: 20 bundles of 4 to 40 MiB; in 1.1, bundle 3 has 64 KiB overwritten in its middle
# and bundle 12 has 16 KiB inserted a third of the way in (each then renamed to its new hash).
del base, new, inplace, insert
plist("pipeline-1.0", "com.example.bench.pipeline", "1.0")
plist("pipeline-1.1", "com.example.bench.pipeline", "1.1")
sizes = random.Random(28)
for index in range(20):
    data = text(sizes.randint(4 * MIB, 40 * MIB), 100 + index)
    old = f"{w}/pipeline-1.0/Contents/{hashed([data])}"
    with open(old, "wb") as f:
        f.write(data)
    if index == 3:
        middle = len(data) // 2
        parts = [data[:middle], text(64 << 10, 200), data[middle + (64 << 10):]]
    elif index == 12:
        third = len(data) // 3
        parts = [data[:third], text(16 << 10, 201), data[third:]]
    else:
        os.link(old, f"{w}/pipeline-1.1/Contents/{hashed([data])}")
        continue
    with open(f"{w}/pipeline-1.1/Contents/{hashed(parts)}", "wb") as f:
        for part in parts:
            f.write(part)
PY

echo "== chunks: packages" >&2
now() { date +%s.%N; }
t0=$(now); "$PKGTOOL" create "$W/inplace-1.0" -o "$W/inplace-1.0.pkg" --quiet || die "create failed"
t1=$(now); "$PKGTOOL" create "$W/inplace-1.0" -o "$W/plain-1.0.pkg" --quiet --no-chunks || die "create --no-chunks failed"
t2=$(now)
CREATE_CHUNKS=$(echo "$t1 - $t0" | bc); CREATE_PLAIN=$(echo "$t2 - $t1" | bc)
RENAMED="renamed-inplace renamed-insert pipeline"
for name in inplace-1.1 insert-1.0 insert-1.1 $(for r in $RENAMED; do echo "$r-1.0 $r-1.1"; done); do
    "$PKGTOOL" create "$W/$name" -o "$W/$name.pkg" --quiet || die "create $name failed"
done
SITE=$W/site
"$PKGTOOL" publish "$W/inplace-1.0.pkg" "$W/insert-1.0.pkg" $(for r in $RENAMED; do echo "$W/$r-1.0.pkg"; done) --to "$SITE" --quiet \
    || die "publish 1.0 failed"

. "$(dirname "$0")/nginx.sh"
PORT=$(free_port)
start_nginx "$W/nginx" "    log_format bench '\$request_uri \$status \$bytes_sent \$body_bytes_sent \"\$http_range\"';
    access_log $W/nginx/logs/access.log bench;
    server { listen 127.0.0.1:$PORT; root $SITE; location / { } }"
trap stop_nginx EXIT
URL=http://127.0.0.1:$PORT/catalog.json
DOCS=$W/Documents
"$PKGTOOL" sync "$URL" --documents "$DOCS" $(for p in inplace insert $RENAMED; do echo "--product com.example.bench.${p//-/_}"; done) --quiet \
    || die "installing 1.0 failed"
"$PKGTOOL" publish "$W/inplace-1.1.pkg" "$W/insert-1.1.pkg" $(for r in $RENAMED; do echo "$W/$r-1.1.pkg"; done) --to "$SITE" --quiet \
    || die "publish 1.1 failed"

# Every byte nginx sent from line $1 of its log on: all headers and bodies, and bodies alone.
sent() { sleep 0.2; awk -v from="$1" 'NR > from { a += $3; b += $4 } END { printf "%.0f %.0f\n", a, b }' "$NG/logs/access.log"; }
lines() { wc -l < "$NG/logs/access.log"; }
update() {
    local product=$1 before; before=$(lines)
    local t0; t0=$(now)
    "$PKGTOOL" sync "$URL" --documents "$DOCS" --product "$product" --quiet || die "sync $product failed"
    local t1; t1=$(now)
    diff -rq "$DOCS/$product/1.1" "$W/${2}-1.1/Contents" >/dev/null || die "$product: the installed files differ"
    echo "$(sent "$before") $(echo "$t1 - $t0" | bc)"
}
read -r INPLACE_ALL INPLACE_BODY INPLACE_T < <(update com.example.bench.inplace inplace)
read -r INSERT_ALL INSERT_BODY INSERT_T < <(update com.example.bench.insert insert)
echo "   in place: $INPLACE_ALL bytes sent ($INPLACE_BODY body), $INPLACE_T s; insertion: $INSERT_ALL ($INSERT_BODY), $INSERT_T s" >&2
read -r RINPLACE_ALL RINPLACE_BODY RINPLACE_T < <(update com.example.bench.renamed_inplace renamed-inplace)
read -r RINSERT_ALL RINSERT_BODY RINSERT_T < <(update com.example.bench.renamed_insert renamed-insert)
echo "   renamed, in place: $RINPLACE_ALL bytes sent, $RINPLACE_T s; renamed, insertion: $RINSERT_ALL, $RINSERT_T s" >&2
read -r PIPE_ALL PIPE_BODY PIPE_T < <(update com.example.bench.pipeline pipeline)

# The pipeline's bound: 1.1's header and TOC, and the stored bytes of its chunks that no chunk of
# 1.0 has (read from both packages' chunk tables), times 1.5.
read -r PIPE_NEW PIPE_TOC PIPE_STORED < <("$PY" - "$W/pipeline-1.0.pkg" "$W/pipeline-1.1.pkg" <<'PY'
import base64, re, struct, sys, zlib
def chunks(path):
    with open(path, "rb") as f:
        head = f.read(28)
        size, compressed = struct.unpack(">H", head[4:6])[0], struct.unpack(">Q", head[8:16])[0]
        f.seek(size)
        toc = zlib.decompress(f.read(compressed)).decode()
    table = []
    for encoded in re.findall(r"<chunks [^>]*>([^<]*)</chunks>", toc):
        raw = base64.b64decode(encoded)
        table += [(raw[i:i + 16], struct.unpack(">I", raw[i + 20:i + 24])[0]) for i in range(0, len(raw), 24)]
    return table, size + compressed
old, _ = chunks(sys.argv[1])
new, toc = chunks(sys.argv[2])
known = {digest for digest, _ in old}
print(sum(stored for digest, stored in new if digest not in known), toc, sum(stored for _, stored in new))
PY
)
PIPE_BOUND=$(echo "1.5 * ($PIPE_NEW + $PIPE_TOC)" | bc)
echo "   pipeline: $PIPE_ALL bytes sent, $PIPE_T s; new chunks $PIPE_NEW stored bytes, header and TOC $PIPE_TOC; bound $PIPE_BOUND" >&2

"$PY" - "$INPLACE_ALL" "$INPLACE_BODY" "$INPLACE_T" "$INSERT_ALL" "$INSERT_BODY" "$INSERT_T" \
    "$(stat -c %s "$W/inplace-1.0.pkg")" "$(stat -c %s "$W/plain-1.0.pkg")" "$CREATE_CHUNKS" "$CREATE_PLAIN" \
    "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    "$RINPLACE_ALL" "$RINPLACE_BODY" "$RINPLACE_T" "$RINSERT_ALL" "$RINSERT_BODY" "$RINSERT_T" \
    "$PIPE_ALL" "$PIPE_BODY" "$PIPE_T" "$PIPE_NEW" "$PIPE_TOC" "$PIPE_STORED" "$(stat -c %s "$W/pipeline-1.1.pkg")" \
    >> "${BENCH_RESULTS:-$BENCH_DIR/RESULTS.md}" <<'PY'
import sys
ia, ib, it, sa, sb, st, chunked, plain, cc, cp, commit = sys.argv[1:12]
ra, rb, rt, na, nb, nt, pa, pb, pt, pnew, ptoc, pstored, psize = sys.argv[12:]
MIB = 1 << 20
def verdict(ok): return "met" if ok else "**not met**"
print()
print("## Chunked deltas: a change inside a 256 MiB file, renamed or not, and a pipeline of hash-named bundles")
print()
print(f"One 256 MiB compressible file (random words); nginx on loopback; every byte nginx sent for the update")
print(f"(catalog, signature look-up, header and TOC with the chunk table, chunk ranges; response headers included).")
print(f"pkgtool at {commit}; one run each.")
print()
print("| change | bytes sent (all) | of which bodies | sync s | target | verdict |")
print("|---|---:|---:|---:|---:|---|")
print(f"| 1 MiB overwritten in the middle | {int(ia):,} | {int(ib):,} | {float(it):.2f} | ≤ 2.5 MiB | {verdict(int(ia) <= 2.5 * MIB)} |")
print(f"| 1 MiB inserted at 1 MiB | {int(sa):,} | {int(sb):,} | {float(st):.2f} | ≤ 3.5 MiB | {verdict(int(sa) <= 3.5 * MIB)} |")
print(f"| 1 MiB overwritten, bundle renamed to its new hash | {int(ra):,} | {int(rb):,} | {float(rt):.2f} | ≤ 2.5 MiB | {verdict(int(ra) <= 2.5 * MIB)} |")
print(f"| 1 MiB inserted, bundle renamed to its new hash | {int(na):,} | {int(nb):,} | {float(nt):.2f} | ≤ 3.5 MiB | {verdict(int(na) <= 3.5 * MIB)} |")
print()
bound = 1.5 * (int(pnew) + int(ptoc))
print(f"Pipeline run: 20 bundles of 4 to 40 MiB named by their hash (package {int(psize):,} bytes, chunks stored in "
      f"{int(pstored):,}); two changed by small edits and so renamed. 1.1's chunks that no chunk of 1.0 has are stored in "
      f"{int(pnew):,} bytes, its header and TOC take {int(ptoc):,}: the update sent {int(pa):,} bytes ({int(pb):,} bodies) "
      f"in {float(pt):.2f} s, {int(pa) / (int(pnew) + int(ptoc)):.2f} times that (target ≤ 1.5, {bound:,.0f} bytes): {verdict(int(pa) <= bound)}.")
print()
print(f"Package of the 256 MiB file: {int(chunked):,} bytes with chunks, {int(plain):,} with `--no-chunks` "
      f"({(int(chunked) / int(plain) - 1) * 100:+.2f} %); create {float(cc):.2f} s against {float(cp):.2f} s.")
PY
stop_nginx
trap - EXIT
mv "$W" "$TRASH/chunks-$RANDOM$RANDOM"
echo "bench chunks: done" >&2
