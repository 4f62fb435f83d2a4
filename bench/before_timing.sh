# Sourced by run.sh and sync.sh (after WORK is set): what the machine must be spared before a
# timed run, so that work done earlier does not weigh on it.
#
# Removed files. ext4 without a journal (this VM's root) passes over inodes freed in the last five
# minutes whenever it creates a file, so removing an earlier run's 100,000 files right before a
# timed run makes that run, and the other side's, pay seconds for the removal (bench/README.md).
# Outputs are therefore moved into TRASH (a rename frees nothing), never removed by the script
# that timed them: the next script to time anything empties TRASH first and then waits six
# minutes, and `make bench` empties it once the last timing is done.
#
# A full page cache. Once this VM's memory is full of cached pages, every page a command writes
# must first be reclaimed, and writing costs both sides up to twice the system time, more with
# every run (medium extract: 0.8 s, then 1.0, 1.25, 1.47 s). Each series of runs therefore starts
# from an emptied page cache where the system lets us empty it (root); its warm-up run reads the
# inputs back in.
TRASH=$WORK/trash
mkdir -p "$TRASH"

# Empties TRASH before the first timed run; waits out the ext4 pass when there was anything in it.
empty_trash_before_timing() {
    [ -n "$(ls -A "$TRASH" 2>/dev/null | head -n 1)" ] || return 0
    echo "bench: removing what an earlier benchmark left in $TRASH, then waiting 6 minutes before timing" >&2
    rm -rf "$TRASH"; mkdir -p "$TRASH"; sync; sleep 360
}

# Writes dirty pages out and empties the page cache (a no-op without the right to).
PAGE_CACHE=kept
[ -w /proc/sys/vm/drop_caches ] && PAGE_CACHE=dropped
empty_page_cache() {
    sync
    [ "$PAGE_CACHE" = dropped ] && echo 3 > /proc/sys/vm/drop_caches
    return 0
}
