/* Linux cpulist strings to and from cpu_set_t. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "topo/cpulist.h"
#include "util/strutil.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_cpu(const char **p, long *out)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*out = strtol(*p, &end, 10);
	if (errno || *out >= CPU_SETSIZE)
		return -ERANGE;
	*p = end;
	return 0;
}

int cpulist_parse(const char *s, cpu_set_t *set, char *err, size_t errlen)
{
	const char *p = s;

	CPU_ZERO(set);
	while (isblank((unsigned char)*p))
		p++;
	while (*p && *p != '\n') {
		const char *item = p;
		long a, b;
		int r = parse_cpu(&p, &a);

		b = a;
		if (!r && *p == '-') {
			p++;
			r = parse_cpu(&p, &b);
		}
		if (!r && *p && *p != ',' && *p != '\n' && !isblank((unsigned char)*p))
			r = -EINVAL;
		if (r) {
			size_t n = strcspn(item, ",\n");

			snprintf(err, errlen, "'%.*s': %s", (int)n, item,
				 r == -ERANGE ? "CPU number too large"
					      : "expected a CPU number or a range A-B");
			return -EINVAL;
		}
		if (b < a) {
			snprintf(err, errlen, "'%.*s': range end below start",
				 (int)strcspn(item, ",\n"), item);
			return -EINVAL;
		}
		for (long c = a; c <= b; c++)
			CPU_SET((int)c, set);
		while (isblank((unsigned char)*p))
			p++;
		if (*p == ',') {
			p++;
			if (!isdigit((unsigned char)*p)) {
				snprintf(err, errlen, "'%s': empty element after ','", s);
				return -EINVAL;
			}
		}
	}
	return 0;
}

char *cpulist_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE; c++) {
		int e = c;

		if (!CPU_ISSET(c, set))
			continue;
		while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
			e++;
		int ret = e > c ? str_appendf(buf, len, &off, "%s%d-%d", off ? "," : "", c, e)
				: str_appendf(buf, len, &off, "%s%d", off ? "," : "", c);
		if (ret)
			break;  /* truncated: keep what fits */
		c = e;
	}
	return buf;
}
