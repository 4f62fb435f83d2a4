#ifndef PKGKIT_CARCHIVE_SHIM_H
#define PKGKIT_CARCHIVE_SHIM_H
#include <archive.h>
#include <archive_entry.h>

/* The AE_IF* macros carry a cast and do not import into Swift. */
static const unsigned int CArchive_AE_IFMT = AE_IFMT;
static const unsigned int CArchive_AE_IFREG = AE_IFREG;
static const unsigned int CArchive_AE_IFLNK = AE_IFLNK;
static const unsigned int CArchive_AE_IFSOCK = AE_IFSOCK;
static const unsigned int CArchive_AE_IFCHR = AE_IFCHR;
static const unsigned int CArchive_AE_IFBLK = AE_IFBLK;
static const unsigned int CArchive_AE_IFDIR = AE_IFDIR;
static const unsigned int CArchive_AE_IFIFO = AE_IFIFO;
#endif
