/*
 * Test-only: a scratch directory under $TMPDIR (else /tmp), made when a test starts and
 * removed whole when it ends, whatever the test left there (files, FIFOs, directories);
 * and the files a test writes there, text in one call.
 *   char dir[PATH_MAX]; test_tmpdir_make(dir, sizeof(dir), "escape"); ...;
 *   test_tmpdir_remove(dir);
 */
#ifndef GS_UTIL_TEST_TMPDIR_H
#define GS_UTIL_TEST_TMPDIR_H

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

/* mkdtemp(3)'s template: the six characters it replaces with a unique suffix. */
#define TEST_TMPDIR_UNIQUE "XXXXXX"

/*
 * Make a fresh directory $TMPDIR/gradsync-TAG-<unique> (mode 0700, /tmp without TMPDIR)
 * and write its path to dir. 0; -ENAMETOOLONG when the path does not fit in len (nothing
 * made); else mkdtemp's -errno.
 */
static inline int test_tmpdir_make(char *dir, size_t len, const char *tag)
{
	const char *base = getenv("TMPDIR");
	int n;

	if (!base || !*base)
		base = "/tmp";
	n = snprintf(dir, len, "%s/gradsync-%s-" TEST_TMPDIR_UNIQUE, base, tag);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return mkdtemp(dir) ? 0 : -errno;
}

static inline int test_tmpdir_rm_one(const char *path, const struct stat *st, int flag,
				     struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* text written to the file at path (made or emptied): 0, or -errno of the open, write or close. */
static inline int test_file_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int ret = 0;

	if (!f)
		return -errno;
	if (fputs(text, f) == EOF)
		ret = errno ? -errno : -EIO;
	if (fclose(f) && !ret)
		ret = errno ? -errno : -EIO;
	return ret;
}

/* dir and everything under it removed (depth first, links not followed); 0 or -errno. */
static inline int test_tmpdir_remove(const char *dir)
{
	return nftw(dir, test_tmpdir_rm_one, 16, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
}

#endif
