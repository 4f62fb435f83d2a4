#!/usr/bin/env bash
# docs.sh OUT: PkgKit's DocC archive at OUT, from the debug build's modules (`swift build` first).
#
# PkgKit is one module per layer, which the `PkgKit` module re-exports (Sources/PkgKit/PkgKit.swift).
# swift-docc-plugin extracts the symbols a module declares itself, which for PkgKit are none, so
# this asks symbolgraph-extract for PkgKit's symbols with its re-exported layers' included, and
# hands them to docc with the catalog: one module page, every link checked (warnings are errors).
# It takes no package lock, so the test suite runs it while `swift test` holds one.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: docs.sh OUT.doccarchive}
root=$PWD
debug=$root/.build/debug
[ -e "$debug/Modules/PkgKit.swiftmodule" ] || { echo "docs.sh: no debug build of PkgKit in .build/debug: run swift build first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

target=$(swiftc -print-target-info | sed -n 's/.*"triple": "\(.*\)".*/\1/p' | head -1)
layers=$(sed -n 's/^@_exported import \([A-Za-z]*\).*/\1/p' Sources/PkgKit/PkgKit.swift | paste -sd, -)
[ -n "$layers" ] || { echo "docs.sh: Sources/PkgKit/PkgKit.swift re-exports no layer" >&2; exit 1; }
args=(-module-name PkgKit -I "$debug/Modules" -minimum-access-level public -output-dir "$work/symbols"
      -target "$target" "-experimental-allowed-reexported-modules=$layers")
# The C modules PkgKit and its dependencies import: this package's system libraries, then those
# the build generated beside its objects or found in a dependency's checkout.
for map in Sources/*/module.modulemap; do args+=(-Xcc "-fmodule-map-file=$root/$map"); done
for built in "$debug"/*.build; do
    name=$(basename "$built" .build)
    for map in "$built/module.modulemap" "$root"/.build/checkouts/*/Sources/"$name"/include/module.modulemap \
               "$root"/.build/checkouts/*/Sources/"$name"/module.modulemap; do
        if [ -f "$map" ]; then args+=(-Xcc "-fmodule-map-file=$map"); break; fi
    done
done
for flag in $(pkg-config --cflags-only-I libxml-2.0 2>/dev/null); do args+=(-Xcc "$flag"); done
mkdir -p "$work/symbols"
swift symbolgraph-extract "${args[@]}"

rm -rf "$out"
docc convert Sources/PkgKit/PkgKit.docc --additional-symbol-graph-dir "$work/symbols" --output-path "$out" \
    --fallback-display-name PkgKit --fallback-bundle-identifier PkgKit --warnings-as-errors
