#!/usr/bin/env bash
# man-page.sh GENERATE-MANUAL BINARY OUT
# Writes pkgtool's man page to OUT: swift-argument-parser's generate-manual reads every command's
# help from BINARY, then the generic EXIT STATUS it writes (mdoc's `.Ex -std`: ">0 if an error
# occurs") is replaced by pkgtool's statuses, followed by an EXAMPLES section (both in
# scripts/man/).
set -euo pipefail
cd "$(dirname "$0")/.."
tool=$1 binary=$2 out=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$tool" "$binary" --output-directory "$work"
mkdir -p "$(dirname "$out")"
awk -v statuses=scripts/man/exit-status.mdoc -v examples=scripts/man/examples.mdoc '
    /^\.Ex -std/ {
        while ((getline line < statuses) > 0) print line
        while ((getline line < examples) > 0) print line
        next
    }
    { print }
' "$work/pkgtool.1" > "$work/finished.1"
grep -q '^\.Sh EXAMPLES' "$work/finished.1" || { echo "man-page: the generated page has no .Ex -std to replace" >&2; exit 1; }
mv "$work/finished.1" "$out"
