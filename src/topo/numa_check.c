/* Syntax of [numa] bind values, checked at config time without touching the machine. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>

#include "topo/numa.h"

/* "0-3,8,10-11": ascending ranges of CPU numbers. */
static int check_cpulist(const char *s, char *err, size_t errlen)
{
	const char *p = s;

	if (!*p)
		goto bad;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0 || !isdigit((unsigned char)*p))
			goto bad;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				goto bad;
			p = end;
		}
		if (a > 65535 || b > 65535)
			goto bad;
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	return 0;
bad:
	snprintf(err, errlen, "bad CPU list '%s' (expected e.g. cpus:0-3,8)", s);
	return -EINVAL;
}

int numa_bind_check(const char *value, char *err, size_t errlen)
{
	static const char *const plain[] = { "none", "gpu", "nic", "remote", "interleave" };
	size_t i;

	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (strcmp(value, plain[i]) == 0)
			return 0;
	if (strncmp(value, "node:", 5) == 0) {
		char *end;
		long n = strtol(value + 5, &end, 10);

		if (end != value + 5 && !*end && n >= 0 && n < 1024 && isdigit((unsigned char)value[5]))
			return 0;
		snprintf(err, errlen, "bad NUMA node in '%s' (expected node:N, N >= 0)", value);
		return -EINVAL;
	}
	if (strncmp(value, "cpus:", 5) == 0)
		return check_cpulist(value + 5, err, errlen);
	snprintf(err, errlen,
		 "unknown binding '%s' (expected none, gpu, nic, remote, interleave, node:N or cpus:LIST)",
		 value);
	return -EINVAL;
}
