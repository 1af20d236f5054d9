/* Text into JSON whatever its bytes (contract in jtext.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/jtext.h"

/* Length of the valid UTF-8 sequence at p (1-4), 0 if the bytes there are not one. */
static size_t utf8_seq(const unsigned char *p)
{
	uint32_t cp;
	size_t n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80) /* a NUL ends the string here too */
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

bool utf8_valid(const char *s, size_t *bad_at)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	while (*p) {
		n = utf8_seq(p);
		if (!n) {
			if (bad_at)
				*bad_at = (size_t)(p - (const unsigned char *)s);
			return false;
		}
		p += n;
	}
	return true;
}

json_t *json_text(const char *s)
{
	const unsigned char *p;
	char *out, *o;
	json_t *j;
	size_t n;

	if (!s)
		s = "";
	if (utf8_valid(s, NULL))
		return json_string(s);
	out = malloc(strlen(s) * 4 + 1); /* a stray byte grows to 4 ("\xE9") */
	if (!out)
		return NULL;
	for (p = (const unsigned char *)s, o = out; *p; p += n) {
		n = utf8_seq(p);
		if (n) {
			memcpy(o, p, n);
			o += n;
		} else {
			o += sprintf(o, "\\x%02X", *p);
			n = 1;
		}
	}
	*o = '\0';
	j = json_string(out);
	free(out);
	return j;
}
