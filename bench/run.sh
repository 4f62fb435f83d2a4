#!/usr/bin/env bash
# Benchmark pkgtool against libarchive (bsdtar / a libarchive read loop).
#
#   bench/run.sh [CORPUS...]        corpora: small medium real many large huge
#                                   (default: $BENCH_SIZES, else "small medium real many large huge")
#                                   real: /usr/share copied (real_corpus.py), create only
# Environment:
#   PKGTOOL        pkgtool binary (default: <repo>/.build/release/pkgtool)
#   BENCH_RUNS     timed repetitions per command, median reported (default 3)
#   BENCH_SIZES    corpora when none are given as arguments
#   BENCH_TIMEOUT  seconds before a single command is killed (default 1800)
#
# Work files go to bench/work/ (gitignored); results to bench/RESULTS.md.
# A pkgtool command that fails is recorded as n/a; the run goes on.
set -uo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$BENCH_DIR/.." && pwd -P)
WORK=$BENCH_DIR/work
LOGS=$WORK/logs
RUNS=${BENCH_RUNS:-3}
TIMEOUT=${BENCH_TIMEOUT:-1800}
PY=${PYTHON:-python3}

die() { echo "bench: $*" >&2; exit 2; }

if [ $# -gt 0 ]; then
    SIZES=("$@")
else
    read -r -a SIZES <<< "${BENCH_SIZES:-small medium real many large huge}"
fi
[ ${#SIZES[@]} -gt 0 ] || die "no corpus given"
for s in "${SIZES[@]}"; do
    case $s in small|medium|real|many|large|huge) ;; *) die "unknown corpus '$s' (small medium real many large huge)";; esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive integer"
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "BENCH_TIMEOUT must be a positive integer"

# pkgtool: absolute; or relative to the current folder if it exists there;
# or relative to the repository root; a bare name is looked up in PATH.
PKGTOOL=${PKGTOOL:-.build/release/pkgtool}
case $PKGTOOL in
    /*) ;;
    */*) if [ -e "$PKGTOOL" ]; then PKGTOOL=$(cd "$(dirname "$PKGTOOL")" && pwd -P)/$(basename "$PKGTOOL")
         else PKGTOOL=$ROOT/$PKGTOOL; fi ;;
    *) PKGTOOL=$(command -v "$PKGTOOL" || echo "$ROOT/$PKGTOOL") ;;
esac
[ -x "$PKGTOOL" ] || echo "bench: warning: $PKGTOOL not found or not executable; pkgtool results will be n/a" >&2

for t in bsdtar cc pkg-config "$PY"; do
    command -v "$t" >/dev/null || die "$t is required"
done

mkdir -p "$WORK" "$LOGS"
cd "$WORK" || die "cannot enter $WORK"

# The libarchive read loop (validate baseline).
if [ ! -x readloop ] || [ "$BENCH_DIR/readloop.c" -nt readloop ]; then
    # shellcheck disable=SC2046
    cc -O2 "$BENCH_DIR/readloop.c" -o readloop $(pkg-config --cflags --libs libarchive) \
        || die "cannot compile readloop.c (libarchive development files needed)"
fi

RESULTS=$WORK/results.tsv     # corpus op side run wall_s maxrss_kb rc
SIZESF=$WORK/sizes.tsv        # corpus side bytes
NOTES=$WORK/notes.tsv         # corpus note
: > "$RESULTS"; : > "$SIZESF"; : > "$NOTES"
rm -f "$LOGS"/*.log
# Extract outputs are moved into the shared trash, emptied before timing starts (before_timing.sh).
. "$BENCH_DIR/before_timing.sh"
empty_trash_before_timing

# Memory floor of the wrapper: Linux carries the spawning Python's peak RSS
# into its child, so ru_maxrss never reads below this.
read -r _ FLOOR_KB _ < <("$PY" -S -I "$BENCH_DIR/timeit.py" -- true)

# run_one CORPUS OP SIDE RUN PREP CMD... : PREP (untimed), sync, then time CMD.
run_one() {
    local corpus=$1 op=$2 side=$3 run=$4 prep=$5; shift 5
    local log=$LOGS/$corpus-$op-$side.log wall rss rc
    $prep
    sync
    printf '== run %s: %s\n' "$run" "$*" >> "$log"
    read -r wall rss rc < <("$PY" -S -I "$BENCH_DIR/timeit.py" --timeout "$TIMEOUT" --stderr "$log" -- "$@")
    [ -n "${rc:-}" ] || { wall=0; rss=0; rc=125; }
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$corpus" "$op" "$side" "$run" "$wall" "$rss" "$rc" >> "$RESULTS"
    if [ "$rc" != 0 ]; then
        printf '   %-8s %-8s %-8s run %s: exit %s (see %s)\n' "$corpus" "$op" "$side" "$run" "$rc" "$log" >&2
    else
        printf '   %-8s %-8s %-8s run %s: %8.3f s %8d KB\n' "$corpus" "$op" "$side" "$run" "$wall" "$rss" >&2
    fi
    return "$rc"
}

# pair CORPUS OP : one warm-up run (run 0) then RUNS timed runs of each side,
# interleaved in ABBA order: pkgtool first in even runs, the baseline first in
# odd ones, so that neither side always runs on what the other left behind
# (page cache, dirty pages being written back, CPU frequency).
# Uses P_CMD/P_PREP (pkgtool) and B_CMD/B_PREP (baseline). A side that fails
# is not run again. The series starts from an empty page cache (before_timing.sh).
pair() {
    local corpus=$1 op=$2 run side p_ok=1 b_ok=1
    empty_page_cache
    for ((run = 0; run <= RUNS; run++)); do
        for side in $( ((run % 2 == 0)) && echo "p b" || echo "b p"); do
            if [ "$side" = p ] && [ $p_ok = 1 ]; then run_one "$corpus" "$op" pkgtool "$run" "$P_PREP" "${P_CMD[@]}" || p_ok=0; fi
            if [ "$side" = b ] && [ $b_ok = 1 ]; then run_one "$corpus" "$op" bsdtar "$run" "$B_PREP" "${B_CMD[@]}" || b_ok=0; fi
        done
    done
}

noprep() { :; }

for name in "${SIZES[@]}"; do
    echo "== corpus $name" >&2
    CORPUS=$WORK/corpus/$name
    if [ "$name" = real ]; then
        "$PY" "$BENCH_DIR/real_corpus.py" --out "$WORK/corpus" >/dev/null || die "corpus real: copy failed"
    else
        "$PY" "$BENCH_DIR/gen_corpus.py" --out "$WORK/corpus" "$name" >/dev/null || die "corpus $name: generation failed"
    fi

    PKG=$WORK/$name.pkg
    BXAR=$WORK/$name-bsdtar.xar
    XP=$WORK/extract-$name-pkgtool
    XB=$WORK/extract-$name-bsdtar

    rm -f "$WORK/$name-bsdtar.pkg"

    # create
    prep_create_p() { rm -f "$PKG"; }
    prep_create_b() { rm -f "$BXAR"; }
    P_PREP=prep_create_p; P_CMD=("$PKGTOOL" create "$CORPUS" -o "$PKG")
    B_PREP=prep_create_b; B_CMD=(bsdtar --format xar -cf "$BXAR" -C "$CORPUS" ContentInfo.plist Contents)
    pair "$name" create
    [ -f "$PKG" ] && printf '%s\tpkgtool\t%s\n' "$name" "$(stat -c %s "$PKG")" >> "$SIZESF"
    [ -f "$BXAR" ] && printf '%s\tbsdtar\t%s\n' "$name" "$(stat -c %s "$BXAR")" >> "$SIZESF"
    # The real-data corpus measures create's package size and time; reading it back is what the
    # generated corpora measure.
    [ "$name" = real ] && continue

    # The read side uses pkgtool's package; without one, a copy of bsdtar's.
    READPKG=$PKG
    if ! awk -F'\t' -v c="$name" '$1 == c && $2 == "create" && $3 == "pkgtool" && $4 > 0 && $7 == 0 { ok = 1 } END { exit !ok }' "$RESULTS" \
        || [ ! -f "$PKG" ]; then
        rm -f "$PKG"
        READPKG=$WORK/$name-bsdtar.pkg
        if [ -f "$BXAR" ]; then
            cp "$BXAR" "$READPKG"
            printf '%s\tpkgtool create unavailable: validate/extract/inspect ran on the bsdtar-made package (%s)\n' \
                "$name" "$(basename "$READPKG")" >> "$NOTES"
        else
            printf '%s\tno package could be made: validate/extract/inspect skipped\n' "$name" >> "$NOTES"
            continue
        fi
    fi

    # validate
    P_PREP=noprep; P_CMD=("$PKGTOOL" validate "$READPKG")
    B_PREP=noprep; B_CMD=("$WORK/readloop" "$READPKG")
    pair "$name" validate

    # extract (a fresh, empty folder each run). The last run's folder is moved aside, not
    # removed: ext4 skips inodes freed in the last minute or more when it allocates new ones
    # (fs/ext4/ialloc.c, recently_deleted), so removing 100,000 files just before a timed run
    # makes that run pay for the removal. Everything is removed at the end of the benchmark.
    # The 2 GiB package's outputs are a few files: they are removed at once (run_one syncs after
    # the prep), so that eight copies of 2 GiB do not pile up.
    aside() { if [ "$name" = huge ]; then rm -rf "$1"; else mv "$1" "$TRASH/$2-$RANDOM$RANDOM"; fi; }
    prep_extract_p() { [ ! -e "$XP" ] || aside "$XP" "$name-pkgtool"; mkdir "$XP"; }
    prep_extract_b() { [ ! -e "$XB" ] || aside "$XB" "$name-bsdtar"; }
    P_PREP=prep_extract_p; P_CMD=("$PKGTOOL" extract "$READPKG" --documents "$XP")
    B_PREP=prep_extract_b; B_CMD=(sh -c 'mkdir "$1" && bsdtar -xf "$2" -C "$1" && sync' sh "$XB" "$READPKG")
    pair "$name" extract
    aside "$XP" "$name-pkgtool-last"; aside "$XB" "$name-bsdtar-last"

    # inspect
    P_PREP=noprep; P_CMD=("$PKGTOOL" inspect "$READPKG")
    B_PREP=noprep; B_CMD=(bsdtar -tf "$READPKG")
    pair "$name" inspect
done

# Environment for the report header.
export BENCH_DATE BENCH_NPROC BENCH_CPU BENCH_BSDTAR BENCH_PKGTOOL BENCH_PKGTOOL_VERSION \
       BENCH_GIT BENCH_KERNEL BENCH_FS BENCH_RUNS_N BENCH_FLOOR_KB BENCH_TIMEOUT_S BENCH_PAGE_CACHE
BENCH_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
BENCH_NPROC=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)
BENCH_CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
[ -n "$BENCH_CPU" ] || BENCH_CPU=$(uname -m)
BENCH_BSDTAR=$(bsdtar --version 2>&1 | head -n 1)
BENCH_PKGTOOL=$PKGTOOL
BENCH_PKGTOOL_VERSION=$("$PKGTOOL" --version 2>/dev/null | head -n 1)
BENCH_GIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "no commit")
if [ -n "$(git -C "$ROOT" status --porcelain 2>/dev/null | head -n 1)" ]; then BENCH_GIT="$BENCH_GIT (dirty)"; fi
BENCH_KERNEL=$(uname -sr)
BENCH_FS=$(df -T "$WORK" 2>/dev/null | awk 'NR == 2 { print $2 }')
BENCH_RUNS_N=$RUNS
BENCH_FLOOR_KB=$FLOOR_KB
BENCH_TIMEOUT_S=$TIMEOUT
BENCH_PAGE_CACHE=$PAGE_CACHE

"$PY" "$BENCH_DIR/report.py" --work "$WORK" --out "$BENCH_DIR/RESULTS.md" "${SIZES[@]}"
