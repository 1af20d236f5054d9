/*
 * Bootstrap failure handling across real processes: a rank killed mid-run, an explicit
 * abort, timeouts that name the late ranks, protocol mismatches.
 */
#include <pthread.h>

#include "launch/bootstrap_test_job.h"

static int victim;

/*
 * After a barrier the victim parks; the parent SIGKILLs it. The survivors sit in a
 * barrier that can never complete: it must end in -ECANCELED naming the victim, well
 * before the 10 s collective timeout.
 */
static int kill_fn(struct job *j, int rank, struct bootstrap *b)
{
	char want[64];
	uint64_t t0;
	int ret;

	child_check(!bootstrap_barrier(b), __LINE__, "barrier");
	signal_ready(j);
	if (rank == victim) {
		pause();
		return 1;
	}
	t0 = time_now_ns();
	ret = bootstrap_barrier(b);
	child_check(ret == -ECANCELED, __LINE__, "barrier ends in -ECANCELED");
	child_check(time_now_ns() - t0 < 3000000000ull, __LINE__, "abort seen within 3 s");
	child_check(__atomic_load_n(bootstrap_abort_flag(b), __ATOMIC_ACQUIRE) != 0, __LINE__,
		    "abort flag");
	snprintf(want, sizeof(want), "rank %d exited unexpectedly (connection to it closed)",
		 victim);
	child_check(strstr(bootstrap_abort_reason(b), want) != NULL, __LINE__, "reason");
	/* Later calls fail at once. */
	child_check(bootstrap_bcast(b, want, 1) == -ECANCELED, __LINE__, "bcast after abort");
	bootstrap_close(b);
	return 0;
}

static void run_kill(int n, int who)
{
	struct job j = {.n = n, .timeout_ms = 10000, .fn = kill_fn};

	victim = who;
	job_start(&j);
	job_wait_ready(&j, n);
	msleep(100);
	kill(j.pid[who], SIGKILL);
	job_finish(&j);
	for (int r = 0; r < n; r++) {
		if (r == who) {
			assert_true(WIFSIGNALED(j.status[r]) && WTERMSIG(j.status[r]) == SIGKILL);
			continue;
		}
		expect_exit(&j, r, 0);
	}
	job_cleanup(&j);
}

static void test_kill_rank(void **state)
{
	(void)state;
	run_kill(3, 2);
	run_kill(5, 3);
}

static void test_kill_rank0(void **state)
{
	(void)state;
	run_kill(3, 0);
}

/* Rank 1 gives up: everyone hears why. */
static int abort_fn(struct job *j, int rank, struct bootstrap *b)
{
	(void)j;
	child_check(!bootstrap_barrier(b), __LINE__, "barrier");
	if (rank == 1) {
		/* Let the others finish the first barrier: an abort cancels calls in flight. */
		msleep(200);
		bootstrap_abort(b, "GPU 1 fell off the bus");
		child_check(__atomic_load_n(bootstrap_abort_flag(b), __ATOMIC_ACQUIRE) != 0,
			    __LINE__, "own flag");
	} else {
		child_check(bootstrap_barrier(b) == -ECANCELED, __LINE__, "barrier cancelled");
	}
	child_check(!strcmp(bootstrap_abort_reason(b), "rank 1 aborted: GPU 1 fell off the bus"),
		    __LINE__, "reason");
	bootstrap_close(b);
	return 0;
}

static void test_abort(void **state)
{
	struct job j = {.n = 4, .timeout_ms = 10000, .fn = abort_fn};
	double s;

	(void)state;
	job_start(&j);
	s = job_finish(&j);
	for (int r = 0; r < j.n; r++)
		expect_exit(&j, r, 0);
	assert_true(s < 5);
	job_cleanup(&j);
}

/*
 * Rank 1 sends its part of a gatherv, then exits without a goodbye (a crash in teardown);
 * rank 0 enters the gatherv only once it has seen the abort: the part is in, so the
 * gatherv completes with it (the case's results are whole), and the barrier after it,
 * which rank 1 never joins, ends in -ECANCELED at once.
 */
static int sent_then_gone_fn(struct job *j, int rank, struct bootstrap *b)
{
	uint64_t mine = 0x1234 + (uint64_t)rank, t0;
	size_t *lens = NULL;
	void **all = NULL;

	(void)j;
	child_check(!bootstrap_barrier(b), __LINE__, "barrier");
	if (rank == 1) {
		child_check(!bootstrap_gatherv(b, &mine, sizeof(mine), &all, &lens), __LINE__,
			    "gatherv sent");
		_exit(0);
	}
	t0 = time_now_ns();
	while (!__atomic_load_n(bootstrap_abort_flag(b), __ATOMIC_ACQUIRE) &&
	       time_now_ns() - t0 < 5000000000ull)
		msleep(10);
	child_check(__atomic_load_n(bootstrap_abort_flag(b), __ATOMIC_ACQUIRE) != 0, __LINE__,
		    "rank 1's exit seen");
	child_check(!bootstrap_gatherv(b, &mine, sizeof(mine), &all, &lens), __LINE__,
		    "gatherv after the abort, its part in");
	child_check(lens && lens[1] == sizeof(mine) && all &&
			    *(uint64_t *)all[1] == 0x1235,
		    __LINE__, "rank 1's part");
	for (int r = 0; all && r < 2; r++)
		free(all[r]);
	free(all);
	free(lens);
	child_check(bootstrap_barrier(b) == -ECANCELED, __LINE__, "barrier after it cancelled");
	child_check(bootstrap_bcast(b, &mine, 1) == -ECANCELED, __LINE__, "bcast cancelled");
	bootstrap_close(b);
	return 0;
}

static void test_sent_then_gone(void **state)
{
	struct job j = {.n = 2, .timeout_ms = 10000, .fn = sent_then_gone_fn};

	(void)state;
	job_start(&j);
	job_finish(&j);
	expect_exit(&j, 0, 0);
	job_cleanup(&j);
}

/* Ranks 2 and 3 never join the barrier: rank 0 names them, everyone learns it. */
static int late_fn(struct job *j, int rank, struct bootstrap *b)
{
	const char *want = "timed out after 1s waiting for ranks 2,3 (barrier)";
	uint64_t t0 = time_now_ns();
	int ret;

	(void)j;
	if (rank >= 2) {
		msleep(1800);
		child_check(__atomic_load_n(bootstrap_abort_flag(b), __ATOMIC_ACQUIRE) != 0,
			    __LINE__, "late ranks see the abort");
	} else {
		ret = bootstrap_barrier(b);
		child_check(ret == (rank == 0 ? -ETIMEDOUT : -ECANCELED), __LINE__, "barrier ret");
		child_check(time_now_ns() - t0 < 1600000000ull, __LINE__, "bounded by the timeout");
	}
	child_check(strstr(bootstrap_abort_reason(b), want) != NULL, __LINE__, "reason");
	bootstrap_close(b);
	return 0;
}

static void test_timeout_names_ranks(void **state)
{
	struct job j = {.n = 4, .timeout_ms = 1000, .fn = late_fn};

	(void)state;
	job_start(&j);
	job_finish(&j);
	for (int r = 0; r < j.n; r++)
		expect_exit(&j, r, 0);
	assert_non_null(strstr(read_log(&j, 0),
			       "bootstrap: timed out after 1s waiting for ranks 2,3 (barrier)"));
	job_cleanup(&j);
}

/* Rank 2 never starts: rank 0's open names it, rank 1 (already in) is told. */
static int missing_open_fn(struct job *j, int rank)
{
	struct bootstrap *b;
	int ret;

	if (rank == 2)
		return 0;
	ret = open_rank(j, rank, &b);
	if (rank == 0) {
		child_check(ret == -ETIMEDOUT, __LINE__, "open times out");
		return 0;
	}
	child_check(ret == 0, __LINE__, "rank 1 opens");
	child_check(bootstrap_barrier(b) == -ECANCELED, __LINE__, "barrier cancelled");
	child_check(strstr(bootstrap_abort_reason(b), "waiting for rank 2 to connect") != NULL,
		    __LINE__, "reason names rank 2");
	bootstrap_close(b);
	return 0;
}

static void test_open_timeout(void **state)
{
	struct job j = {.n = 3, .timeout_ms = 700, .open_fn = missing_open_fn};

	(void)state;
	job_start(&j);
	job_finish(&j);
	for (int r = 0; r < j.n; r++)
		expect_exit(&j, r, 0);
	assert_non_null(strstr(read_log(&j, 0), "timed out after 0.7s waiting for rank 2 to "
						"connect"));
	job_cleanup(&j);
}

/* Nobody listens: a rank > 0 gives up after timeout_ms, naming the address. */
static void test_connect_timeout(void **state)
{
	struct bootstrap_opts o = {.rank = 1, .nranks = 2, .token = TOKEN, .timeout_ms = 300};
	struct bootstrap *b = (struct bootstrap *)&o;
	char addr[64];
	uint64_t t0 = time_now_ns();

	(void)state;
	free_addr(addr, sizeof(addr));
	o.addr = addr;
	assert_int_equal(bootstrap_open(&o, &b), -ETIMEDOUT);
	assert_null(b);
	assert_true(time_now_ns() - t0 < 1000000000ull);
}

/* Raise *flag after 200 ms, as a stop signal's handler would. */
static void *stop_later(void *flag)
{
	msleep(200);
	*(volatile sig_atomic_t *)flag = SIGTERM;
	return NULL;
}

/*
 * A rank > 0 asked to stop (bootstrap_opts.stop) before its bootstrap is open: -EINTR at
 * once while nobody listens, and after the 1 s grace while something holds the port
 * and leaves its HELLO unanswered (a stopped rank 0), long before timeout_ms.
 */
static void test_connect_stopped(void **state)
{
	volatile sig_atomic_t stop = 0;
	struct bootstrap_opts o = {.rank = 1, .nranks = 2, .token = TOKEN, .timeout_ms = 20000,
				   .stop = &stop};
	struct bootstrap *b = (struct bootstrap *)&o;
	char addr[64];
	uint64_t t0 = time_now_ns(), took;
	pthread_t t;
	int lfd;

	(void)state;
	free_addr(addr, sizeof(addr));
	o.addr = addr;
	assert_int_equal(pthread_create(&t, NULL, stop_later, (void *)&stop), 0);
	assert_int_equal(bootstrap_open(&o, &b), -EINTR);
	pthread_join(t, NULL);
	assert_null(b);
	took = time_now_ns() - t0;
	assert_true(took >= 200000000ull && took < 600000000ull);

	stop = 0;
	lfd = bound_listener(addr, sizeof(addr)); /* listens, never accepts */
	o.addr = addr;
	t0 = time_now_ns();
	assert_int_equal(pthread_create(&t, NULL, stop_later, (void *)&stop), 0);
	assert_int_equal(bootstrap_open(&o, &b), -EINTR);
	pthread_join(t, NULL);
	took = time_now_ns() - t0;
	assert_true(took >= 1200000000ull && took < 2000000000ull);
	close(lfd);
}

/* Mismatched allgather lengths are a protocol error that stops the job. */
static int mismatch_fn(struct job *j, int rank, struct bootstrap *b)
{
	uint8_t mine[16] = {0}, all[16 * MAX_RANKS];
	int ret = bootstrap_allgather(b, mine, all, rank == 1 ? 8 : 16);

	(void)j;
	child_check(ret == (rank == 0 ? -EPROTO : -ECANCELED), __LINE__, "allgather fails");
	child_check(strstr(bootstrap_abort_reason(b), "rank 1 gave 8 bytes to allgather") != NULL,
		    __LINE__, "reason");
	bootstrap_close(b);
	return 0;
}

static void test_len_mismatch(void **state)
{
	struct job j = {.n = 3, .timeout_ms = 5000, .fn = mismatch_fn};

	(void)state;
	job_start(&j);
	job_finish(&j);
	for (int r = 0; r < j.n; r++)
		expect_exit(&j, r, 0);
	job_cleanup(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kill_rank),
		cmocka_unit_test(test_kill_rank0),
		cmocka_unit_test(test_abort),
		cmocka_unit_test(test_sent_then_gone),
		cmocka_unit_test(test_timeout_names_ranks),
		cmocka_unit_test(test_open_timeout),
		cmocka_unit_test(test_connect_timeout),
		cmocka_unit_test(test_connect_stopped),
		cmocka_unit_test(test_len_mismatch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
