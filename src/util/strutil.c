/* String helpers shared by the config layer and the command line. */
#include <ctype.h>
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
