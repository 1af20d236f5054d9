/* String helpers shared by every layer: trimming, splitting, bounded appending. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/strutil.h"

char *str_trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (isspace((unsigned char)s[i]))
		i++;
	memmove(s, s + i, n - i + 1);
	return s;
}

size_t str_split(char *s, char sep, char **items, size_t max)
{
	size_t n = 0;

	for (;;) {
		char *next = strchr(s, sep);

		if (next)
			*next = '\0';
		if (n >= max)
			return max + 1;
		items[n++] = str_trim(s);
		if (!next)
			return n;
		s = next + 1;
	}
}

int str_vappendf(char *buf, size_t len, size_t *off, const char *fmt, va_list ap)
{
	size_t room;
	int n;

	if (*off >= len)
		return -ENOSPC;
	room = len - *off;
	n = vsnprintf(buf + *off, room, fmt, ap);
	if (n < 0) {
		buf[*off] = '\0';
		return -EINVAL;
	}
	if ((size_t)n >= room) {
		*off = len;
		return -ENOSPC;
	}
	*off += (size_t)n;
	return 0;
}

int str_appendf(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = str_vappendf(buf, len, off, fmt, ap);
	va_end(ap);
	return ret;
}

bool str_word_in(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	if (!n)
		return false;
	for (p = strstr(list, word); p; p = strstr(p + 1, word))
		if ((p == list || isspace((unsigned char)p[-1])) &&
		    (!p[n] || isspace((unsigned char)p[n])))
			return true;
	return false;
}
