/* Parsing and printing of sizes, durations and rates with their units. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

#include "util/common.h"
#include "util/units.h"

struct unit {
	const char *suffix;
	double mult;
};

static const struct unit size_units[] = {
	{ "", 1 },	      { "B", 1 },
	{ "KiB", 1024.0 },    { "MiB", 1048576.0 },	      { "GiB", 1073741824.0 },
	{ "TiB", 1099511627776.0 },
	{ "K", 1024.0 },      { "M", 1048576.0 },	      { "G", 1073741824.0 },
	{ "KB", 1e3 },	      { "MB", 1e6 },		      { "GB", 1e9 },
	{ "TB", 1e12 },
};

static const struct unit duration_units[] = {
	{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 }, { "min", 60e9 },
	{ "h", 3600e9 },
};

static const struct unit rate_units[] = {
	{ "B/s", 1 },	   { "KB/s", 1e3 },	  { "MB/s", 1e6 },	 { "GB/s", 1e9 },
	{ "TB/s", 1e12 },  { "KiB/s", 1024.0 },	  { "MiB/s", 1048576.0 }, { "GiB/s", 1073741824.0 },
	{ "bps", 0.125 },  { "Kbps", 125.0 },	  { "Mbps", 125e3 },	 { "Gbps", 125e6 },
	{ "Tbps", 125e9 },
};

/* Split "1.5GiB" into a finite non-negative number and a unit looked up in units. */
static int parse_with_units(const char *s, const struct unit *units, size_t n, bool unit_required,
			    double *out)
{
	char *end;
	double v;
	size_t i;

	while (isspace((unsigned char)*s))
		s++;
	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v))
		return -EINVAL;
	while (isspace((unsigned char)*end))
		end++;
	if (!*end && unit_required)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		size_t l = strlen(units[i].suffix);

		if (strncmp(end, units[i].suffix, l) == 0) {
			const char *rest = end + l;

			while (isspace((unsigned char)*rest))
				rest++;
			if (*rest)
				continue;
			*out = v * units[i].mult;
			return 0;
		}
	}
	return -EINVAL;
}

int units_parse_size(const char *s, uint64_t *bytes)
{
	double v;
	int ret = parse_with_units(s, size_units, ARRAY_SIZE(size_units), false, &v);

	if (ret)
		return ret;
	if (v >= 18446744073709551616.0)
		return -ERANGE;
	if (v != floor(v))
		return -EINVAL; /* 1.3B is not a whole number of bytes */
	*bytes = (uint64_t)v;
	return 0;
}

int units_parse_duration(const char *s, uint64_t *ns)
{
	double v;
	int ret = parse_with_units(s, duration_units, ARRAY_SIZE(duration_units), true, &v);

	if (ret)
		return ret;
	if (v >= 18446744073709551616.0)
		return -ERANGE;
	*ns = (uint64_t)llround(v);
	return 0;
}

int units_parse_rate(const char *s, double *bytes_per_s)
{
	return parse_with_units(s, rate_units, ARRAY_SIZE(rate_units), true, bytes_per_s);
}

int units_parse_int(const char *s, long long *v)
{
	const char *p = s;
	char *end;
	int base = 10;

	/* decimal, or hexadecimal with 0x: a leading zero is not octal (seed = 010 is ten) */
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '+' || *p == '-')
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		base = 16;
	errno = 0;
	*v = strtoll(s, &end, base);
	if (end == s)
		return -EINVAL;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return -EINVAL;
	return errno ? -ERANGE : 0;
}

int units_parse_double(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (end == s)
		return -EINVAL;
	while (isspace((unsigned char)*end))
		end++;
	if (*end || !isfinite(*v))
		return -EINVAL;
	return errno ? -ERANGE : 0;
}

char *units_fmt_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const sfx[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t i = 0;

	while (i + 1 < ARRAY_SIZE(sfx) && bytes && bytes % 1024 == 0) {
		bytes /= 1024;
		i++;
	}
	snprintf(buf, len, "%llu%s", (unsigned long long)bytes, sfx[i]);
	return buf;
}

char *units_fmt_size_approx(uint64_t bytes, char *buf, size_t len)
{
	static const char *const sfx[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	size_t i = 0;

	while (i + 1 < ARRAY_SIZE(sfx) && v >= 1024) {
		v /= 1024;
		i++;
	}
	snprintf(buf, len, i ? "%.3g%s" : "%.0f%s", v, sfx[i]);
	return buf;
}

char *units_fmt_duration(uint64_t ns, char *buf, size_t len)
{
	static const struct {
		const char *sfx;
		uint64_t mult;
	} u[] = { { "h", 3600000000000ull }, { "m", 60000000000ull }, { "s", 1000000000ull },
		  { "ms", 1000000ull },	      { "us", 1000ull },	{ "ns", 1 } };
	size_t i;

	/* exact when a unit divides it (round-trips through the parser) */
	for (i = 0; i < ARRAY_SIZE(u); i++) {
		if (ns && ns % u[i].mult == 0) {
			snprintf(buf, len, "%llu%s", (unsigned long long)(ns / u[i].mult), u[i].sfx);
			return buf;
		}
	}
	if (ns < 1000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.3gus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.3gms", ns / 1e6);
	else
		snprintf(buf, len, "%.3gs", ns / 1e9);
	return buf;
}
