/*
 * Whom rank 0 names after a failed case (run/blame.c), from the probe's states: a rank
 * that does not answer, one whose thread has not returned from the case a grace after
 * the abort (with what it is stuck in; a GPU wait told apart), neither for a rank slow
 * to return or one that left, and the job's first reason kept at the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "run/run.h"

#define WHY   "rank 1: allreduce seq=40 ring: Connection timed out after 3000 ms idle"
#define GRACE 1000

static struct run_host hosts[8];

static int setup(void **state)
{
	(void)state;
	for (int r = 0; r < 8; r++) {
		snprintf(hosts[r].hostname, sizeof(hosts[r].hostname), "n%d", r / 2);
		hosts[r].pid = 4000 + r;
	}
	return 0;
}

/* A rank that answered: its main thread in main_what for main_ms, the abort abort_ms ago. */
static struct bootstrap_rank_state answered(enum act_what main_what, uint32_t main_ms,
					    uint32_t abort_ms)
{
	return (struct bootstrap_rank_state){
		.heard = BS_HEARD_ANSWERED,
		.abort_age_ms = abort_ms,
		.nact = ACT_THREADS,
		.act = { { .thread = ACT_THREAD_MAIN, .what = (uint8_t)main_what, .peer = -1,
			   .age_ms = main_ms },
			 { .thread = ACT_THREAD_COMM, .what = ACT_NONE, .peer = -1 } },
	};
}

/* The text for the probe's n states, or the job's reason alone (want NULL). */
static void expect_text(const struct bootstrap_rank_state *st, int n, const struct run_host *h,
			const char *want)
{
	char out[1024];

	assert_string_equal(run_blame_text(st, n, h, GRACE, WHY, out, sizeof(out)),
			    want ? want : WHY);
}

#define SILENT_1 "rank 1 (host n0, pid 4001) does not answer: its process is stopped (SIGSTOP, Ctrl-Z or a debugger) or its host froze; "
#define STUCK_COMM "rank 2 (host n1, pid 4002) is stuck: its comm thread has not returned from the case 1.2 s after the job aborted; it has been waiting on recv from peer 3 in allreduce seq 1287 for 12.5 s; "
#define STOPPED_ON "the job stopped on: " WHY
#define GPU_2 "rank 2 (host n1, pid 4002) is in a GPU synchronize: its main thread has not returned from the case 1.2 s after the job aborted; it has been waiting for a GPU stream to drain for 4.2 s (the abort cannot end a GPU wait: a kernel that long, or a hung GPU); "

static void test_nobody(void **state)
{
	struct bootstrap_rank_state st[4] = {
		{ .heard = BS_HEARD_NONE },
		{ .heard = BS_HEARD_NONE },		 /* left: the watchdog's story */
		answered(ACT_CLOSING, 2000, 2100),	 /* returned */
		answered(ACT_RECV, 9000, 400),		 /* may still return: not blamed */
	};

	(void)state;
	expect_text(st, 4, hosts, NULL);
	/* never heard of the abort: nothing to react to */
	st[3] = answered(ACT_RECV, 9000, ACT_NO_ABORT);
	expect_text(st, 4, hosts, NULL);
}

static void test_silent(void **state)
{
	struct bootstrap_rank_state st[4] = {
		{ .heard = BS_HEARD_NONE },
		{ .heard = BS_HEARD_SILENT },
		answered(ACT_CLOSING, 10, 20),
		answered(ACT_CLOSING, 10, 20),
	};

	(void)state;
	expect_text(st, 4, hosts, SILENT_1 STOPPED_ON);
	st[3].heard = BS_HEARD_SILENT;
	expect_text(st, 4, NULL, "ranks 1, 3 do not answer: their processes are stopped (SIGSTOP, Ctrl-Z or a debugger) or their hosts froze; " STOPPED_ON);
}

static void test_stuck(void **state)
{
	struct bootstrap_rank_state st[4] = {
		{ .heard = BS_HEARD_NONE },
		answered(ACT_CLOSING, 900, 1000),
		answered(ACT_TEST_DELAY, 4200, 1000),
		{ .heard = BS_HEARD_NONE },
	};

	(void)state;
	expect_text(st, 4, hosts, "rank 2 (host n1, pid 4002) is stuck: its main thread has not returned from the case 1.0 s after the job aborted; it has been in the test hook GRADSYNC_TEST_DELAY for 4.2 s; " STOPPED_ON);
	/* a workload: the comm thread waits on a peer, the main thread waits for it; the
	 * innermost says what is stuck */
	st[2] = answered(ACT_CASE, 31000, 1200);
	st[2].act[1] = (struct act_snap){ .thread = ACT_THREAD_COMM, .what = ACT_RECV, .peer = 3,
					  .seq = 1287, .age_ms = 12500 };
	expect_text(st, 4, hosts, STUCK_COMM STOPPED_ON);
	/* a stopped rank and a stuck one: both named, the stopped one first */
	st[1].heard = BS_HEARD_SILENT;
	expect_text(st, 4, hosts, SILENT_1 STUCK_COMM STOPPED_ON);
}

/*
 * A GPU wait past the grace is told for what it is, not as a hung rank: a stream sync
 * cannot look at the abort and must outlast it while kernels use the case's buffers.
 */
static void test_gpu_wait(void **state)
{
	struct bootstrap_rank_state st[4] = {
		{ .heard = BS_HEARD_NONE },
		answered(ACT_CLOSING, 900, 1000),
		answered(ACT_GPU_SYNC, 4200, 1200),
		answered(ACT_CLOSING, 900, 1000),
	};

	(void)state;
	expect_text(st, 4, hosts, GPU_2 STOPPED_ON);
	/* within the grace it may still return: nobody named */
	st[2] = answered(ACT_GPU_SYNC, 4200, 300);
	expect_text(st, 4, hosts, NULL);
	/* a stuck thread is told first, whatever the rank's number */
	st[2] = answered(ACT_GPU_SYNC, 4200, 1200);
	st[1] = answered(ACT_RECV, 5000, 1200);
	st[1].act[0].peer = 2;
	st[1].act[0].seq = 40;
	expect_text(st, 4, hosts, "rank 1 (host n0, pid 4001) is stuck: its main thread has not returned from the case 1.2 s after the job aborted; it has been waiting on recv from peer 2 in allreduce seq 40 for 5.0 s; " GPU_2 STOPPED_ON);
	/* a rank whose comm thread is stuck while its main thread waits for the GPU: the
	 * stuck thread is the one told */
	st[1] = answered(ACT_CLOSING, 900, 1000);
	st[2].act[1] = (struct act_snap){ .thread = ACT_THREAD_COMM, .what = ACT_RECV, .peer = 3,
					  .seq = 1287, .age_ms = 12500 };
	expect_text(st, 4, hosts, STUCK_COMM STOPPED_ON);
}

static void test_many_stuck(void **state)
{
	struct bootstrap_rank_state st[8] = { { .heard = BS_HEARD_NONE } };
	char out[4096], small[64];
	const char *t;

	(void)state;
	for (int r = 1; r < 8; r++)
		st[r] = answered(ACT_SETUP, 5000, 1500);
	t = run_blame_text(st, 8, hosts, GRACE, WHY, out, sizeof(out));
	/* four named, with what they do; the rest counted; the reason whole at the end */
	assert_non_null(strstr(t, "rank 4 (host n2, pid 4004) is stuck: its main thread has not returned from the case 1.5 s after the job aborted; it has been setting up the case for 5.0 s; 3 more ranks are stuck; the job stopped on: " WHY));
	assert_null(strstr(t, "rank 5 ("));
	/* a buffer too small keeps what fits, terminated */
	t = run_blame_text(st, 8, hosts, GRACE, WHY, small, sizeof(small));
	assert_int_equal(strlen(t), sizeof(small) - 1);
	assert_memory_equal(t, "rank 1 (host n0, pid 4001) is stuck", 35);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nobody),
		cmocka_unit_test(test_silent),
		cmocka_unit_test(test_stuck),
		cmocka_unit_test(test_gpu_wait),
		cmocka_unit_test(test_many_stuck),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
