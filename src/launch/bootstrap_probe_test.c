/*
 * Rank 0's probe after a failure (bootstrap_probe) across real processes: what each
 * rank's reader thread answers for its application's threads, a rank slow to return
 * asked again until it did, a stuck one told apart from it, a stopped one silent, one
 * that left not asked, rank 0 answering for itself; and the whole within its bound.
 * Rank 0's own main thread stuck: its reader names it (on_self_stuck) a grace after
 * the abort, once, the grace of the job's blame window (a second at a 10 s timeout,
 * 0.43 s at 2 s); not when it returned in time, nor when only its comm thread stays
 * (the main thread's probe answers for rank 0 then).
 */
#include "launch/blame_window.h"
#include "launch/bootstrap_test_job.h"

#define PROBE_WAIT_MS  300
#define PROBE_GRACE_MS 1000

enum {
	R_REACTS = 1, /* leaves the case as soon as it hears of the abort */
	R_STUCK,      /* its comm thread waits on peer 1 since before the abort, for ever */
	R_SLOW,	      /* returns 400 ms after the abort: within the grace */
	R_LEFT,	      /* closes its bootstrap on the abort */
	R_STOPPED,    /* SIGSTOPped by the parent */
	R_COUNT,
};

static int probe_fn(struct job *j, int rank, struct bootstrap *b)
{
	struct activity *main_act = &j->acts[ACT_THREAD_MAIN], *comm = &j->acts[ACT_THREAD_COMM];
	uint64_t t0;

	act_set(main_act, ACT_CASE, -1, 0, time_now_ns());
	if (rank == R_STUCK)
		act_set(comm, ACT_RECV, 1, 7, time_now_ns());
	if (rank == R_SLOW)
		act_set(main_act, ACT_ALLREDUCE, -1, 9, time_now_ns());
	child_check(!bootstrap_barrier(b), __LINE__, "barrier");
	signal_ready(j);
	if (rank == 0) {
		struct bootstrap_rank_state st[R_COUNT];
		uint32_t w;
		double took;

		msleep(200); /* the parent stops R_STOPPED; R_LEFT is gone by then */
		bootstrap_abort(b, "probe test");
		/* rank 0's main thread returned from the case to probe, as run_rank_case's */
		act_set(main_act, ACT_CLOSING, -1, 0, time_now_ns());
		t0 = time_now_ns();
		child_check(!bootstrap_probe(b, PROBE_WAIT_MS, PROBE_GRACE_MS, st), __LINE__,
			    "probe");
		took = (time_now_ns() - t0) / 1e6;
		child_check(st[0].heard == BS_HEARD_ANSWERED && st[0].nact == 2 &&
			    st[0].act[ACT_THREAD_MAIN].what == ACT_CLOSING &&
			    st[0].abort_age_ms >= PROBE_GRACE_MS - 250,
			    __LINE__, "rank 0 answers for itself, last");
		child_check(st[R_REACTS].heard == BS_HEARD_ANSWERED &&
			    st[R_REACTS].act[ACT_THREAD_MAIN].what == ACT_CLOSING,
			    __LINE__, "the rank that reacted says so");
		child_check(st[R_STUCK].heard == BS_HEARD_ANSWERED && st[R_STUCK].nact == 2 &&
			    st[R_STUCK].abort_age_ms >= PROBE_GRACE_MS,
			    __LINE__, "the stuck rank answered, asked again after the grace");
		const struct act_snap *a = &st[R_STUCK].act[ACT_THREAD_COMM];

		child_check(a->what == ACT_RECV && a->peer == 1 && a->seq == 7 &&
			    a->age_ms >= PROBE_GRACE_MS, __LINE__, "what the stuck rank waits on");
		child_check(act_pick(st[R_STUCK].act, 2, st[R_STUCK].abort_age_ms,
				     PROBE_GRACE_MS) == ACT_THREAD_COMM &&
			    act_judge(a, st[R_STUCK].abort_age_ms, PROBE_GRACE_MS, &w) == ACT_STUCK,
			    __LINE__, "its comm thread is stuck");
		child_check(st[R_SLOW].heard == BS_HEARD_ANSWERED &&
			    st[R_SLOW].act[ACT_THREAD_MAIN].what == ACT_CLOSING,
			    __LINE__, "the slow rank was asked again, and had returned");
		child_check(st[R_LEFT].heard == BS_HEARD_NONE, __LINE__, "a rank that left");
		child_check(st[R_STOPPED].heard == BS_HEARD_SILENT, __LINE__, "the stopped rank");
		/* two rounds: the silent rank's wait, the grace, then a quick answer */
		child_check(took >= PROBE_GRACE_MS - 250 &&
			    took <= 2 * PROBE_WAIT_MS + PROBE_GRACE_MS + 300,
			    __LINE__, "the probe's bound");
		fprintf(stderr, "probe took %.0f ms\n", took);
		bootstrap_close(b);
		return 0;
	}
	for (t0 = time_now_ns(); !*bootstrap_abort_flag(b); msleep(5))
		child_check(time_now_ns() - t0 < 10000000000ull, __LINE__, "abort within 10 s");
	if (rank == R_LEFT) {
		bootstrap_close(b);
		return 0;
	}
	if (rank == R_REACTS)
		act_set(main_act, ACT_CLOSING, -1, 0, time_now_ns());
	if (rank == R_SLOW) {
		msleep(400);
		act_set(main_act, ACT_CLOSING, -1, 0, time_now_ns());
	}
	msleep(4000); /* alive, answering, until rank 0 is done (1.8 s at most) */
	bootstrap_close(b);
	return 0;
}

static void test_probe(void **state)
{
	struct job j = {.n = R_COUNT, .timeout_ms = 10000, .fn = probe_fn};
	uint64_t deadline;
	int st = -1;

	(void)state;
	job_start(&j);
	job_wait_ready(&j, R_COUNT);
	kill(j.pid[R_STOPPED], SIGSTOP);
	/* rank 0 first (bounded), then the stopped rank goes, then the others end */
	for (deadline = time_now_ns() + 15000000000ull; st == -1; msleep(10)) {
		if (waitpid(j.pid[0], &st, WNOHANG) == j.pid[0])
			break;
		if (time_now_ns() > deadline) {
			kill(j.pid[0], SIGKILL);
			waitpid(j.pid[0], &st, 0);
		}
	}
	kill(j.pid[R_STOPPED], SIGKILL);
	for (int r = 0; r < R_COUNT; r++) {
		if (r == 0) {
			j.status[0] = st;
			continue;
		}
		waitpid(j.pid[r], &j.status[r], 0);
	}
	close(j.ready[0]);
	expect_exit(&j, 0, 0);
	for (int r = 1; r < R_STOPPED; r++)
		expect_exit(&j, r, 0);
	job_cleanup(&j);
}

/* What rank 0's reader told on_self_stuck, in rank 0's process. */
static struct {
	int calls;	/* atomic */
	uint64_t at_ns; /* the first call */
	struct bootstrap_rank_state self;
	char why[256];
} told;

static void self_stuck_cb(void *ctx, const struct bootstrap_rank_state *self, const char *why)
{
	(void)ctx;
	if (__atomic_fetch_add(&told.calls, 1, __ATOMIC_ACQ_REL))
		return;
	told.at_ns = time_now_ns();
	told.self = *self;
	snprintf(told.why, sizeof(told.why), "%s", why);
}

/* test_self_stuck's variants: rank 0's main thread stays in the case, returns within
 * the grace, or returns at once while its comm thread stays (its probe answers then) */
static enum { R0_STUCK, R0_RETURNS, R0_COMM_STUCK } rank0;

/* Rank 1 aborts the job as a rank that timed out on rank 0 would; rank 0 as `rank0`. */
static int self_fn(struct job *j, int rank, struct bootstrap *b)
{
	struct activity *main_act = &j->acts[ACT_THREAD_MAIN];
	struct blame_window bw;
	uint64_t t0, abort_ns;
	uint32_t grace;

	blame_window_plan((uint64_t)j->timeout_ms * 1000000ull, &bw);
	grace = bw.probe_grace_ms;
	act_set(main_act, ACT_CASE, -1, 0, time_now_ns());
	child_check(!bootstrap_barrier(b), __LINE__, "barrier");
	if (rank == 1) {
		msleep(100);
		bootstrap_abort(b, "rank 1: allreduce: waits on recv from peer 0");
		msleep(2500); /* rank 0 is done by then */
		bootstrap_close(b);
		return 0;
	}
	act_set(main_act, ACT_TEST_DELAY, -1, 0, time_now_ns());
	if (rank0 == R0_COMM_STUCK)
		act_set(&j->acts[ACT_THREAD_COMM], ACT_RECV, 1, 7, time_now_ns());
	for (t0 = time_now_ns(); !*bootstrap_abort_flag(b); msleep(1))
		child_check(time_now_ns() - t0 < 10000000000ull, __LINE__, "abort within 10 s");
	abort_ns = time_now_ns();
	if (rank0 != R0_STUCK) {
		msleep(rank0 == R0_RETURNS ? 300 : 0);
		act_set(main_act, ACT_CLOSING, -1, 0, time_now_ns());
		msleep(grace + 500);
		child_check(!__atomic_load_n(&told.calls, __ATOMIC_ACQUIRE), __LINE__,
			    "rank 0's main thread returned within the grace: not told");
		bootstrap_close(b);
		return 0;
	}
	for (t0 = time_now_ns(); !__atomic_load_n(&told.calls, __ATOMIC_ACQUIRE); msleep(5))
		child_check(time_now_ns() - t0 < 5000000000ull, __LINE__, "told within 5 s");
	msleep(400); /* once, not at every tick of the reader (200 ms) */
	const struct act_snap *a = &told.self.act[ACT_THREAD_MAIN];
	double after = (told.at_ns - abort_ns) / 1e6;

	child_check(__atomic_load_n(&told.calls, __ATOMIC_ACQUIRE) == 1, __LINE__, "told once");
	child_check(told.self.heard == BS_HEARD_ANSWERED && told.self.nact == 2 &&
		    a->what == ACT_TEST_DELAY && a->age_ms >= grace &&
		    told.self.abort_age_ms >= grace, __LINE__, "what it was told");
	child_check(!strcmp(told.why, "rank 1 aborted: rank 1: allreduce: waits on recv from peer 0"),
		    __LINE__, "the job's reason");
	/* a grace after the abort, when its verdict is due (a busy host wakes late) */
	child_check(after >= grace - 5 && after <= grace + 250, __LINE__,
		    "told when the grace ended");
	fprintf(stderr, "told %.0f ms after the abort\n", after);
	bootstrap_close(b);
	return 0;
}

static void test_self_stuck(void **state)
{
	static const struct {
		int rank0;
		int timeout_ms;
	} cases[] = {
		{ R0_STUCK, 10000 }, { R0_RETURNS, 10000 }, { R0_COMM_STUCK, 10000 },
		/* a short timeout, a short window: the grace scales (launch/blame_window.h) */
		{ R0_STUCK, 2000 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct job j = {.n = 2, .timeout_ms = cases[i].timeout_ms, .fn = self_fn,
				.on_self_stuck = self_stuck_cb};

		rank0 = cases[i].rank0;
		job_start(&j);
		job_finish(&j);
		expect_exit(&j, 0, 0);
		expect_exit(&j, 1, 0);
		job_cleanup(&j);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_self_stuck),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
