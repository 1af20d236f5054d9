/*
 * The local spawner, spawning this very test binary (/proc/self/exe) in child modes:
 * environment and inherited listener checked end to end through a bootstrap, exit
 * codes and signals reported, survivors killed after the first failure, SIGINT forwarded.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "launch/blame_window.h"
#include "launch/bootstrap.h"
#include "launch/launch.h"
#include "util/test_capture.h"
#include "util/timeutil.h"

#define CHILD_FLAG "--spawn-child"
#define NRANKS	   4

static void msleep(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* A spawned rank: see what the spawner gave us, then talk to the others. */
static int child_env(void)
{
	struct launch_opts o = {.timeout_ns = 5000000000ull};
	struct launch_flags f = {.rank = -1, .world_size = -1};
	struct launch_info info;
	struct bootstrap *b;
	int all[NRANKS], on = 0;
	socklen_t sl = sizeof(on);

	if (launch_detect(&o, &f, &info) || strcmp(info.launcher, "local") || !info.spawned ||
	    info.nranks != NRANKS || info.local_rank != info.rank || info.local_nranks != NRANKS ||
	    strncmp(info.rendezvous, "127.0.0.1:", 10) || strncmp(info.job_id, "local-", 6))
		return 10;
	/* Own process group, apart from the test runner's. */
	if (getpgid(0) == getpgid(getppid()))
		return 11;
	if (info.rank == 0 &&
	    (info.listen_fd <= 0 ||
	     getsockopt(info.listen_fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &sl) || !on))
		return 12;
	if (info.rank != 0 && getenv("GRADSYNC_LISTEN_FD"))
		return 13;

	struct bootstrap_opts bo = {.rank = info.rank,
				    .nranks = info.nranks,
				    .addr = info.rendezvous,
				    .token = info.token,
				    .timeout_ms = 5000,
				    .listen_fd = info.listen_fd};

	if (bootstrap_open(&bo, &b))
		return 14;
	if (bootstrap_allgather(b, &info.rank, all, sizeof(int)))
		return 15;
	for (int r = 0; r < NRANKS; r++)
		if (all[r] != r)
			return 16;
	if (bootstrap_barrier(b))
		return 17;
	bootstrap_close(b);
	return 0;
}

static int child_main(const char *mode)
{
	const char *s = getenv("GRADSYNC_RANK");
	int rank = s ? atoi(s) : -1;

	if (!strcmp(mode, "env"))
		return child_env();
	if (!strcmp(mode, "fail")) {
		if (rank == 2) {
			msleep(50);
			return 3;
		}
		msleep(30000);
		return 0;
	}
	if (!strcmp(mode, "signal")) {
		if (rank == 1)
			raise(SIGKILL);
		msleep(100);
		return 0;
	}
	if (!strcmp(mode, "stubborn")) {
		if (rank == 1) {
			msleep(50);
			return 5;
		}
		signal(SIGTERM, SIG_IGN);
		msleep(30000);
		return 0;
	}
	if (!strcmp(mode, "hung")) {
		/* rank 0 fails, the others leave as aborted ranks do, rank 2 hangs */
		if (rank == 2)
			raise(SIGSTOP);
		msleep(rank == 0 ? 50 : 100);
		return 1;
	}
	if (!strcmp(mode, "sigint")) {
		if (rank == 0)
			kill(getppid(), SIGINT);
		msleep(30000);
		return 0;
	}
	if (!strcmp(mode, "sigterm_deaf")) {
		/* ranks that ignore the forwarded signal: SIGKILL comes within a second */
		signal(SIGTERM, SIG_IGN);
		if (rank == 0)
			kill(getppid(), SIGTERM);
		msleep(30000);
		return 0;
	}
	if (!strcmp(mode, "sigint_twice")) {
		signal(SIGINT, SIG_IGN);
		if (rank == 0) {
			kill(getppid(), SIGINT);
			msleep(100);
			kill(getppid(), SIGINT);
		}
		msleep(30000);
		return 0;
	}
	return 99;
}

static int last_signo; /* the spawner's *signo of the last spawn() */

/* Spawn NRANKS copies of this binary in `mode`; stderr (the spawner's log) captured. */
static int spawn(const char *mode, uint64_t timeout_ns, double *secs, char *log, size_t len)
{
	char *argv[] = {"spawn_test", CHILD_FLAG, (char *)mode, NULL};
	uint64_t t0 = time_now_ns();
	struct capture c;
	int ret;

	capture_begin(&c);
	ret = launch_spawn_local(NRANKS, argv, "", "feed-token", timeout_ns, &last_signo, NULL, 0);
	*secs = (time_now_ns() - t0) / 1e9;
	capture_end(&c, log, len);
	print_message("%s: ret %d in %.2fs\n%s", mode, ret, *secs, log);
	return ret;
}

static void test_env_and_bootstrap(void **state)
{
	char log[4096];
	double s;

	(void)state;
	assert_int_equal(spawn("env", 1000000000ull, &s, log, sizeof(log)), 0);
	assert_null(strstr(log, "error"));
}

/* The survivors of a failure terminated; while rank 0 runs, not before its window to
 * name the ranks that caused it and write the case, however short the timeout (0.3 s):
 * the blame window's floor (launch/blame_window.h). */
#define BLAME_WINDOW_S (BLAME_WINDOW_MIN_MS / 1e3)

static void test_exit_code_kills_survivors(void **state)
{
	char log[4096];
	double s;

	(void)state;
	assert_int_equal(spawn("fail", 300000000ull, &s, log, sizeof(log)), 3);
	assert_non_null(strstr(log, "rank 2 exited with status 3"));
	assert_non_null(strstr(log, "terminating ranks 0,1,3 (SIGTERM)"));
	assert_true(s >= BLAME_WINDOW_S && s < BLAME_WINDOW_S + 2.5);
}

/* A timeout of 2 s, over the window's floor: the survivors get the timeout, no more (a
 * fixed 3.5 s window made a run with a 2 s timeout outlive it by 1.5 s). */
static void test_short_timeout_not_outlived(void **state)
{
	char log[4096];
	double s;

	(void)state;
	assert_int_equal(spawn("fail", 2000000000ull, &s, log, sizeof(log)), 3);
	assert_non_null(strstr(log, "terminating ranks 0,1,3 (SIGTERM)"));
	assert_true(s >= 2.0 && s < 3.4);
}

static void test_signal_reported(void **state)
{
	char log[4096];
	double s;

	(void)state;
	assert_int_equal(spawn("signal", 2000000000ull, &s, log, sizeof(log)), 128 + SIGKILL);
	assert_non_null(strstr(log, "rank 1 killed by signal 9"));
	/* The others finished on their own, well inside the timeout. */
	assert_null(strstr(log, "SIGTERM"));
}

static void test_sigkill_after_sigterm(void **state)
{
	char log[4096];
	double s;

	(void)state;
	assert_int_equal(spawn("stubborn", 200000000ull, &s, log, sizeof(log)), 5);
	assert_non_null(strstr(log, "rank 1 exited with status 5"));
	assert_non_null(strstr(log, "killing ranks 0,2,3 (SIGKILL)"));
	/* SIGTERM after rank 0's window, SIGKILL the timeout (0.2 s) later */
	assert_true(s >= BLAME_WINDOW_S + 0.2 && s < BLAME_WINDOW_S + 2.5);
}

/* A rank hung (stopped) after rank 0 failed and left: stopped within seconds, not after
 * the 60 s timeout (it used to take the timeout, then 2 s more for SIGKILL). */
static void test_hung_rank_after_rank0(void **state)
{
	char log[4096];
	double s;

	(void)state;
	assert_int_equal(spawn("hung", 60000000000ull, &s, log, sizeof(log)), 1);
	assert_non_null(strstr(log, "rank 0 exited with status 1"));
	assert_non_null(strstr(log, "terminating ranks 2 (SIGTERM)"));
	assert_non_null(strstr(log, "rank 2 killed by signal 15"));
	assert_true(s < 5); /* 1 s after rank 0; loose for a loaded host */
}

static void test_sigint_forwarded(void **state)
{
	char log[4096];
	double s;

	(void)state;
	assert_int_equal(spawn("sigint", 5000000000ull, &s, log, sizeof(log)), 128 + SIGINT);
	assert_int_equal(last_signo, SIGINT);
	assert_non_null(strstr(log, "forwarding it to ranks 0-3"));
	assert_non_null(strstr(log, "killed by signal 2"));
	assert_true(s < 3);
}

/* SIGTERM forwarded; ranks that ignore it are killed well before the 60 s timeout. */
static void test_sigterm_bounded(void **state)
{
	char log[4096];
	double s;

	(void)state;
	assert_int_equal(spawn("sigterm_deaf", 60000000000ull, &s, log, sizeof(log)),
			 128 + SIGTERM);
	assert_int_equal(last_signo, SIGTERM);
	assert_non_null(strstr(log, "(SIGKILL)")); /* some ranks may die of SIGTERM first */
	assert_true(s < 2.5); /* loose: 0.7 s grace on a loaded host */
}

/* A second Ctrl-C kills at once. */
static void test_second_sigint(void **state)
{
	char log[4096];
	double s;

	(void)state;
	assert_int_equal(spawn("sigint_twice", 60000000000ull, &s, log, sizeof(log)),
			 128 + SIGINT);
	assert_non_null(strstr(log, "got SIGINT again: killing ranks"));
	assert_true(s < 2.5);
}

static void test_bad_args(void **state)
{
	char *argv[] = {"x", NULL};

	(void)state;
	assert_int_equal(launch_spawn_local(0, argv, "", "t", 1000, &last_signo, NULL, 0), -EINVAL);
	assert_int_equal(launch_spawn_local(2, NULL, "", "t", 1000, &last_signo, NULL, 0), -EINVAL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_and_bootstrap),
		cmocka_unit_test(test_exit_code_kills_survivors),
		cmocka_unit_test(test_short_timeout_not_outlived),
		cmocka_unit_test(test_signal_reported),
		cmocka_unit_test(test_sigkill_after_sigterm),
		cmocka_unit_test(test_hung_rank_after_rank0),
		cmocka_unit_test(test_sigint_forwarded),
		cmocka_unit_test(test_sigterm_bounded),
		cmocka_unit_test(test_second_sigint),
		cmocka_unit_test(test_bad_args),
	};

	if (argc >= 3 && !strcmp(argv[1], CHILD_FLAG))
		return child_main(argv[2]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
