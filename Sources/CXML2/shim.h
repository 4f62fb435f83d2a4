#ifndef PKGKIT_CXML2_SHIM_H
#define PKGKIT_CXML2_SHIM_H
#include <libxml/xmlversion.h>
/* Debian's libxml2 is built with ICU; its headers would then pull in a second copy of ICU's
   declarations that clash with Foundation's. pkgtool never touches the ICU converters. */
#undef LIBXML_ICU_ENABLED
#include <libxml/xmlwriter.h>
#include <libxml/xmlreader.h>
#include <libxml/xmlIO.h>
#include <libxml/parser.h>

/* xmlFree is a global function pointer: Swift 6 sees it as shared mutable state. libxml2 sets it
   once, before any parse, so calling through it is safe. */
static inline void CXML2_free(void *pointer) { xmlFree(pointer); }
#endif
