/* Raising RLIMIT_NOFILE once at start, and naming it when descriptors run out. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>

#include "util/fdlimit.h"

int fd_limit_raise(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur >= rl.rlim_max)
		return 0;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) ? -errno : 0;
}

const char *fd_limit_describe(char *buf, size_t len)
{
	struct rlimit rl = {0, 0};
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int n = -1; /* the DIR's own descriptor */

	getrlimit(RLIMIT_NOFILE, &rl);
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	snprintf(buf, len, "RLIMIT_NOFILE %llu (hard %llu), %d open",
		 (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max, n);
	return buf;
}
