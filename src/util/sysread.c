/*
 * Small reads from a sysfs-like tree under a root (live /sys or a test fixture). Each
 * call that may block is noted for a bounded walk (util/fsbound.h: fsb_note), a no-op
 * outside one: a caller bounds a whole walk of these reads, not each.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "util/sysread.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/fsbound.h"

static int GS_PRINTF(4, 0) vpath(char *out, size_t len, const char *root, const char *fmt, va_list ap)
{
	int n = snprintf(out, len, "%s/", root), m;

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	m = vsnprintf(out + n, len - n, fmt, ap);
	return (m < 0 || (size_t)m >= len - n) ? -ENAMETOOLONG : 0;
}

bool sys_is_live(const char *root)
{
	char real[PATH_MAX];

	fsb_note("realpath", root);
	return realpath(root, real) && !strcmp(real, "/sys");
}

static ssize_t read_bytes(const char *path, void *buf, size_t len)
{
	FILE *f;
	size_t n;

	fsb_note("read", path); /* the open and the read: one note, one call said */
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, len, f);
	if (ferror(f)) {
		int e = errno ? errno : EIO;

		fclose(f);
		return -e;
	}
	fclose(f);
	return (ssize_t)n;
}

static int GS_PRINTF(4, 0) vread_str(const char *root, char *buf, size_t len, const char *fmt, va_list ap)
{
	char path[PATH_MAX];
	ssize_t n;
	int e = vpath(path, sizeof(path), root, fmt, ap);

	buf[0] = '\0';
	if (e)
		return e;
	n = read_bytes(path, buf, len - 1);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int sys_read_str(const char *root, char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int e;

	va_start(ap, fmt);
	e = vread_str(root, buf, len, fmt, ap);
	va_end(ap);
	return e;
}

long sys_read_long(const char *root, long dflt, const char *fmt, ...)
{
	char buf[64], *end;
	va_list ap;
	long v;
	int e;

	va_start(ap, fmt);
	e = vread_str(root, buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (e)
		return dflt;
	errno = 0;
	v = strtol(buf, &end, 0);
	return (errno || end == buf) ? dflt : v;
}

bool sys_exists(const char *root, const char *fmt, ...)
{
	char path[PATH_MAX];
	struct stat st;
	va_list ap;
	int e;

	va_start(ap, fmt);
	e = vpath(path, sizeof(path), root, fmt, ap);
	va_end(ap);
	if (e)
		return false;
	fsb_note("stat", path);
	return stat(path, &st) == 0;
}

ssize_t sys_read_bin(const char *root, void *buf, size_t len, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int e;

	va_start(ap, fmt);
	e = vpath(path, sizeof(path), root, fmt, ap);
	va_end(ap);
	return e ? e : read_bytes(path, buf, len);
}

static int cmp_name(const void *a, const void *b)
{
	return strverscmp(a, b);
}

int sys_list(const char *root, bool (*keep)(const char *name), char (**out)[64],
	     const char *fmt, ...)
{
	char path[PATH_MAX], (*names)[64] = NULL, (*grown)[64];
	struct dirent *de;
	int n = 0, cap = 0, e;
	va_list ap;
	DIR *d;

	*out = NULL;
	va_start(ap, fmt);
	e = vpath(path, sizeof(path), root, fmt, ap);
	va_end(ap);
	if (e)
		return e;
	fsb_note("open", path);
	d = opendir(path);
	if (!d)
		return -errno;
	for (;;) {
		fsb_note("readdir", path);
		de = readdir(d);
		if (!de)
			break;
		if (keep ? !keep(de->d_name) : de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			grown = realloc(names, (size_t)cap * sizeof(*names));
			if (!grown) {
				free(names);
				closedir(d);
				return -ENOMEM;
			}
			names = grown;
		}
		snprintf(names[n++], sizeof(names[0]), "%s", de->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, (size_t)n, sizeof(names[0]), cmp_name);
	*out = names;
	return n;
}
