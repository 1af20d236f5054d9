/*
 * String helpers: trimming, list splitting that keeps empty items (so they can be rejected),
 * and bounded appending for text built piece by piece.
 */
#ifndef GS_UTIL_STRUTIL_H
#define GS_UTIL_STRUTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/common.h"

/* Whether word (not empty) is one of the blank-separated words of list. */
bool str_word_in(const char *list, const char *word);
/* Trim blanks in place; returns s. */
char *str_trim(char *s);
/*
 * Split s in place at sep into at most max trimmed items (empty ones kept).
 * Returns the number of items, or max + 1 when there are more.
 */
size_t str_split(char *s, char sep, char **items, size_t max);

/*
 * Append printf output at buf + *off, never writing past buf[len - 1]; buf stays
 * NUL-terminated. snprintf's return is the length it wanted, not what it wrote: adding
 * it to an offset unchecked walks past the buffer. Here *off only ever grows up to
 * len - 1 plus one "truncated" step: on truncation *off becomes len, so every later
 * append is a no-op and str_truncated() tells the caller. Returns 0, or -ENOSPC when
 * the text did not fit (what fitted is kept).
 */
GS_PRINTF(4, 5)
int str_appendf(char *buf, size_t len, size_t *off, const char *fmt, ...);
GS_PRINTF(4, 0)
int str_vappendf(char *buf, size_t len, size_t *off, const char *fmt, va_list ap);
/* True when an append into a buffer of len bytes at *off was cut short. */
static inline bool str_truncated(size_t len, size_t off)
{
	return off >= len;
}

/*
 * The members of a set of 0..n-1 (those i for which in(i, ctx)) as text, "2,3,7-12":
 * runs of three or more as a range. When buf cannot hold them all, the list ends at a
 * member, " and N more" after it, never in the middle. "" for none; returns buf.
 */
const char *str_int_set(bool (*in)(int i, const void *ctx), const void *ctx, int n, char *buf,
			size_t len);

#endif
