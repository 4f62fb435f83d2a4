#!/usr/bin/env bash
# libFuzzer over pkgtool's readers, rules, installer and delivery path (not part of CI).
#   bash scripts/fuzz.sh [TARGET] [SECONDS]
#   make fuzz                          # the package target, 30 minutes
#   make fuzz FUZZ_TARGET=delta FUZZ_SECONDS=600
# Targets: package (readers, rules, installer), catalog (catalog.json's parser), chunks (the TOC
# parser and chunk tables, planned against an installed version), delta (a sync against a hostile
# in-memory server whose TOC and range bodies come from the fuzzer), all (each in turn).
# Seeds are generated into build/fuzz/TARGET/seeds; the corpus grows in build/fuzz/TARGET/corpus;
# crashers land in build/fuzz/TARGET/crashers. Copy each crasher into Tests/Fixtures/fuzz/ (named
# after its target: catalog-*, chunks-*, delta-*, else the package target) so that
# FuzzRegressionTests replays it forever.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-${FUZZ_TARGET:-package}}
seconds=${2:-${FUZZ_SECONDS:-1800}}
scratch=.build-fuzz
case "$target" in
    package|catalog|chunks|delta) ;;
    all)
        for each in package catalog chunks delta; do bash "$0" "$each" "$seconds"; done
        exit 0 ;;
    *) echo "fuzz.sh: unknown target $target (package, catalog, chunks, delta, all)" >&2; exit 64 ;;
esac
work=build/fuzz/$target
mkdir -p "$work/seeds" "$work/corpus" "$work/crashers"

# -sanitize=fuzzer instruments every module for coverage and links libFuzzer; FUZZING makes
# pkgfuzz hand its main to libFuzzer's driver instead of replaying files.
swift build --scratch-path "$scratch" --product pkgfuzz \
    -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library -Xswiftc -DFUZZING -Xswiftc -use-ld=lld
fuzzer=$PWD/$scratch/debug/pkgfuzz

if [ "$target" = package ]; then
    swift build --product pkgtool
    pkgtool=.build/debug/pkgtool
    # Seeds: pkgtool's own packages in both formats, bsdtar's xar/zip/tar, a flat installer package.
    seed_src=$(mktemp -d)
    trap 'rm -rf "$seed_src"' EXIT
    cp -R Samples/chapter1 "$seed_src/c1"
    ln -s chapter1.txt "$seed_src/c1/Contents/link.txt"
    "$pkgtool" create "$seed_src/c1" -o "$work/seeds/xar.pkg" --quiet
    "$pkgtool" create "$seed_src/c1" -o "$work/seeds/stored.pkg" --compression none --quiet
    "$pkgtool" create "$seed_src/c1" -o "$work/seeds/zip.pkg" --format zip --quiet
    (cd "$seed_src/c1" && bsdtar --format xar -cf "$OLDPWD/$work/seeds/bsdtar.xar" ContentInfo.plist Contents)
    (cd "$seed_src/c1" && bsdtar --format ustar -cf "$OLDPWD/$work/seeds/tar.tar" ContentInfo.plist Contents)
    (cd "$seed_src/c1" && bsdtar --format ustar -czf "$OLDPWD/$work/seeds/tgz.tgz" ContentInfo.plist Contents)
    mkdir -p "$seed_src/flat/comp.pkg"
    echo '<installer-gui-script minSpecVersion="1"/>' > "$seed_src/flat/Distribution"
    (cd "$seed_src/c1" && find . | sort | bsdtar --format odc -n -cf - -T - | gzip -n > "$seed_src/flat/comp.pkg/Payload")
    (cd "$seed_src/flat" && bsdtar --format xar -cf "$OLDPWD/$work/seeds/flat.pkg" Distribution comp.pkg)
    kept=$(find Tests/Fixtures/fuzz -maxdepth 1 -type f ! -name 'catalog-*' ! -name 'chunks-*' ! -name 'delta-*')
else
    # The delivery targets make their own seeds (the fixture they build is theirs).
    "$fuzzer" --target="$target" --seeds="$work/seeds"
    kept=$(find Tests/Fixtures/fuzz -maxdepth 1 -type f -name "$target-*")
fi
for file in $kept; do cp "$file" "$work/seeds/"; done

# The TOC's words, for the targets whose input holds a TOC's XML.
dictionary=()
if [ "$target" = chunks ] || [ "$target" = delta ]; then
    cat > "$work/toc.dict" <<'WORDS'
"<file id=\"9\">"
"</file>"
"<name>"
"<type>file</type>"
"<type>directory</type>"
"<type>symlink</type>"
"<data>"
"<offset>"
"<length>"
"<size>"
"<encoding style=\"application/x-gzip\"/>"
"<encoding style=\"application/octet-stream\"/>"
"<archived-checksum style=\"sha1\">"
"<extracted-checksum style=\"sha1\">"
"<extracted-checksum style=\"sha256\">"
"<chunks style=\"gear64-sha256\""
" min=\"65536\""
" avg=\"262144\""
" max=\"1048576\""
" start=\"2\""
" start=\"0\""
" count=\""
"</chunks>"
"<checksum style=\"sha1\">"
"<link type=\"original\">"
"9223372036854775807"
"4294967295"
WORDS
    dictionary=(-dict=toc.dict)
fi

cd "$work"
# Swift's backtracer would take SIGABRT first, and libFuzzer leaves a handler that is already
# installed alone: without this, an oracle's abort() ends the run without saving the input.
export SWIFT_BACKTRACE=enable=no
started=$(date +%s)
set +e
"$fuzzer" --target="$target" corpus seeds \
    -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix=crashers/ -print_final_stats=1 "${dictionary[@]}" 2>&1 | tee fuzz.log
status=${PIPESTATUS[0]}
set -e
echo "fuzz.sh: target $target, $(( $(date +%s) - started )) s, corpus $(ls corpus | wc -l) inputs," \
    "crashers $(ls crashers | wc -l) (in $work/crashers), exit $status"
exit "$status"
