#ifndef PKGKIT_CSYSCALLS_SHIM_H
#define PKGKIT_CSYSCALLS_SHIM_H
/* Linux system calls that Swift's Glibc module does not import: they sit behind _GNU_SOURCE
   or are macros. Each wrapper reports failure as -1 with errno set, like the call itself. */
#ifdef __linux__
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <unistd.h>

/* Flushes the whole file system holding fd: one call instead of an fsync per file. */
static inline int CSyscalls_syncfs(int fd) { return syncfs(fd); }

/* Swaps two names atomically (renameat2 with RENAME_EXCHANGE). */
static inline int CSyscalls_exchange(int fromdir, const char *from, int todir, const char *to) {
    return renameat2(fromdir, from, todir, to, RENAME_EXCHANGE);
}

/* Fixes glibc's mmap threshold at its default (128 KiB). Left alone, glibc raises it to the size
   of each large block freed, after which big arrays come from the heap and leave holes that stay
   resident; fixed, every large block is mapped and returned to the system when freed. */
static inline int CSyscalls_fixMmapThreshold(void) { return mallopt(M_MMAP_THRESHOLD, 128 * 1024); }

/* Gives back to the system the free pages of every malloc arena (other threads' included). */
static inline int CSyscalls_releaseFreeMemory(void) { return malloc_trim(0); }

/* Copies len bytes between files inside the kernel (no copy through user space): from in at
   *inoff to out at its current offset, which advances. Returns the bytes copied (0 at the end of
   in), or -1 with errno set (EXDEV, ENOSYS, EINVAL: the caller then copies by hand). */
static inline long CSyscalls_copyFileRange(int in, long long *inoff, int out, size_t len) {
    __off64_t offset = (__off64_t)*inoff;
    ssize_t done = copy_file_range(in, &offset, out, NULL, len, 0);
    *inoff = (long long)offset;
    return (long)done;
}

/* Starts writing back a range of a file's dirty pages without waiting for it (nbytes 0: to the end):
   the disk works while the process goes on, and a later syncfs finds less to write. */
static inline int CSyscalls_startWriteback(int fd, long long offset, long long nbytes) {
    return sync_file_range(fd, (__off64_t)offset, (__off64_t)nbytes, SYNC_FILE_RANGE_WRITE);
}

/* O_TMPFILE is a macro over two flags. */
static const int CSyscalls_O_TMPFILE = O_TMPFILE;

/* Drops the pages of bytes offset ..< offset + nbytes of fd from the page cache once they are
   written out (dirty pages are left). Returns 0 or an errno value. */
static inline int CSyscalls_dropCachedRange(int fd, long long offset, long long nbytes) {
    return posix_fadvise(fd, (off_t)offset, (off_t)nbytes, POSIX_FADV_DONTNEED);
}

/* A pipe whose two ends close on exec, made at once (no other thread's child can inherit them). */
static inline int CSyscalls_pipeClosedOnExec(int ends[2]) { return pipe2(ends, O_CLOEXEC); }

/* A spawned child starts in `path` (glibc's extension, as Apple's libc has it). Declared here
   rather than through <spawn.h>: under _GNU_SOURCE that header brings in a <sys/select.h> whose
   fd_set differs from the one the other C modules see, and a module importing both fails. */
extern int posix_spawn_file_actions_addchdir_np(void *__restrict actions, const char *__restrict path);
static inline int CSyscalls_spawnChdir(void *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}
#endif
#endif
