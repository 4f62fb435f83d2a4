#ifndef PKGKIT_CZLIB_SHIM_H
#define PKGKIT_CZLIB_SHIM_H
#include <zlib.h>

/* deflateInit/inflateInit are macros over the *_ functions; Swift cannot call macros. */
static inline int CZlib_deflateInit(z_streamp strm, int level) {
    return deflateInit(strm, level);
}
static inline int CZlib_inflateInit(z_streamp strm) {
    return inflateInit(strm);
}
#endif
