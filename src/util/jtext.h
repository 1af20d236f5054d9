/*
 * Text into JSON whatever its bytes: jansson refuses a string that is not UTF-8 (it
 * returns NULL), and a NULL member used to cost the whole report.json. A description,
 * path or environment value in Latin-1 is written with each stray byte as "\xE9".
 */
#ifndef GS_UTIL_JTEXT_H
#define GS_UTIL_JTEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Whether s is valid UTF-8 (no overlong forms, no surrogates, at most U+10FFFF); when it
 * is not and bad_at is given, *bad_at is the offset of the first byte that is not. */
bool utf8_valid(const char *s, size_t *bad_at);
/* A JSON string of s ("" for NULL), its invalid bytes written as \xNN; NULL on ENOMEM. */
json_t *json_text(const char *s);

#endif
