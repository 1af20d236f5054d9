/*
 * Bounded file-system calls (util/fsbound.h) and the mount lookup behind their message
 * (util/fsutil.h): a results file written whole, a directory made again, an existing
 * file kept, a full disk's errno; the reads of inputs (a file, a stat, a listing); a
 * call that does not return (a FIFO where the temporary file goes: its open waits for a
 * reader) given up on in time with the call and the file system named, the next call,
 * read or write, refused at once until it returns; a walk of many calls bounded as one;
 * a stop signal ending a wait, wherever the signal goes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/fsbound.h"
#include "util/fsutil.h"
#include "util/test_later.h"
#include "util/test_tmpdir.h"
#include "util/timeutil.h"

#define TMO 5000000000ull /* calls that return: never near it */

static char dir[PATH_MAX]; /* setup: test_tmpdir_make */

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static void test_write_read(void **state)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], cases[PATH_MAX], why[256], buf[64];
	struct fsb_write w = { .path = path, .data = "one\n", .len = 4, .remake = cases };
	struct fsb_read r = { .path = path, .max = 1024 };
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/report.json", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(cases, sizeof(cases), "%s/cases", dir);
	/* the directory to keep is gone: made again, said, then the file */
	assert_int_equal(fsb_write(&w, TMO, why, sizeof(why)), 0);
	assert_true(w.remade);
	assert_int_equal(stat(cases, &st), 0);
	slurp(path, buf, sizeof(buf));
	assert_string_equal(buf, "one\n");
	assert_int_equal(stat(tmp, &st), -1);
	/* rewritten whole; the directory there now */
	w.data = "two\n";
	assert_int_equal(fsb_write(&w, TMO, why, sizeof(why)), 0);
	assert_false(w.remade);
	assert_int_equal(fsb_read(&r, TMO, why, sizeof(why)), 0);
	assert_int_equal(r.len, 4);
	assert_string_equal(r.data, "two\n");
	assert_int_equal(r.st.st_size, 4);
	free(r.data);
	/* no_replace: the existing file is kept, no temporary left */
	w.no_replace = true;
	w.data = "three\n";
	assert_int_equal(fsb_write(&w, TMO, why, sizeof(why)), -EEXIST);
	slurp(path, buf, sizeof(buf));
	assert_string_equal(buf, "two\n");
	assert_int_equal(stat(tmp, &st), -1);
	/* reads: a file past the limit, one that is not there */
	r.max = 2;
	assert_int_equal(fsb_read(&r, TMO, why, sizeof(why)), -EFBIG);
	assert_null(r.data);
	assert_non_null(strstr(why, "larger than"));
	r.path = tmp;
	r.max = 1024;
	assert_int_equal(fsb_read(&r, TMO, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, strerror(ENOENT));
}

/* A full disk (the temporary file leads to /dev/full, or /dev/full written directly):
 * ENOSPC, and it names no timeout. */
static void test_full_disk(void **state)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], why[256];
	struct fsb_write w = { .path = path, .data = "x", .len = 1 };
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/full.json", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(symlink("/dev/full", tmp), 0);
	assert_int_equal(fsb_write(&w, TMO, why, sizeof(why)), -ENOSPC);
	assert_string_equal(why, strerror(ENOSPC));
	assert_int_equal(lstat(tmp, &st), -1);
	assert_int_equal(stat(path, &st), -1);
	/* direct: the device itself, ENOSPC, and it stays a device (no PATH.tmp renamed
	 * onto it); a regular file written in place, no PATH.tmp */
	w.path = "/dev/full";
	w.direct = true;
	assert_int_equal(fsb_write(&w, TMO, why, sizeof(why)), -ENOSPC);
	assert_int_equal(stat("/dev/full", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	w.path = path;
	assert_int_equal(fsb_write(&w, TMO, why, sizeof(why)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 1);
	assert_int_equal(lstat(tmp, &st), -1);
	unlink(path);
}

static void test_unique_dir_and_probe(void **state)
{
	char made[PATH_MAX], sub[PATH_MAX + 8], why[256], parent[PATH_MAX];
	struct stat st;

	(void)state;
	snprintf(parent, sizeof(parent), "%s/out/deeper", dir);
	assert_int_equal(fsb_make_unique_dir(parent, "exp", "cases", made, sizeof(made), TMO,
					     why, sizeof(why)), 0);
	assert_int_equal(strncmp(made, parent, strlen(parent)), 0);
	assert_non_null(strstr(made, "/exp-"));
	snprintf(sub, sizeof(sub), "%s/cases", made);
	assert_int_equal(stat(sub, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* the probe leaves nothing behind: the directory holds cases/ only */
	snprintf(sub, sizeof(sub), "ls -A %s | wc -l | grep -qx 1", made);
	assert_int_equal(system(sub), 0);
	assert_int_equal(fsb_probe(made, TMO, why, sizeof(why)), 0);
	assert_int_equal(system(sub), 0);
	assert_int_equal(fsb_probe("/nonexistent/dir", TMO, why, sizeof(why)), -ENOENT);
}

/* The reads of inputs: a file as a stream with its real name, a link refused where asked,
 * a stat, a directory's names sorted, a directory made or found. */
static void test_inputs(void **state)
{
	char sub[PATH_MAX], path[PATH_MAX + 8], link[PATH_MAX + 8], real[PATH_MAX], why[256];
	char line[32], **names;
	struct fsb_read r = { .path = link, .max = 1024, .want_real = true };
	struct stat st;
	size_t n;
	FILE *f;

	(void)state;
	snprintf(sub, sizeof(sub), "%s/in", dir);
	assert_int_equal(fsb_mkdir(sub, TMO, why, sizeof(why)), 0);
	assert_int_equal(fsb_mkdir(sub, TMO, why, sizeof(why)), 0); /* there: taken */
	snprintf(path, sizeof(path), "%s/b.ini", sub);
	assert_int_equal(test_file_write(path, "one\ntwo\n"), 0);
	snprintf(link, sizeof(link), "%s/a.ini", sub);
	assert_int_equal(symlink("b.ini", link), 0);
	f = fsb_fopen(&r, TMO, why, sizeof(why));
	assert_non_null(f);
	assert_non_null(realpath(path, real));
	assert_string_equal(r.real, real);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "one\n");
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "two\n");
	assert_null(fgets(line, sizeof(line), f));
	fclose(f); /* frees the bytes: the sanitizer build checks */
	r.nofollow = true;
	assert_null(fsb_fopen(&r, TMO, why, sizeof(why)));
	assert_int_equal(errno, ELOOP);
	assert_int_equal(fsb_stat(path, &st, TMO, why, sizeof(why)), 0);
	assert_int_equal(st.st_size, 8);
	assert_int_equal(fsb_stat(sub, &st, TMO, why, sizeof(why)), 0);
	assert_true(S_ISDIR(st.st_mode));
	snprintf(path, sizeof(path), "%s/none", sub);
	assert_int_equal(fsb_stat(path, &st, TMO, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, strerror(ENOENT));
	assert_int_equal(fsb_mkdir("/nonexistent/x", TMO, why, sizeof(why)), -ENOENT);
	assert_int_equal(fsb_list(sub, &names, &n, TMO, why, sizeof(why)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "a.ini");
	assert_string_equal(names[1], "b.ini");
	assert_null(names[2]);
	free(names);
	assert_int_equal(fsb_list(path, &names, &n, TMO, why, sizeof(why)), -ENOENT);
	assert_null(names);
}

/* A write to dir/NAME that will not return: its temporary file is a FIFO, whose open
 * waits for a reader. path and tmp filled. */
static void stuck_write_prepare(const char *name, char *path, size_t len, char *tmp,
				size_t tmplen)
{
	snprintf(path, len, "%s/%s", dir, name);
	snprintf(tmp, tmplen, "%s.tmp", path);
	assert_int_equal(mkfifo(tmp, 0600), 0);
}

/* A reader comes: the write returns (a FIFO cannot be fsync'ed: it fails, unseen) and,
 * with probe, calls are made again. */
static void stuck_write_release(const char *tmp, bool probe)
{
	char why[PATH_MAX + 200];
	int fd = open(tmp, O_RDONLY | O_NONBLOCK), i, ret = -ETIMEDOUT;

	assert_true(fd >= 0);
	for (i = 0; i < 500 && ret == -ETIMEDOUT; i++) {
		usleep(10000);
		ret = probe ? fsb_probe(dir, TMO, why, sizeof(why)) : 0;
	}
	assert_int_equal(ret, 0);
	close(fd);
	unlink(tmp);
}

/* A call that does not return: given up on in time, named; the next refused until it does. */
static void test_stuck(void **state)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], why[PATH_MAX + 200], want[PATH_MAX + 64];
	char pending[PATH_MAX + 32], *end;
	struct fsb_write w = { .path = path, .data = "x", .len = 1 };
	struct fsb_read r = { .max = 1024 };
	struct stat st;
	char **names;
	size_t n;
	uint64_t t0, took;

	(void)state;
	stuck_write_prepare("stuck.json", path, sizeof(path), tmp, sizeof(tmp));
	t0 = time_now_ns();
	assert_int_equal(fsb_write(&w, 200000000ull, why, sizeof(why)), -ETIMEDOUT);
	took = time_now_ns() - t0;
	assert_true(took >= 200000000ull && took < 2000000000ull);
	snprintf(want, sizeof(want), "open of %s did not return within 200ms: is its file system (",
		 tmp);
	assert_int_equal(strncmp(why, want, strlen(want)), 0);
	assert_non_null(strstr(why, ") reachable?"));
	/* the next call, on any file, is refused at once, naming the stuck one */
	t0 = time_now_ns();
	assert_int_equal(fsb_probe(dir, TMO, why, sizeof(why)), -ETIMEDOUT);
	assert_true(time_now_ns() - t0 < 100000000ull);
	snprintf(want, sizeof(want), "not attempted: the open of %s has not returned for ", tmp);
	assert_int_equal(strncmp(why, want, strlen(want)), 0);
	/* pending for less than a second: said in milliseconds, not "0ns" */
	assert_true(strtoul(why + strlen(want), &end, 10) >= 200 && !strncmp(end, "ms: ", 4));
	/* and asked for: the first call pending, by name */
	assert_true(fsb_pending(pending, sizeof(pending)));
	snprintf(want, sizeof(want), "the open of %s", tmp);
	assert_string_equal(pending, want);
	snprintf(want, sizeof(want), "not attempted: the open of %s has not returned for ", tmp);
	/* reads too: the inputs a report reads one after another sit on the same mounts */
	r.path = path;
	assert_int_equal(fsb_read(&r, TMO, why, sizeof(why)), -ETIMEDOUT);
	assert_int_equal(strncmp(why, want, strlen(want)), 0);
	assert_null(r.data);
	assert_int_equal(fsb_stat(dir, &st, TMO, why, sizeof(why)), -ETIMEDOUT);
	assert_int_equal(fsb_list(dir, &names, &n, TMO, why, sizeof(why)), -ETIMEDOUT);
	assert_int_equal(fsb_mkdir(dir, TMO, why, sizeof(why)), -ETIMEDOUT);
	assert_int_equal(strncmp(why, want, strlen(want)), 0);
	stuck_write_release(tmp, true);
	assert_false(fsb_pending(pending, sizeof(pending)));
}

/* A walk's argument: it notes "read" of a name, then reads a pipe when one is given. */
struct walk_arg {
	char name[64];
	int pipe_r;        /* < 0: nothing to wait on */
	int steps;         /* out: how far it went */
	int nested;        /* a walk within: 1 to make one */
};

static int walks_dropped;

static void walk_fn(void *arg)
{
	struct walk_arg *a = arg;
	char why[256], b;

	fsb_note("read", a->name);
	a->steps++;
	if (a->pipe_r >= 0 && read(a->pipe_r, &b, 1) == 1)
		a->steps++;
	if (a->nested) { /* on this thread, at once: its arg stays ours */
		struct walk_arg in = { .pipe_r = -1 };

		assert_int_equal(fsb_walk(walk_fn, &in, NULL, "inner", TMO, why, sizeof(why)), 0);
		a->steps += in.steps * 10;
	}
}

static void walk_drop(void *arg)
{
	free(arg);
	__atomic_add_fetch(&walks_dropped, 1, __ATOMIC_SEQ_CST);
}

/*
 * A walk: done, its argument back (a walk within it run on its thread); one that does not
 * return given up on in time naming its last note, its argument dropped once it returns;
 * the next refused, its argument dropped at once.
 */
static void test_walk(void **state)
{
	struct walk_arg *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	char why[PATH_MAX + 200], want[PATH_MAX + 64];
	uint64_t t0;
	int p[2];

	(void)state;
	a->pipe_r = -1;
	a->nested = 1;
	fsb_note("read", "nowhere"); /* outside a walk: nothing */
	assert_int_equal(fsb_walk(walk_fn, a, walk_drop, "/sys", TMO, why, sizeof(why)), 0);
	assert_int_equal(a->steps, 11);
	assert_int_equal(walks_dropped, 0);
	assert_int_equal(pipe(p), 0);
	a->pipe_r = p[0];
	a->nested = 0;
	a->steps = 0;
	snprintf(a->name, sizeof(a->name), "%s/attr", dir);
	t0 = time_now_ns();
	assert_int_equal(fsb_walk(walk_fn, a, walk_drop, "/sys", 200000000ull, why, sizeof(why)),
			 -ETIMEDOUT);
	assert_true(time_now_ns() - t0 < 2000000000ull);
	snprintf(want, sizeof(want), "read of %s/attr did not return within 200ms: is its file system (",
		 dir);
	assert_int_equal(strncmp(why, want, strlen(want)), 0);
	b->pipe_r = -1;
	assert_int_equal(fsb_walk(walk_fn, b, walk_drop, "/sys", TMO, why, sizeof(why)),
			 -ETIMEDOUT);
	assert_int_equal(__atomic_load_n(&walks_dropped, __ATOMIC_SEQ_CST), 1); /* b's */
	assert_int_equal(write(p[1], "x", 1), 1);
	for (int i = 0; i < 500 && __atomic_load_n(&walks_dropped, __ATOMIC_SEQ_CST) < 2; i++)
		usleep(10000);
	assert_int_equal(__atomic_load_n(&walks_dropped, __ATOMIC_SEQ_CST), 2);
	close(p[0]);
	close(p[1]);
}

/* How long a stopped wait may take: the poll, the grace, and a loaded 2-core host. */
#define STOPPED_WITHIN (200000000ull + FSB_STOP_GRACE_NS + 50000000ull + 500000000ull)

static void assert_stopped(int ret, const char *why, const char *sig, const char *tmp,
			   uint64_t t0)
{
	char want[PATH_MAX + 64];
	uint64_t took = time_now_ns() - t0;

	assert_int_equal(ret, -EINTR);
	snprintf(want, sizeof(want), "stopped by %s while the open of %s was pending", sig, tmp);
	assert_string_equal(why, want);
	assert_true(took >= 200000000ull + FSB_STOP_GRACE_NS && took < STOPPED_WITHIN);
}

static bool sig_default(int sig)
{
	struct sigaction sa;

	return !sigaction(sig, NULL, &sa) && sa.sa_handler == SIG_DFL;
}

/*
 * The flag of a program's own handler (run/stop.c's), raised in a wait: the wait ends,
 * the call named; a call made once it is up goes on, its owner writing what ran.
 */
static void test_stop_watched(void **state)
{
	static volatile sig_atomic_t flag;
	char path[PATH_MAX], tmp[PATH_MAX + 8], why[PATH_MAX + 200];
	struct fsb_write w = { .path = path, .data = "x", .len = 1 };
	struct later l = { .sig = SIGTERM, .flag = &flag };
	uint64_t t0 = time_now_ns();

	(void)state;
	stuck_write_prepare("watched.json", path, sizeof(path), tmp, sizeof(tmp));
	fsb_stop_watch(&flag);
	later_start(&l);
	assert_stopped(fsb_write(&w, TMO, why, sizeof(why)), why, "SIGTERM", tmp, t0);
	later_join(&l);
	assert_int_equal(fsb_stop_signo(), 0); /* the owner's, not fsbound's */
	stuck_write_release(tmp, true);
	assert_int_equal(fsb_probe(dir, TMO, why, sizeof(why)), 0);
	fsb_stop_watch(NULL);
	flag = 0;
}

/*
 * A stop signal blocked on the waiting thread (the driver's, taken with sigtimedwait
 * between cases): opened to fsbound's handler for the wait, which it ends; pending for
 * its owner afterwards, blocked and at its default action again, and nothing refused.
 * A signal that comes as a call returns within the grace: the call done, the signal
 * pending all the same.
 */
static void test_stop_blocked(void **state)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], why[PATH_MAX + 200];
	struct fsb_write w = { .path = path, .data = "x", .len = 1 };
	struct timespec zero = { 0, 0 };
	struct later l = { .sig = SIGTERM };
	sigset_t set, old, now;
	uint64_t t0;

	(void)state;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	stuck_write_prepare("blocked.json", path, sizeof(path), tmp, sizeof(tmp));
	t0 = time_now_ns();
	later_start(&l);
	assert_stopped(fsb_write(&w, TMO, why, sizeof(why)), why, "SIGTERM", tmp, t0);
	later_join(&l);
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	assert_true(sigismember(&now, SIGTERM));
	assert_true(sig_default(SIGTERM));
	assert_int_equal(sigtimedwait(&set, NULL, &zero), SIGTERM);
	assert_int_equal(fsb_stop_signo(), 0);
	stuck_write_release(tmp, true);
	/* the reader comes 50 ms after the signal: within the grace */
	stuck_write_prepare("blocked2.json", path, sizeof(path), tmp, sizeof(tmp));
	l.reader = tmp;
	later_start(&l);
	assert_int_equal(fsb_write(&w, TMO, why, sizeof(why)), -EINVAL); /* fsync of a FIFO */
	later_join(&l);
	assert_int_equal(sigtimedwait(&set, NULL, &zero), SIGTERM);
	unlink(tmp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * A stop signal the program took itself (the driver's sigtimedwait) and told of: a write
 * begun after it has the grace, not its 5 s, and one that does not return in it is given
 * up on as a stop's, named; a write that returns is done as ever; other calls (the probe
 * that waits for the reader) keep their bound.
 */
static void test_stop_taken(void **state)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], why[PATH_MAX + 200], want[PATH_MAX + 96];
	struct fsb_write w = { .path = path, .data = "x", .len = 1 };
	uint64_t t0, took;

	(void)state;
	fsb_stop_taken(SIGTERM);
	snprintf(path, sizeof(path), "%s/taken-ok.json", dir);
	assert_int_equal(fsb_write(&w, TMO, why, sizeof(why)), 0);
	stuck_write_prepare("taken.json", path, sizeof(path), tmp, sizeof(tmp));
	t0 = time_now_ns();
	assert_int_equal(fsb_write(&w, TMO, why, sizeof(why)), -EINTR);
	took = time_now_ns() - t0;
	assert_true(took >= FSB_STOP_WRITE_GRACE_NS && took < FSB_STOP_WRITE_GRACE_NS + 1000000000ull);
	snprintf(want, sizeof(want), "stopped by SIGTERM: the open of %s did not return within its grace (2s)",
		 tmp);
	assert_string_equal(why, want);
	assert_int_equal(fsb_stop_signo(), 0); /* the program's, not fsbound's */
	/* the probe (not a write) waits its bound for the reader to come */
	stuck_write_release(tmp, true);
	fsb_stop_taken(0);
}

/*
 * A stop signal at its default action: fsbound's handler takes it for the wait, which it
 * ends; the default action back, every later call refused, and fsb_stop_signo() says
 * which, for main's 128 + signal. For good in this process: the last test.
 */
static void test_stop_default(void **state)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], why[PATH_MAX + 200];
	struct fsb_write w = { .path = path, .data = "x", .len = 1 };
	struct later l = { .sig = SIGINT };
	uint64_t t0;

	(void)state;
	assert_true(sig_default(SIGINT));
	stuck_write_prepare("default.json", path, sizeof(path), tmp, sizeof(tmp));
	t0 = time_now_ns();
	later_start(&l);
	assert_stopped(fsb_write(&w, TMO, why, sizeof(why)), why, "SIGINT", tmp, t0);
	later_join(&l);
	assert_true(sig_default(SIGINT));
	assert_int_equal(fsb_stop_signo(), SIGINT);
	stuck_write_release(tmp, false);
	assert_int_equal(fsb_mkdir(dir, TMO, why, sizeof(why)), -EINTR);
	assert_string_equal(why, "not attempted: stopped by SIGINT");
}

static void test_mount_find(void **state)
{
	static const char mi[] =
		"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
		"30 22 0:26 / /proc rw,nosuid - proc proc rw\n"
		"41 22 0:40 /export /mnt/res rw,relatime shared:9 - nfs4 srv:/export rw,vers=4.2\n"
		"42 22 0:41 / /mnt/my\\040disk rw - xfs /dev/sdb rw\n"
		"43 41 0:42 / /mnt/res/scratch rw - tmpfs tmpfs rw\n"
		"44 22 0:43 / /mnt/res rw - nfs srv2:/x rw\n";
	char type[64], mnt[PATH_MAX];
	static const struct {
		const char *path, *type, *mnt;
	} cases[] = {
		{ "/home/u/results", "ext4", "/" },
		/* mounted over: the later line at the same point */
		{ "/mnt/res/exp-1/cases", "nfs", "/mnt/res" },
		{ "/mnt/res", "nfs", "/mnt/res" },
		{ "/mnt/res/scratch/x", "tmpfs", "/mnt/res/scratch" },
		/* a name that only begins like a mount point is not under it */
		{ "/mnt/results", "ext4", "/" },
		{ "/mnt/my disk/r", "xfs", "/mnt/my disk" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = fmemopen((void *)mi, sizeof(mi) - 1, "r");

		assert_int_equal(fs_mount_find(f, cases[i].path, type, sizeof(type), mnt,
					       sizeof(mnt)), 0);
		assert_string_equal(type, cases[i].type);
		assert_string_equal(mnt, cases[i].mnt);
		fclose(f);
	}
}

static int setup(void **state)
{
	(void)state;
	return test_tmpdir_make(dir, sizeof(dir), "fsbound") ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	return test_tmpdir_remove(dir) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_read),
		cmocka_unit_test(test_full_disk),
		cmocka_unit_test(test_unique_dir_and_probe),
		cmocka_unit_test(test_inputs),
		cmocka_unit_test(test_stuck),
		cmocka_unit_test(test_mount_find),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_stop_watched),
		cmocka_unit_test(test_stop_blocked),
		cmocka_unit_test(test_stop_taken),
		cmocka_unit_test(test_stop_default), /* the last: its stop stays */
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
