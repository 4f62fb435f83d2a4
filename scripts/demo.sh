#!/usr/bin/env bash
# Walks through pkgtool on the sample content in Samples/, with output under build/:
# create -> validate -> inspect -> diff -> keygen -> publish -> sync (install, then an update)
# -> extract -> convert.
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

if ! command -v "$PKGTOOL" >/dev/null 2>&1; then
    echo "demo: $PKGTOOL not found; run 'make demo' (or 'make build' first)" >&2
    exit 2
fi

PKGS=build/packages
SITE=build/site
KEYS=build/keys
DOCS=build/Documents
EXTRACTED=build/Extracted
PACKS=build/asset-packs
CH1_10=$PKGS/com.example.book.chapter1-1.0.pkg
CH1_11=$PKGS/com.example.book.chapter1-1.1.pkg
CH2_10=$PKGS/com.example.book.chapter2-1.0.pkg

step "Preparing build/ (packages, a published site, keys, Documents)"
rm -rf "$PKGS" "$SITE" "$KEYS" "$DOCS" "$EXTRACTED" "$PACKS"
mkdir -p "$PKGS" "$KEYS"

step "Creating chapter1 1.0, chapter2 1.0, and chapter1 1.1 (checked against 1.0)"
"$PKGTOOL" create Samples/chapter1 -o "$CH1_10"
"$PKGTOOL" create Samples/chapter2 -o "$CH2_10"
"$PKGTOOL" create Samples/chapter1-update --previous "$CH1_10" -o "$CH1_11"

step "Validating all three packages"
"$PKGTOOL" validate "$PKGS"/*.pkg

step "Inspecting chapter1 1.1"
"$PKGTOOL" inspect "$CH1_11" --files

step "Comparing chapter1 1.0 with 1.1"
"$PKGTOOL" diff "$CH1_10" "$CH1_11"

step "Making a key pair to sign the catalog ($KEYS/demo.pem stays private; demo.pub.pem ships in the app)"
"$PKGTOOL" keygen --out "$KEYS/demo"

step "Publishing chapter1 1.0 and chapter2 1.0 into $SITE, a folder any static web server can serve"
"$PKGTOOL" publish "$CH1_10" "$CH2_10" --to "$SITE" --sign "$KEYS/demo.pem"

step "Syncing both products into $DOCS, trusting only catalogs signed with the demo key"
"$PKGTOOL" sync "$SITE" --documents "$DOCS" --product com.example.book.chapter1 --product com.example.book.chapter2 \
    --trust "$KEYS/demo.pub.pem"

step "Publishing chapter1 1.1, then an update run: only what is newer is fetched"
"$PKGTOOL" publish "$CH1_11" --to "$SITE" --sign "$KEYS/demo.pem"
"$PKGTOOL" sync "$SITE" --documents "$DOCS" --trust "$KEYS/demo.pub.pem"

step "Published site ($SITE)"
find "$SITE" | sort
cat "$SITE/catalog.json"

step "Installed tree ($DOCS)"
find "$DOCS" | sort

for record in "$DOCS"/*/ContentInfo.plist; do
    [ -e "$record" ] || continue
    step "Install record $record"
    cat "$record"
done

step "extract installs one package file the same way ($EXTRACTED)"
"$PKGTOOL" extract "$CH1_11" --documents "$EXTRACTED"

step "Converting every package to Background Assets asset packs in $PACKS (chapter1: the latest, 1.1)"
"$PKGTOOL" convert "$PKGS"/*.pkg --to background-assets --out "$PACKS"

step "Asset packs ($PACKS)"
find "$PACKS" | sort
