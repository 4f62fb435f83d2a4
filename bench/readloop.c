/* readloop: libarchive baseline for `pkgtool validate`.
 * Reads every entry of the archive argv[1] in full, discarding the data
 * (libarchive verifies the xar checksums while reading). Exit 1 on any
 * result below ARCHIVE_OK (warnings included).
 * Guard: libarchive 3.6.2's xar reader can return ARCHIVE_OK with 0 bytes
 * forever when a zlib stream ends before the declared length; fail after
 * MAX_EMPTY such calls in a row. */
#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>

#define MAX_EMPTY 1000

static int fail(struct archive *a, const char *what, const char *path) {
    fprintf(stderr, "readloop: %s%s%s: %s\n", what, path ? " " : "", path ? path : "",
            archive_error_string(a) ? archive_error_string(a) : "(no message)");
    return 1;
}

int main(int argc, char **argv) {
    struct archive *a;
    struct archive_entry *e;
    const void *buf;
    size_t size;
    la_int64_t off, entries = 0, bytes = 0;
    int r, empty;

    if (argc != 2) { fprintf(stderr, "usage: readloop ARCHIVE\n"); return 2; }
    a = archive_read_new();
    archive_read_support_format_all(a);
    archive_read_support_filter_all(a);
    if (archive_read_open_filename(a, argv[1], 1 << 20) != ARCHIVE_OK)
        return fail(a, "open", argv[1]);
    while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
        entries++;
        for (empty = 0;;) {
            r = archive_read_data_block(a, &buf, &size, &off);
            if (r == ARCHIVE_EOF) break;
            if (r < ARCHIVE_OK) return fail(a, "read", archive_entry_pathname(e));
            bytes += (la_int64_t)size;
            if (size != 0) empty = 0;
            else if (++empty >= MAX_EMPTY) {
                fprintf(stderr, "readloop: read %s: no progress after %d empty reads "
                        "(truncated stream?)\n", archive_entry_pathname(e), MAX_EMPTY);
                return 1;
            }
        }
    }
    if (r != ARCHIVE_EOF) return fail(a, "header", NULL);
    if (archive_read_free(a) != ARCHIVE_OK) return 1;
    fprintf(stderr, "readloop: %lld entries, %lld bytes\n", (long long)entries, (long long)bytes);
    return 0;
}
