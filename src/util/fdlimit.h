/* RLIMIT_NOFILE: raise the soft limit to the hard one, and describe both for error lines. */
#ifndef GS_UTIL_FDLIMIT_H
#define GS_UTIL_FDLIMIT_H

#include <stddef.h>

/*
 * Soft RLIMIT_NOFILE up to the hard limit: rank 0 holds a socket per rank, tcp one per
 * peer and stream, shm a pidfd per peer; 1024 soft is common where far more is allowed.
 * 0, or -errno (the limit stays as it was).
 */
int fd_limit_raise(void);
/* "RLIMIT_NOFILE 256 (hard 256), 37 open" for an EMFILE hint. */
const char *fd_limit_describe(char *buf, size_t len);

#endif
