/* String helpers: trimming and list splitting that keeps empty items (so they can be rejected). */
#ifndef GS_UTIL_STRUTIL_H
#define GS_UTIL_STRUTIL_H

#include <stddef.h>

/* Trim blanks in place; returns s. */
char *str_trim(char *s);
/*
 * Split s in place at sep into at most max trimmed items (empty ones kept).
 * Returns the number of items, or max + 1 when there are more.
 */
size_t str_split(char *s, char sep, char **items, size_t max);

#endif
