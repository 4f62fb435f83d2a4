#!/usr/bin/env bash
# libFuzzer over pkgtool's readers and rules (not part of CI).
#   make fuzz                    # 30 minutes
#   FUZZ_SECONDS=60 make fuzz    # shorter
# Seeds are generated into build/fuzz/seeds; new crashers land in build/fuzz/crashers.
# Copy each crasher into Tests/Fixtures/fuzz/ so FuzzRegressionTests replays it forever.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-1800}
scratch=.build-fuzz
work=build/fuzz
mkdir -p "$work/seeds" "$work/corpus" "$work/crashers"

swift build --scratch-path "$scratch" --product pkgfuzz \
    -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library -Xswiftc -DFUZZING -Xswiftc -use-ld=lld
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
[ -d Tests/Fixtures/fuzz ] && cp Tests/Fixtures/fuzz/* "$work/seeds/" 2>/dev/null || true

cd "$work"
"../../$scratch/debug/pkgfuzz" corpus seeds \
    -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=1024 \
    -artifact_prefix=crashers/ -print_final_stats=1
