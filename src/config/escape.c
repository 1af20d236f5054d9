/*
 * The '$' escapes of the experiment language: splitting a [matrix] line at the separators
 * no escape hides, un-escaping its pieces, and writing values back escaped (escape.h).
 */
#include <errno.h>
#include <string.h>
#include <ctype.h>

#include "config/escape.h"
#include "util/strutil.h"

bool esc_char(char c)
{
	return c && strchr("$;#,", c);
}

size_t esc_split(char *s, char sep, char **items, size_t max)
{
	size_t n = 0;

	for (;;) {
		char *p = s;
		bool last;

		/* the separator that ends this item: the first no '$' escapes */
		while (*p && *p != sep)
			p += p[0] == '$' && esc_char(p[1]) ? 2 : 1;
		if (n >= max)
			return max + 1;
		last = !*p;
		*p = '\0';
		items[n++] = str_trim(s);
		if (last)
			return n;
		s = p + 1;
	}
}

void esc_unescape(char *s)
{
	char *out = s;

	while (*s) {
		if (s[0] == '$' && esc_char(s[1]))
			s++;
		*out++ = *s++;
	}
	*out = '\0';
}

int esc_quote(const char *v, bool item, char *out, size_t len)
{
	size_t n = 0;
	const char *p;
	int ret = 0;

	for (p = v; *p && !ret; p++) {
		bool comment = (*p == ';' || *p == '#') && (p == v || isspace((unsigned char)p[-1]));

		if (*p == '$' && (p[1] == '{' || esc_char(p[1]) || (item && !p[1])))
			ret = str_appendf(out, len, &n, "$$");
		else if (comment || (item && (*p == ',' || *p == ';')))
			ret = str_appendf(out, len, &n, "$%c", *p);
		else
			ret = str_appendf(out, len, &n, "%c", *p);
	}
	if (!*v)
		out[0] = '\0';
	return ret;
}
