/*
 * Files and directories: mkdir -p, fresh result directories, safe input files, which
 * mount holds a path. The writes of results are util/fsbound.h's (bounded in time).
 */
#ifndef GS_UTIL_FSUTIL_H
#define GS_UTIL_FSUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

int fs_mkdir_p(const char *path);
/* Create PARENT/NAME-YYYYmmdd-HHMMSS (or -2, -3, ... if taken); never reuses one. */
int fs_make_unique_dir(const char *parent, const char *name, char *out, size_t len);

/*
 * Open an input file (an include, a report) for reading, only if it is a regular file of at
 * most max_bytes: a FIFO, a device such as /dev/zero, a socket or a directory is refused
 * before a byte is read, and the open itself never waits on a peer (O_NONBLOCK until
 * fstat() has shown a regular file; a file system that does not answer is fsb_read's
 * to bound). oflags are added to open's (O_NOFOLLOW); *st, when not NULL, gets the
 * file's. Returns the fd, or -errno with why filled in with the reason ("is a FIFO, not
 * a regular file", "is 2.1GiB, larger than the 1MiB limit", strerror). Callers still
 * bound what they read: the file may grow after fstat().
 */
int fs_open_regular(const char *path, int oflags, uint64_t max_bytes, struct stat *st,
		    char *why, size_t whylen);

/*
 * The mount holding absolute path (lexically: symlinks are not followed, nothing is
 * asked of the file system, which may not answer) from a /proc/self/mountinfo stream:
 * its type ("nfs4") and mount point. 0, or -ENOENT when no line covers it.
 */
int fs_mount_find(FILE *mountinfo, const char *path, char *type, size_t tlen, char *mnt,
		  size_t mlen);

#endif
