#ifndef PKGKIT_CZLIB_SHIM_H
#define PKGKIT_CZLIB_SHIM_H
#include <zlib.h>

/* deflateInit/inflateInit are macros over the *_ functions; Swift cannot call macros. */
static inline int CZlib_deflateInit(z_streamp strm, int level) {
    return deflateInit(strm, level);
}
/* A raw deflate stream (no zlib header or trailer), with deflateInit's window and memory. */
static inline int CZlib_deflateInitRaw(z_streamp strm, int level) {
    return deflateInit2(strm, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
}
static inline int CZlib_inflateInit(z_streamp strm) {
    return inflateInit(strm);
}
/* A gzip (RFC 1952) stream, as HTTP's Content-Encoding: gzip carries it. */
static inline int CZlib_inflateInitGzip(z_streamp strm) {
    return inflateInit2(strm, 16 + MAX_WBITS);
}
#endif
