#ifndef PKGKIT_CDEFLATE_SHIM_H
#define PKGKIT_CDEFLATE_SHIM_H
/* libdeflate: whole-buffer DEFLATE, zlib and gzip (Debian libdeflate-dev). PkgKit links it
   only where it is available (Linux); elsewhere its zlib paths do the same work. */
#include <libdeflate.h>
#endif
