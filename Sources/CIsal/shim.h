#ifndef PKGKIT_CISAL_SHIM_H
#define PKGKIT_CISAL_SHIM_H
/* ISA-L's streaming deflate (Debian libisal-dev), for create's fast levels 1-3. PkgKit links it
   only on Linux; elsewhere those levels use libdeflate or zlib. Its size macros are arithmetic,
   which Swift does not import: the helpers below give them as values. */
#include <stdint.h>
#include <isa-l/igzip_lib.h>

/* The work buffer a level needs (0 for a level ISA-L does not have). */
static inline uint32_t CIsal_levelBufferSize(int level) {
    switch (level) {
    case 1: return ISAL_DEF_LVL1_DEFAULT;
    case 2: return ISAL_DEF_LVL2_DEFAULT;
    case 3: return ISAL_DEF_LVL3_DEFAULT;
    default: return 0;
    }
}

/* Starts (or restarts) a zlib (RFC 1950) stream at `level`, using `buffer` as its work space. */
static inline void CIsal_start(struct isal_zstream *stream, int level, uint8_t *buffer, uint32_t size) {
    isal_deflate_init(stream);
    stream->level = (uint32_t)level;
    stream->level_buf = buffer;
    stream->level_buf_size = size;
    stream->gzip_flag = IGZIP_ZLIB;
    stream->flush = NO_FLUSH;
}

/* Whether the stream has written its last byte. */
static inline int CIsal_ended(const struct isal_zstream *stream) {
    return stream->internal_state.state == ZSTATE_END;
}
#endif
