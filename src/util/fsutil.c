/* Files and directories: never-overwritten run directories, safe input files, mounts. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "util/units.h"

int fs_mkdir_p(const char *path)
{
	char buf[4096];
	size_t i, n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		buf[i] = path[i];
	}
	return 0;
}

int fs_make_unique_dir(const char *parent, const char *name, char *out, size_t len)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	int i, ret;

	ret = fs_mkdir_p(parent);
	if (ret)
		return ret;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	for (i = 1; i < 1000; i++) {
		int n = i == 1 ? snprintf(out, len, "%s/%s-%s", parent, name, stamp)
			       : snprintf(out, len, "%s/%s-%s-%d", parent, name, stamp, i);

		if (n >= (int)len)
			return -ENAMETOOLONG;
		if (mkdir(out, 0755) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static const char *fs_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

int fs_open_regular(const char *path, int oflags, uint64_t max_bytes, struct stat *stp,
		    char *why, size_t whylen)
{
	struct stat st;
	int fd, ret, fl;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | oflags);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, whylen, "%s", strerror(errno));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(why, whylen, "fstat: %s", strerror(errno));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		snprintf(why, whylen, "is %s, not a regular file", fs_kind(st.st_mode));
		goto out_close;
	}
	if ((uint64_t)st.st_size > max_bytes) {
		char a[32], b[32];

		ret = -EFBIG;
		snprintf(why, whylen, "is %s, larger than the %s limit",
			 units_fmt_size((uint64_t)st.st_size, a, sizeof(a)),
			 units_fmt_size(max_bytes, b, sizeof(b)));
		goto out_close;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
		ret = -errno;
		snprintf(why, whylen, "fcntl: %s", strerror(errno));
		goto out_close;
	}
	if (stp)
		*stp = st;
	return fd;
out_close:
	close(fd);
	return ret;
}

/* mountinfo's octal escapes (\040 a space, \011, \012, \134) undone in place. */
static void mount_unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

int fs_mount_find(FILE *mountinfo, const char *path, char *type, size_t tlen, char *mnt,
		  size_t mlen)
{
	char line[8192], best[PATH_MAX] = "", best_type[64] = "";
	size_t best_len = 0;

	/* "36 35 98:0 /root /mnt/a rw,noatime shared:1 - nfs4 srv:/x rw,...": the mount
	 * point is the fifth field, the type the first after " - "; a later line at the same
	 * point is mounted over the earlier */
	while (fgets(line, sizeof(line), mountinfo)) {
		char mp[PATH_MAX], fstype[64], *dash = strstr(line, " - ");
		size_t n;

		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1 ||
		    sscanf(dash + 3, "%63s", fstype) != 1)
			continue;
		mount_unescape(mp);
		n = strlen(mp);
		if (strcmp(mp, "/") && (strncmp(path, mp, n) || (path[n] && path[n] != '/')))
			continue;
		if (!strcmp(mp, "/"))
			n = 1;
		if (n >= best_len) {
			best_len = n;
			snprintf(best, sizeof(best), "%s", mp);
			snprintf(best_type, sizeof(best_type), "%s", fstype);
		}
	}
	if (!best_len)
		return -ENOENT;
	snprintf(type, tlen, "%s", best_type);
	snprintf(mnt, mlen, "%s", best);
	return 0;
}
