/* Parsing the min_busbw threshold and its size range (syntax in threshold.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/threshold.h"
#include "util/units.h"

static int bad(char *err, size_t len, const char *s, const char *why)
{
	if (err)
		snprintf(err, len, "bad threshold '%s': %s (expected 20GB/s or 80%%, "
			 "optionally '@ 64MiB..', '@ 4KiB..1MiB')", s, why);
	return -EINVAL;
}

/* A size with surrounding blanks trimmed; "" is allowed only when empty_ok. */
static int parse_bound(const char *p, size_t n, uint64_t *v, bool *empty)
{
	char buf[64];

	while (n && (*p == ' ' || *p == '\t'))
		p++, n--;
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	*empty = n == 0;
	if (!n)
		return 0;
	if (n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return units_parse_size(buf, v);
}

int threshold_parse(const char *s, struct threshold *t, char *err, size_t errlen)
{
	const char *at = strchr(s, '@');
	char val[64];
	size_t n = at ? (size_t)(at - s) : strlen(s);
	double v;

	t->abs_GBps = NAN;
	t->pct = NAN;
	t->lo = 0;
	t->hi = UINT64_MAX;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (!n || n >= sizeof(val))
		return bad(err, errlen, s, "no value");
	memcpy(val, s, n);
	val[n] = '\0';
	if (val[n - 1] == '%') {
		val[n - 1] = '\0';
		if (units_parse_double(val, &v) || !(v > 0) || v > 100)
			return bad(err, errlen, s, "a percentage is 0..100% of the bound");
		t->pct = v;
	} else {
		if (units_parse_rate(val, &v) || !(v > 0))
			return bad(err, errlen, s, "not a rate");
		t->abs_GBps = v / 1e9;
	}
	if (at) {
		const char *r = at + 1, *dots = strstr(r, "..");
		bool e1 = false, e2 = false;

		if (!dots) {
			if (parse_bound(r, strlen(r), &t->lo, &e1) || e1)
				return bad(err, errlen, s, "not a size after '@'");
			t->hi = t->lo;
		} else {
			if (parse_bound(r, (size_t)(dots - r), &t->lo, &e1) ||
			    parse_bound(dots + 2, strlen(dots + 2), &t->hi, &e2) || (e1 && e2))
				return bad(err, errlen, s, "not a size range after '@'");
			if (e1)
				t->lo = 0;
			if (e2)
				t->hi = UINT64_MAX;
			if (t->lo > t->hi)
				return bad(err, errlen, s, "the range ends before it starts");
		}
	}
	return 0;
}

bool threshold_covers(const struct threshold *t, uint64_t size)
{
	return size >= t->lo && size <= t->hi;
}

void threshold_range_text(const struct threshold *t, char *buf, size_t len)
{
	char a[32] = "", b[32] = "";

	if (t->lo == 0 && t->hi == UINT64_MAX) {
		snprintf(buf, len, "every size");
		return;
	}
	if (t->lo)
		units_fmt_size(t->lo, a, sizeof(a));
	if (t->hi != UINT64_MAX)
		units_fmt_size(t->hi, b, sizeof(b));
	if (t->lo == t->hi)
		snprintf(buf, len, "%s", a);
	else
		snprintf(buf, len, "%s..%s", a, b);
}
