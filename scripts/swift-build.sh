#!/usr/bin/env bash
# swift-build.sh WHAT BINARY MINUTES -- SWIFT build ARGS...
# A quiet `swift build`: says what it builds (and how long a first build takes, only when BINARY
# does not exist yet), fetches the dependencies with their progress lines sent to
# build/logs/resolve.log (shown only if fetching fails), then runs the build, whose output (the
# compiler's errors, if any) is shown as it comes, but for one line of noise (below).
set -uo pipefail
cd "$(dirname "$0")/.."
what=$1 binary=$2 minutes=$3
shift 3
[ "${1:-}" = -- ] && shift
swift=$1
logs=${BUILD_LOGS:-build/logs}

if [ -e "$binary" ]; then
    echo "==> Building $what"
else
    echo "==> Building $what. A first build also compiles its dependencies (SwiftNIO, BoringSSL, swift-crypto...):"
    echo "    about $minutes minutes on 2 cores; later builds take seconds."
fi
bash scripts/quietly.sh "$logs/resolve.log" "$swift" package resolve || exit $?
# Every static link (--static-swift-stdlib) prints the linker's "…libFoundationEssentials.a(…):
# warning: the use of `mktemp' is dangerous, better use `mkstemp' or `mkdtemp'": it comes from
# the toolchain's static Foundation, which calls mktemp, not from pkgtool, and says nothing anyone
# building pkgtool can act on.
"$@" 2>&1 | grep --line-buffered -v -E "warning: the use of .mktemp. is dangerous"
exit "${PIPESTATUS[0]}"
