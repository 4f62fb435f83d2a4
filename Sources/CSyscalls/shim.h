#ifndef PKGKIT_CSYSCALLS_SHIM_H
#define PKGKIT_CSYSCALLS_SHIM_H
/* Linux system calls that Swift's Glibc module does not import: they sit behind _GNU_SOURCE
   or are macros. Each wrapper reports failure as -1 with errno set, like the call itself. */
#ifdef __linux__
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

/* Flushes the whole file system holding fd: one call instead of an fsync per file. */
static inline int CSyscalls_syncfs(int fd) { return syncfs(fd); }

/* Swaps two names atomically (renameat2 with RENAME_EXCHANGE). */
static inline int CSyscalls_exchange(int fromdir, const char *from, int todir, const char *to) {
    return renameat2(fromdir, from, todir, to, RENAME_EXCHANGE);
}

/* O_TMPFILE is a macro over two flags. */
static const int CSyscalls_O_TMPFILE = O_TMPFILE;
#endif
#endif
