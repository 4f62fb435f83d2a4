#!/usr/bin/env bash
# Measures every deflate engine and level pkgtool links (zlib 1-9, libdeflate 1-12, ISA-L 0-3)
# on the `real` and `medium` corpora: compressed bytes and one thread's CPU time, by file size.
# Writes bench/CODECS.md, which report.py copies into RESULTS.md. Takes about 15 minutes.
#
#   bench/codecs.sh [CORPUS...]     (default: real medium)
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
WORK=$BENCH_DIR/work
PY=${PYTHON:-python3}
mkdir -p "$WORK/corpus"
cd "$WORK"
cc -O2 "$BENCH_DIR/codecs.c" -o codecs -lz -ldeflate -lisal
CODECS=()
for l in 1 2 3 4 5 6 7 8 9; do CODECS+=("zlib:$l"); done
for l in 1 2 3 4 5 6 7 8 9 10 11 12; do CODECS+=("libdeflate:$l"); done
for l in 0 1 2 3; do CODECS+=("isal:$l"); done
CORPORA=("$@")
[ ${#CORPORA[@]} -gt 0 ] || CORPORA=(real medium)
for name in "${CORPORA[@]}"; do
    if [ "$name" = real ]; then "$PY" "$BENCH_DIR/real_corpus.py" --out "$WORK/corpus" >/dev/null
    else "$PY" "$BENCH_DIR/gen_corpus.py" --out "$WORK/corpus" "$name" >/dev/null; fi
    echo "codecs: $name" >&2
    ./codecs "corpus/$name/Contents" "${CODECS[@]}" > "codecs-$name.tsv"
done
"$PY" "$BENCH_DIR/codecs_table.py" --work "$WORK" --out "$BENCH_DIR/CODECS.md" "${CORPORA[@]}"
