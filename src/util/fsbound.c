/*
 * Bounded file-system calls (util/fsbound.h): one job per call, run by util/bounded.c,
 * that notes each system call before making it, so that a caller that gave up can say
 * which one did not return; the record of a call still stuck, which refuses the next;
 * and the writes of results (the reads are fsbound_read.c's).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/bounded.h"
#include "util/common.h"
#include "util/fsbound.h"
#include "util/fsbound_int.h"
#include "util/fsutil.h"
#include "util/timeutil.h"
#include "util/units.h"

/* The calls given up on that have not returned, and the first of them. */
static struct {
	pthread_mutex_t lock;
	int n;
	const char *op;            /* "fsync" (a literal) */
	char obj[PATH_MAX];        /* "/r/q-1/cases/0001.json.tmp" */
	uint64_t since_ns;         /* when it was made */
} stuck = { .lock = PTHREAD_MUTEX_INITIALIZER };

void fsb_at(struct fsb_job *j, const char *op, const char *obj)
{
	pthread_mutex_lock(&j->at_lock);
	j->at_op = op;
	j->at_obj = obj;
	pthread_mutex_unlock(&j->at_lock);
}

static void path_dir(const char *path, char *dir, size_t len)
{
	char *slash;

	snprintf(dir, len, "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, len, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
}

/* The name is on disk only once its directory is: after a power cut a rename alone can
 * bring back the old name, or none. */
static int dir_sync(struct fsb_job *j)
{
	int fd, ret = 0;

	fsb_at(j, "open", j->dir);
	fd = open(j->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fsb_at(j, "fsync", j->dir);
	/* a file system that cannot sync a directory (EINVAL) keeps names as it does */
	if (fsync(fd) && errno != EINVAL)
		ret = -errno;
	close(fd);
	return ret;
}

/* j's data into fd, the file name, then fsync'ed when sync. */
static int write_data(struct fsb_job *j, int fd, const char *name, bool sync)
{
	const char *p = j->data;
	size_t left = j->len;

	fsb_at(j, "write", name);
	while (left) {
		ssize_t n = write(fd, p, left);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		left -= (size_t)n;
	}
	if (!sync)
		return 0;
	fsb_at(j, "fsync", name);
	return fsync(fd) ? -errno : 0;
}

/* direct: PATH as the user named it; a device or a FIFO is not fsync'ed (EINVAL) */
static int job_write_direct(struct fsb_job *j)
{
	struct stat st;
	int fd, ret;

	fsb_at(j, "open", j->path);
	fd = open(j->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	ret = fstat(fd, &st) ? -errno : write_data(j, fd, j->path, S_ISREG(st.st_mode));
	fsb_at(j, "close", j->path);
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

static int job_write(struct fsb_job *j)
{
	struct stat st;
	int fd, ret;

	if (j->direct)
		return job_write_direct(j);

	if (*j->remake) {
		fsb_at(j, "stat", j->remake);
		if (stat(j->remake, &st)) {
			if (errno != ENOENT)
				return -errno;
			fsb_at(j, "mkdir", j->remake);
			ret = fs_mkdir_p(j->remake);
			if (ret)
				return ret;
			j->remade = true;
		}
	}
	fsb_at(j, "open", j->tmp);
	fd = open(j->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	ret = write_data(j, fd, j->tmp, true);
	fsb_at(j, "close", j->tmp);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && j->no_replace) {
		fsb_at(j, "link", j->path);
		if (link(j->tmp, j->path))
			ret = -errno;
	} else if (!ret) {
		fsb_at(j, "rename", j->path);
		if (rename(j->tmp, j->path))
			ret = -errno;
		else
			return dir_sync(j);
	}
	fsb_at(j, "unlink", j->tmp);
	unlink(j->tmp);
	if (!ret)
		ret = dir_sync(j);
	return ret;
}

/* The probe: the steps of a results file, on a name of its own, then removed. */
static int job_probe(struct fsb_job *j, const char *dir)
{
	int ret;

	snprintf(j->path, sizeof(j->path), "%s/.gradsync-probe.%d", dir, (int)getpid());
	snprintf(j->tmp, sizeof(j->tmp), "%s.tmp", j->path);
	snprintf(j->dir, sizeof(j->dir), "%s", dir);
	snprintf(j->probe_text, sizeof(j->probe_text), "probe\n");
	j->data = j->probe_text;
	j->len = strlen(j->data);
	ret = job_write(j);
	if (ret)
		return ret;
	fsb_at(j, "unlink", j->path);
	return unlink(j->path) ? -errno : 0;
}

static int job_unique(struct fsb_job *j)
{
	char made[PATH_MAX], sub[PATH_MAX + 72];
	int ret;

	fsb_at(j, "mkdir", j->parent);
	ret = fs_make_unique_dir(j->parent, j->name, made, sizeof(made));
	if (ret)
		return ret;
	/* whole before the next step is noted: abandon reads it once that step shows
	 * (at_lock orders the two) */
	memcpy(j->made, made, sizeof(made));
	if (*j->sub) {
		snprintf(sub, sizeof(sub), "%s/%s", j->made, j->sub);
		fsb_at(j, "mkdir", j->made);
		if (mkdir(sub, 0755))
			return -errno;
	}
	return job_probe(j, j->made);
}

/* mkdir of a directory its caller writes into: one already there is taken as it is
 * (what is in it is the caller's to judge) */
static int job_mkdir(struct fsb_job *j)
{
	fsb_at(j, "mkdir", j->path);
	return mkdir(j->path, 0777) && errno != EEXIST ? -errno : 0;
}

static int job_probe_parent(struct fsb_job *j)
{
	return job_probe(j, j->parent);
}

static void job_call(void *arg)
{
	struct fsb_job *j = arg;

	j->ret = j->fn(j);
}

void fsb_job_free(struct fsb_job *j)
{
	if (j->walk_arg) /* a walk's, still the job's: given up on, or never run */
		j->walk_drop(j->walk_arg);
	if (j->data != j->probe_text)
		free(j->data);
	free(j->names);
	pthread_mutex_destroy(&j->at_lock);
	free(j);
}

/* On the caller, at its deadline: which call the job is in, for the caller's line and
 * for the refusal of the calls to come. */
static void job_abandon(void *arg)
{
	struct fsb_job *j = arg;
	const char *op, *obj;

	pthread_mutex_lock(&j->at_lock);
	op = j->at_op;
	obj = j->at_obj;
	pthread_mutex_unlock(&j->at_lock);
	if (!op) /* its thread has not begun: what it was to work on */
		op = "start", obj = *j->path ? j->path : j->parent;
	*j->gave_op = op;
	snprintf(j->gave_obj, PATH_MAX, "%s", obj);
	if (j->out && obj != j->parent) /* fsb_make_unique_dir's: made, and whole */
		snprintf(j->out, j->out_len, "%s", j->made);
	pthread_mutex_lock(&stuck.lock);
	if (!stuck.n++) {
		stuck.op = op;
		snprintf(stuck.obj, sizeof(stuck.obj), "%s", obj);
		stuck.since_ns = j->start_ns;
	}
	pthread_mutex_unlock(&stuck.lock);
}

/* On the thread, when a call given up on returns at last. */
static void job_drop(void *arg)
{
	pthread_mutex_lock(&stuck.lock);
	stuck.n--;
	pthread_mutex_unlock(&stuck.lock);
	fsb_job_free(arg);
}

static const struct bounded_ops job_ops = {
	.call = job_call, .abandon = job_abandon, .drop = job_drop,
	.stop_grace_ns = FSB_STOP_GRACE_NS,
};

/* " (nfs4 at /r)" for the file system holding path, "" when /proc cannot tell. */
static void fs_of(const char *path, char *buf, size_t len)
{
	char abs[PATH_MAX * 2], type[64], mnt[PATH_MAX], cwd[PATH_MAX];
	FILE *mi;

	buf[0] = '\0';
	if (path[0] == '/')
		snprintf(abs, sizeof(abs), "%s", path);
	else if (getcwd(cwd, sizeof(cwd))) /* the kernel's name of it: no I/O */
		snprintf(abs, sizeof(abs), "%s/%s", cwd, path);
	else
		return;
	mi = fopen("/proc/self/mountinfo", "re");
	if (!mi)
		return;
	if (!fs_mount_find(mi, abs, type, sizeof(type), mnt, sizeof(mnt)))
		snprintf(buf, len, " (%s at %s)", type, mnt);
	fclose(mi);
}

/* The first call given up on that has not returned: true with its op, object and age. */
static bool stuck_first(const char **op, char *obj, size_t len, uint64_t *age_ns)
{
	bool pending;

	pthread_mutex_lock(&stuck.lock);
	pending = stuck.n > 0;
	*op = stuck.op;
	snprintf(obj, len, "%s", stuck.obj);
	*age_ns = time_now_ns() - stuck.since_ns;
	pthread_mutex_unlock(&stuck.lock);
	return pending;
}

bool fsb_pending(char *what, size_t len)
{
	char obj[PATH_MAX];
	const char *op;
	uint64_t age;

	if (!stuck_first(&op, obj, sizeof(obj), &age))
		return false;
	snprintf(what, len, "the %s of %s", op, obj);
	return true;
}

/* A call still stuck: -ETIMEDOUT with why saying which, else 0. */
static int refuse_if_stuck(char *why, size_t whylen)
{
	char obj[PATH_MAX], fs[PATH_MAX + 80], t[32];
	const char *op;
	uint64_t age;

	if (!stuck_first(&op, obj, sizeof(obj), &age))
		return 0;
	fs_of(obj, fs, sizeof(fs));
	/* whole seconds, "for 42s" not "for 42.3s"; under one (a call given up on a stop
	 * signal's grace) whole milliseconds, not "0ns" */
	age = age >= 1000000000ull ? age / 1000000000ull * 1000000000ull
				   : GS_MAX(age / 1000000ull, 1ull) * 1000000ull;
	units_fmt_duration(age, t, sizeof(t));
	snprintf(why, whylen, "not attempted: the %s of %s has not returned for %s: is its file system%s reachable?",
		 op, obj, t, fs);
	return -ETIMEDOUT;
}

struct fsb_job *fsb_job_new(int (*fn)(struct fsb_job *j), char *why, size_t whylen)
{
	struct fsb_job *j = calloc(1, sizeof(*j));

	if (!j) {
		snprintf(why, whylen, "%s", strerror(ENOMEM));
		return NULL;
	}
	j->fn = fn;
	pthread_mutex_init(&j->at_lock, NULL);
	return j;
}

int fsb_job_run(struct fsb_job *j, uint64_t timeout_ns, char *why, size_t whylen)
{
	char obj[PATH_MAX], fs[PATH_MAX + 80], t[32];
	const char *op = "";
	struct fsb_stop stop;
	int ret = refuse_if_stuck(why, whylen) ?: fsb_stop_begin(&stop, why, whylen), sig;
	/* a write begun once the program is ending on a stop it took: the grace is its bound */
	int taken = j->fn == job_write ? fsb_stop_taken_signo() : 0;

	if (ret) {
		fsb_job_free(j);
		return ret;
	}
	if (taken && timeout_ns > FSB_STOP_WRITE_GRACE_NS)
		timeout_ns = FSB_STOP_WRITE_GRACE_NS;
	else
		taken = 0;
	j->gave_op = &op;
	j->gave_obj = obj;
	j->start_ns = time_now_ns();
	ret = bounded_run(&job_ops, j, j->start_ns + timeout_ns, stop.flag);
	sig = fsb_stop_end(&stop, ret);
	if (ret == -EINTR) {
		snprintf(why, whylen, "stopped by SIG%s while the %s of %s was pending",
			 sigabbrev_np(sig) ?: "?", op, obj);
		return ret;
	}
	if (ret && taken) {
		snprintf(why, whylen, "stopped by SIG%s: the %s of %s did not return within its grace (%s)",
			 sigabbrev_np(taken) ?: "?", op, obj,
			 units_fmt_duration(timeout_ns, t, sizeof(t)));
		return -EINTR;
	}
	if (ret) {
		fs_of(obj, fs, sizeof(fs));
		snprintf(why, whylen, "%s of %s did not return within %s: is its file system%s reachable?",
			 op, obj, units_fmt_duration(timeout_ns, t, sizeof(t)), fs);
		return ret;
	}
	if (j->ret)
		snprintf(why, whylen, "%s", *j->why ? j->why : strerror(-j->ret));
	return 0;
}

int fsb_job_run_free(struct fsb_job *j, uint64_t timeout_ns, char *why, size_t whylen)
{
	int ret = fsb_job_run(j, timeout_ns, why, whylen);

	if (ret)
		return ret;
	ret = j->ret;
	fsb_job_free(j);
	return ret;
}

int fsb_job_path(struct fsb_job *j, const char *path, char *why, size_t whylen)
{
	if (snprintf(j->path, sizeof(j->path), "%s", path) < (int)sizeof(j->path))
		return 0;
	snprintf(why, whylen, "%s", strerror(ENAMETOOLONG));
	fsb_job_free(j);
	return -ENAMETOOLONG;
}

int fsb_mkdir(const char *path, uint64_t timeout_ns, char *why, size_t whylen)
{
	struct fsb_job *j = fsb_job_new(job_mkdir, why, whylen);

	if (!j)
		return -ENOMEM;
	return fsb_job_path(j, path, why, whylen) ?: fsb_job_run_free(j, timeout_ns, why, whylen);
}

int fsb_write(struct fsb_write *w, uint64_t timeout_ns, char *why, size_t whylen)
{
	struct fsb_job *j = fsb_job_new(job_write, why, whylen);
	int ret;

	w->remade = false;
	if (!j)
		return -ENOMEM;
	j->data = malloc(w->len ? w->len : 1);
	if (!j->data) {
		fsb_job_free(j);
		snprintf(why, whylen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	memcpy(j->data, w->data, w->len);
	j->len = w->len;
	j->no_replace = w->no_replace;
	j->direct = w->direct;
	if (snprintf(j->path, sizeof(j->path), "%s", w->path) >= (int)sizeof(j->path) ||
	    snprintf(j->remake, sizeof(j->remake), "%s", w->remake ? w->remake : "") >=
		    (int)sizeof(j->remake)) {
		fsb_job_free(j);
		snprintf(why, whylen, "%s", strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	snprintf(j->tmp, sizeof(j->tmp), "%s.tmp", j->path);
	path_dir(j->path, j->dir, sizeof(j->dir));
	ret = fsb_job_run(j, timeout_ns, why, whylen);
	if (ret)
		return ret;
	ret = j->ret;
	w->remade = j->remade;
	fsb_job_free(j);
	return ret;
}

int fsb_make_unique_dir(const char *parent, const char *name, const char *sub, char *out,
			size_t len, uint64_t timeout_ns, char *why, size_t whylen)
{
	struct fsb_job *j = fsb_job_new(job_unique, why, whylen);
	int ret;

	out[0] = '\0';
	if (!j)
		return -ENOMEM;
	snprintf(j->parent, sizeof(j->parent), "%s", parent);
	snprintf(j->name, sizeof(j->name), "%s", name);
	snprintf(j->sub, sizeof(j->sub), "%s", sub ? sub : "");
	j->out = out;
	j->out_len = len;
	ret = fsb_job_run(j, timeout_ns, why, whylen);
	if (ret)
		return ret;
	ret = j->ret;
	if (snprintf(out, len, "%s", j->made) >= (int)len && !ret)
		ret = -ENAMETOOLONG;
	fsb_job_free(j);
	return ret;
}

int fsb_probe(const char *dir, uint64_t timeout_ns, char *why, size_t whylen)
{
	struct fsb_job *j = fsb_job_new(job_probe_parent, why, whylen);

	if (!j)
		return -ENOMEM;
	snprintf(j->parent, sizeof(j->parent), "%s", dir);
	return fsb_job_run_free(j, timeout_ns, why, whylen);
}
