/*
 * Test-only: capture what a call logs to stderr, to assert on the one line it writes.
 *   struct capture c; capture_begin(&c); ...call...; capture_end(&c, log, sizeof(log));
 */
#ifndef GS_UTIL_TEST_CAPTURE_H
#define GS_UTIL_TEST_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct capture {
	FILE *tmp;
	int saved; /* the real stderr */
};

static inline void capture_begin(struct capture *c)
{
	fflush(stderr);
	c->tmp = tmpfile();
	c->saved = dup(STDERR_FILENO);
	if (!c->tmp || c->saved < 0 || dup2(fileno(c->tmp), STDERR_FILENO) < 0)
		abort();
}

/* Restore stderr; log receives what was written (NUL-terminated, cut at len - 1). */
static inline void capture_end(struct capture *c, char *log, size_t len)
{
	size_t n;

	fflush(stderr);
	dup2(c->saved, STDERR_FILENO);
	close(c->saved);
	rewind(c->tmp);
	n = fread(log, 1, len - 1, c->tmp);
	log[n] = '\0';
	fclose(c->tmp);
}

#endif
