/*
 * The bounded reads of inputs (util/fsbound.h): a file read whole (then, for a parser
 * of lines, a stream over the bytes), a stat, a directory's names. Each a job of
 * fsbound.c's runner, its results the job's until its caller takes them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/common.h"
#include "util/fsbound.h"
#include "util/fsbound_int.h"
#include "util/fsutil.h"
#include "util/units.h"

uint64_t fsb_timeout_default_ns(void)
{
	uint64_t ns = 0;

	units_parse_duration(FSB_TIMEOUT_DEFAULT, &ns);
	return ns;
}

static int job_read(struct fsb_job *j)
{
	size_t cap = 0;
	int fd, ret = 0;

	if (j->want_real) {
		fsb_at(j, "realpath", j->path);
		if (!realpath(j->path, j->real))
			return -errno;
	}
	fsb_at(j, "open", j->path);
	fd = fs_open_regular(j->path, j->nofollow ? O_NOFOLLOW : 0, j->max, &j->st, j->why,
			     sizeof(j->why));
	if (fd < 0)
		return fd;
	fsb_at(j, "read", j->path);
	for (;;) {
		ssize_t n;

		if (j->len + 1 >= cap) {
			char *p = realloc(j->data, cap ? cap * 2 : 65536);

			if (!p) {
				ret = -ENOMEM;
				break;
			}
			j->data = p;
			cap = cap ? cap * 2 : 65536;
		}
		n = read(fd, j->data + j->len, cap - j->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n ? -errno : 0;
			break;
		}
		j->len += (size_t)n;
		if (j->len > j->max) { /* it grew after fs_open_regular looked */
			ret = -EFBIG;
			break;
		}
	}
	if (!ret)
		j->data[j->len] = '\0';
	close(fd);
	return ret;
}

/* A job of fn on path (r, when not NULL, gives a read's other inputs) run within
 * timeout_ns: 0 with *jp the caller's (its ret the call's outcome, why filled), or
 * -errno with no job. */
static int run_on_path(int (*fn)(struct fsb_job *j), const char *path, const struct fsb_read *r,
		       uint64_t timeout_ns, char *why, size_t whylen, struct fsb_job **jp)
{
	struct fsb_job *j = fsb_job_new(fn, why, whylen);
	int ret;

	*jp = NULL;
	if (!j)
		return -ENOMEM;
	ret = fsb_job_path(j, path, why, whylen);
	if (ret)
		return ret;
	if (r) {
		j->max = r->max;
		j->nofollow = r->nofollow;
		j->want_real = r->want_real;
	}
	ret = fsb_job_run(j, timeout_ns, why, whylen);
	if (!ret)
		*jp = j;
	return ret;
}

int fsb_read(struct fsb_read *r, uint64_t timeout_ns, char *why, size_t whylen)
{
	struct fsb_job *j;
	int ret;

	r->data = NULL;
	r->len = 0;
	ret = run_on_path(job_read, r->path, r, timeout_ns, why, whylen, &j);
	if (ret)
		return ret;
	ret = j->ret;
	if (!ret) {
		r->data = j->data; /* the caller's now */
		r->len = j->len;
		r->st = j->st;
		j->data = NULL;
	}
	if (r->want_real)
		memcpy(r->real, j->real, sizeof(r->real));
	fsb_job_free(j);
	return ret;
}

/* The stream over a file's bytes: fsb_fopen's cookie. */
struct mem_stream {
	char *data;
	size_t len, off;
};

static ssize_t mem_stream_read(void *cookie, char *buf, size_t size)
{
	struct mem_stream *m = cookie;
	size_t n = GS_MIN(size, m->len - m->off);

	memcpy(buf, m->data + m->off, n);
	m->off += n;
	return (ssize_t)n;
}

static int mem_stream_close(void *cookie)
{
	struct mem_stream *m = cookie;

	free(m->data);
	free(m);
	return 0;
}

FILE *fsb_fopen(struct fsb_read *r, uint64_t timeout_ns, char *why, size_t whylen)
{
	static const cookie_io_functions_t io = { .read = mem_stream_read,
						  .close = mem_stream_close };
	struct mem_stream *m;
	int ret = fsb_read(r, timeout_ns, why, whylen);
	FILE *f;

	if (ret) {
		errno = -ret;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	f = m ? fopencookie(m, "r", io) : NULL;
	if (!f) {
		free(m);
		free(r->data);
		r->data = NULL;
		snprintf(why, whylen, "%s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	m->data = r->data;
	m->len = r->len;
	return f;
}

static int job_stat(struct fsb_job *j)
{
	fsb_at(j, "stat", j->path);
	return stat(j->path, &j->st) ? -errno : 0;
}

int fsb_stat(const char *path, struct stat *st, uint64_t timeout_ns, char *why,
	     size_t whylen)
{
	struct fsb_job *j;
	int ret = run_on_path(job_stat, path, NULL, timeout_ns, why, whylen, &j);

	if (ret)
		return ret;
	ret = j->ret;
	*st = j->st;
	fsb_job_free(j);
	return ret;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names read (NUL after each, in text, n of them) as one block: the pointers, NULL,
 * then the names. */
static char **names_block(const char *text, size_t textlen, size_t n)
{
	char **v = malloc((n + 1) * sizeof(*v) + textlen);
	char *p;

	if (!v)
		return NULL;
	p = (char *)(v + n + 1);
	memcpy(p, text, textlen);
	for (size_t i = 0; i < n; i++, p += strlen(p) + 1)
		v[i] = p;
	v[n] = NULL;
	qsort(v, n, sizeof(*v), name_cmp);
	return v;
}

static int job_list(struct fsb_job *j)
{
	char *text = NULL;
	size_t len = 0, n = 0;
	struct dirent *e;
	int ret = 0;
	FILE *f;
	DIR *d;

	fsb_at(j, "open", j->path);
	d = opendir(j->path);
	if (!d)
		return -errno;
	f = open_memstream(&text, &len);
	if (!f) {
		ret = -ENOMEM;
		goto out_closedir;
	}
	fsb_at(j, "readdir", j->path);
	for (;;) {
		errno = 0;
		e = readdir(d);
		if (!e) {
			ret = -errno; /* 0 at the end */
			break;
		}
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			fwrite(e->d_name, 1, strlen(e->d_name) + 1, f);
			n++;
		}
	}
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (!ret) {
		j->names = names_block(text, len, n);
		j->nnames = n;
		if (!j->names)
			ret = -ENOMEM;
	}
	free(text);
out_closedir:
	closedir(d);
	return ret;
}

int fsb_list(const char *dir, char ***names, size_t *n, uint64_t timeout_ns, char *why,
	     size_t whylen)
{
	struct fsb_job *j;
	int ret;

	*names = NULL;
	*n = 0;
	ret = run_on_path(job_list, dir, NULL, timeout_ns, why, whylen, &j);
	if (ret)
		return ret;
	ret = j->ret;
	if (!ret) {
		*names = j->names; /* the caller's now */
		*n = j->nnames;
		j->names = NULL;
	}
	fsb_job_free(j);
	return ret;
}
