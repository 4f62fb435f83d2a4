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
#endif
