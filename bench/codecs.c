/* Measures the deflate codecs pkgtool links on a folder: for each codec and level, the bytes
   every file compresses to (a file that does not shrink counts as stored, as create's `auto`
   stores it) and the CPU time spent compressing, by file size. One thread; each file is read
   once into memory and compressed by every codec in turn, so the page cache plays no part.

     codecs DIR CODEC:LEVEL...        CODEC: zlib (1-9), libdeflate (1-12), isal (0-3)

   Prints one TSV line per codec and size class: codec level class files raw stored cpu_s.
   ISA-L is fed in 1 MiB pieces, as create feeds its streaming encoders. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include <libdeflate.h>
#include <isa-l/igzip_lib.h>

enum { ZLIB, LIBDEFLATE, ISAL };
#define MAXC 64
#define NCLASS 5
static const char *class_name[NCLASS] = {"<64K", "64K-1M", "1M-4M", "4M-16M", ">=16M"};
static const long class_limit[NCLASS] = {64L << 10, 1L << 20, 4L << 20, 16L << 20, -1};

struct codec {
    int kind, level;
    struct libdeflate_compressor *ld;
    unsigned char *isal_buf;
    unsigned isal_size;
    double cpu[NCLASS];
    long long raw[NCLASS], out[NCLASS], files[NCLASS];
};

static struct codec codecs[MAXC];
static int ncodecs;
static unsigned char *outbuf;
static size_t outcap;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static size_t run(struct codec *c, const unsigned char *in, size_t n) {
    if (c->kind == LIBDEFLATE)
        return libdeflate_zlib_compress(c->ld, in, n, outbuf, outcap);
    if (c->kind == ZLIB) {
        z_stream s;
        memset(&s, 0, sizeof s);
        deflateInit(&s, c->level);
        s.next_in = (unsigned char *)in;
        s.avail_in = n;
        s.next_out = outbuf;
        s.avail_out = outcap;
        deflate(&s, Z_FINISH);
        size_t size = s.total_out;
        deflateEnd(&s);
        return size;
    }
    struct isal_zstream s;
    isal_deflate_init(&s);
    s.level = c->level;
    s.level_buf = c->isal_buf;
    s.level_buf_size = c->isal_size;
    s.gzip_flag = IGZIP_ZLIB;
    s.next_out = outbuf;
    s.avail_out = outcap;
    size_t done = 0;
    do {
        size_t piece = n - done < (1 << 20) ? n - done : (1 << 20);
        s.next_in = (unsigned char *)in + done;
        s.avail_in = piece;
        done += piece;
        s.end_of_stream = done == n;
        while (s.avail_in > 0 || (s.end_of_stream && s.internal_state.state != ZSTATE_END))
            if (isal_deflate(&s) != COMP_OK) { fprintf(stderr, "isal failed\n"); exit(1); }
    } while (done < n);
    return s.total_out;
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)ftw;
    if (type != FTW_F || st->st_size == 0) return 0;
    size_t n = st->st_size;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char *in = malloc(n);
    if (fread(in, 1, n, f) != n) { fclose(f); free(in); return 0; }
    fclose(f);
    if (outcap < n + n / 8 + 65536) { outcap = n + n / 8 + 65536; outbuf = realloc(outbuf, outcap); }
    int k = 0;
    while (class_limit[k] >= 0 && (long)n >= class_limit[k]) k++;
    for (int i = 0; i < ncodecs; i++) {
        double t0 = now();
        size_t size = run(&codecs[i], in, n);
        codecs[i].cpu[k] += now() - t0;
        if (size == 0 || size > n) size = n;
        codecs[i].raw[k] += n;
        codecs[i].out[k] += size;
        codecs[i].files[k]++;
    }
    free(in);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: codecs DIR CODEC:LEVEL...\n"); return 2; }
    static const unsigned isal_sizes[] = {ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT, ISAL_DEF_LVL2_DEFAULT, ISAL_DEF_LVL3_DEFAULT};
    for (int i = 2; i < argc && ncodecs < MAXC; i++) {
        struct codec *c = &codecs[ncodecs++];
        char name[32];
        if (sscanf(argv[i], "%31[^:]:%d", name, &c->level) != 2) { fprintf(stderr, "bad codec %s\n", argv[i]); return 2; }
        if (!strcmp(name, "zlib") && c->level >= 1 && c->level <= 9) c->kind = ZLIB;
        else if (!strcmp(name, "libdeflate") && (c->ld = libdeflate_alloc_compressor(c->level))) c->kind = LIBDEFLATE;
        else if (!strcmp(name, "isal") && c->level >= 0 && c->level <= 3) {
            c->kind = ISAL;
            c->isal_size = isal_sizes[c->level];
            c->isal_buf = malloc(c->isal_size ? c->isal_size : 1);
        } else { fprintf(stderr, "bad codec %s\n", argv[i]); return 2; }
    }
    if (nftw(argv[1], visit, 32, FTW_PHYS) != 0) { perror(argv[1]); return 1; }
    static const char *kind_name[] = {"zlib", "libdeflate", "isal"};
    for (int i = 0; i < ncodecs; i++)
        for (int k = 0; k < NCLASS; k++)
            if (codecs[i].files[k])
                printf("%s\t%d\t%s\t%lld\t%lld\t%lld\t%.3f\n", kind_name[codecs[i].kind], codecs[i].level, class_name[k],
                       codecs[i].files[k], codecs[i].raw[k], codecs[i].out[k], codecs[i].cpu[k]);
    return 0;
}
