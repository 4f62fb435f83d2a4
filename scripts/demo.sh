#!/usr/bin/env bash
# Walks through pkgtool on the sample content in Samples/:
# create -> validate -> inspect -> diff -> extract -> convert, with output under build/.
# Run from anywhere; `make demo` builds the release binary first.
set -euo pipefail

# PKGTOOL: the binary to demo. The default is relative to the repository
# root; a relative path given by the caller is relative to where they ran us
# (a bare name such as `pkgtool` is looked up on PATH).
if [ -n "${PKGTOOL:-}" ]; then
    case $PKGTOOL in
        /*) ;;
        */*) PKGTOOL=$PWD/$PKGTOOL ;;
    esac
fi
cd "$(dirname "$0")/.."
PKGTOOL=${PKGTOOL:-.build/release/pkgtool}

step() {
    printf '\n==> %s\n' "$*"
}

# Stops the demo (successfully) when a subcommand is not implemented yet.
require() {
    local cmd=$1
    if ! "$PKGTOOL" help "$cmd" >/dev/null 2>&1; then
        echo "pkgtool $cmd is not available yet; stopping after create"
        exit 0
    fi
}

if ! command -v "$PKGTOOL" >/dev/null 2>&1; then
    echo "demo: $PKGTOOL not found; run 'make demo' (or 'make build' first)" >&2
    exit 2
fi

PKGS=build/packages
DOCS=build/Documents
PACKS=build/asset-packs
CH1_10=$PKGS/com.example.book.chapter1-1.0.pkg
CH1_11=$PKGS/com.example.book.chapter1-1.1.pkg
CH2_10=$PKGS/com.example.book.chapter2-1.0.pkg

step "Preparing $PKGS and $DOCS"
rm -rf "$PKGS" "$DOCS" "$PACKS"
mkdir -p "$PKGS" "$DOCS"

step "Creating chapter1 1.0, chapter2 1.0, and chapter1 1.1 (checked against 1.0)"
"$PKGTOOL" create Samples/chapter1 -o "$CH1_10"
"$PKGTOOL" create Samples/chapter2 -o "$CH2_10"
"$PKGTOOL" create Samples/chapter1-update --previous "$CH1_10" -o "$CH1_11"

require validate
step "Validating all three packages"
"$PKGTOOL" validate "$PKGS"/*.pkg

require inspect
step "Inspecting chapter1 1.1"
"$PKGTOOL" inspect "$CH1_11" --files

require diff
step "Comparing chapter1 1.0 with 1.1"
"$PKGTOOL" diff "$CH1_10" "$CH1_11"

require extract
step "Installing chapter1 1.0, chapter2 1.0, then chapter1 1.1 into $DOCS"
"$PKGTOOL" extract "$CH1_10" --documents "$DOCS"
"$PKGTOOL" extract "$CH2_10" --documents "$DOCS"
"$PKGTOOL" extract "$CH1_11" --documents "$DOCS"

step "Installed tree ($DOCS)"
find "$DOCS" | sort

for record in "$DOCS"/*/ContentInfo.plist; do
    [ -e "$record" ] || continue
    step "Install record $record"
    cat "$record"
done

step "Packages ($PKGS)"
ls -l "$PKGS"

require convert
step "Converting every package to Background Assets asset packs in $PACKS (chapter1: the latest, 1.1)"
"$PKGTOOL" convert "$PKGS"/*.pkg --to background-assets --out "$PACKS"

step "Asset packs ($PACKS)"
find "$PACKS" | sort
