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

/* Append the runs of the set to buf while they fit in room; the count appended. */
static int int_runs(bool (*in)(int i, const void *ctx), const void *ctx, int n, char *buf,
		    size_t len, size_t room, size_t *off)
{
	int i, j, shown = 0;
	size_t keep;

	for (i = 0; i < n; i = j + 1) {
		j = i;
		if (!in(i, ctx))
			continue;
		while (j + 1 < n && in(j + 1, ctx))
			j++;
		keep = *off;
		if (j - i >= 2)
			str_appendf(buf, len, off, "%s%d-%d", keep ? "," : "", i, j);
		else if (j > i)
			str_appendf(buf, len, off, "%s%d,%d", keep ? "," : "", i, j);
		else
			str_appendf(buf, len, off, "%s%d", keep ? "," : "", i);
		if (*off >= room) {
			*off = keep;
			buf[keep] = '\0';
			break;
		}
		shown += j - i + 1;
	}
	return shown;
}

const char *str_int_set(bool (*in)(int i, const void *ctx), const void *ctx, int n, char *buf,
			size_t len)
{
	char tail[32];
	size_t off = 0;
	int i, total = 0, shown;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < n; i++)
		total += in(i, ctx);
	if (int_runs(in, ctx, n, buf, len, len, &off) == total)
		return buf;
	/* again, leaving room for how many more */
	snprintf(tail, sizeof(tail), " and %d more", total);
	off = 0;
	buf[0] = '\0';
	shown = int_runs(in, ctx, n, buf, len, len > strlen(tail) ? len - strlen(tail) : 0, &off);
	str_appendf(buf, len, &off, " and %d more", total - shown);
	return buf;
}
