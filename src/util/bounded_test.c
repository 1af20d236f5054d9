/*
 * The bounded call (util/bounded.h): one that returns in time hands its results back,
 * one that does not is given up on at the deadline, or once a signal's handler raised
 * the stop flag (after a grace, when the ops give one), and frees its argument when it
 * returns at last; the thread runs with every signal blocked; started and waited for in
 * two steps, calls run side by side.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/bounded.h"
#include "util/timeutil.h"

/* calls given up on, and args the test's drop freed (the thread's, once given up on) */
static int abandoned, dropped;

struct call {
	int pipe_r;     /* the call blocks reading it until the test writes a byte */
	int result;
	bool sigs_blocked;
};

static void call_read(void *arg)
{
	struct call *c = arg;
	sigset_t now;
	char b;

	pthread_sigmask(SIG_SETMASK, NULL, &now);
	c->sigs_blocked = sigismember(&now, SIGINT) && sigismember(&now, SIGTERM);
	c->result = c->pipe_r < 0 ? 42 : (int)read(c->pipe_r, &b, 1);
}

static void call_abandon(void *arg)
{
	(void)arg;
	abandoned++; /* on the caller */
}

static void call_drop(void *arg)
{
	free(arg);
	__atomic_add_fetch(&dropped, 1, __ATOMIC_SEQ_CST);
}

static const struct bounded_ops ops = {
	.call = call_read, .abandon = call_abandon, .drop = call_drop,
};

/* wait (at most 5 s) until the thread of a call given up on has dropped it: n drops */
static void wait_dropped(int n)
{
	for (int i = 0; i < 500 && __atomic_load_n(&dropped, __ATOMIC_SEQ_CST) < n; i++)
		usleep(10000);
	assert_int_equal(__atomic_load_n(&dropped, __ATOMIC_SEQ_CST), n);
}

/* A call that blocks reading the new pipe p until the test writes a byte into it. */
static struct call *call_on_pipe(int p[2])
{
	struct call *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	assert_int_equal(pipe(p), 0);
	c->pipe_r = p[0];
	return c;
}

/* handler taking SIGALRM us from now; *old to put back. */
static void alarm_in(void (*handler)(int), long us, struct sigaction *old)
{
	struct sigaction sa = { .sa_handler = handler };
	struct itimerval it = { .it_value = { .tv_usec = us } };

	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, old), 0);
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
}

static void test_returns_in_time(void **state)
{
	struct call *c = calloc(1, sizeof(*c));

	(void)state;
	c->pipe_r = -1;
	assert_int_equal(bounded_run(&ops, c, time_now_ns() + 5000000000ull, NULL), 0);
	/* the caller's again, results and all; never dropped */
	assert_int_equal(c->result, 42);
	assert_true(c->sigs_blocked);
	assert_int_equal(abandoned, 0);
	assert_int_equal(dropped, 0);
	free(c);
}

static void test_given_up_at_deadline(void **state)
{
	struct call *c = calloc(1, sizeof(*c));
	uint64_t t0 = time_now_ns(), took;
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	c->pipe_r = p[0];
	assert_int_equal(bounded_run(&ops, c, t0 + 200000000ull, NULL), -ETIMEDOUT);
	took = time_now_ns() - t0;
	assert_true(took >= 200000000ull && took < 2000000000ull);
	/* the call is still blocked: c is its thread's, dropped once the read returns */
	assert_int_equal(abandoned, 1);
	assert_int_equal(dropped, 0);
	assert_int_equal(bounded_pending(), 1);
	assert_int_equal(write(p[1], "x", 1), 1);
	wait_dropped(1);
	/* counted off once dropped: main runs the exit handlers again */
	for (int i = 0; i < 500 && bounded_pending(); i++)
		usleep(10000);
	assert_int_equal(bounded_pending(), 0);
	close(p[0]);
	close(p[1]);
}

/*
 * bounded_start, then bounded_wait: two calls under way at once, the second started before
 * the first is waited for. The one that returned hands its results back; the other, waited
 * for with its deadline already past (the first's wait used it up), is given up on at once.
 */
static void test_start_then_wait(void **state)
{
	struct call *quick = calloc(1, sizeof(*quick));
	int p[2], before = abandoned, dropped0 = dropped;
	struct call *stuck = call_on_pipe(p);
	struct bounded_job *jq, *js;
	uint64_t t0;

	(void)state;
	quick->pipe_r = -1;
	js = bounded_start(&ops, stuck);
	jq = bounded_start(&ops, quick);
	assert_non_null(js);
	assert_non_null(jq);
	assert_int_equal(bounded_wait(jq, time_now_ns() + 5000000000ull, NULL), 0);
	assert_int_equal(quick->result, 42);
	t0 = time_now_ns();
	assert_int_equal(bounded_wait(js, t0, NULL), -ETIMEDOUT);
	assert_true(time_now_ns() - t0 < 1000000000ull);
	assert_int_equal(abandoned, before + 1);
	assert_int_equal(bounded_wait(NULL, t0, NULL), 0); /* a call made by bounded_start */
	assert_int_equal(write(p[1], "x", 1), 1);
	wait_dropped(dropped0 + 1);
	free(quick);
	close(p[0]);
	close(p[1]);
}

static volatile sig_atomic_t stop_flag;

static void on_alarm(int sig)
{
	stop_flag = sig;
}

/*
 * A stop signal 150 ms into a call that would block for good (a lookup on a silent
 * resolver): its handler runs on the caller, the only thread that takes it, and the
 * wait ends within a poll slice of it, long before the deadline; the call is given up on
 * as at a deadline.
 */
static void test_stopped_by_signal(void **state)
{
	int p[2], before = abandoned, dropped0 = dropped;
	struct call *c = call_on_pipe(p);
	uint64_t t0 = time_now_ns(), took;
	struct sigaction old;

	(void)state;
	stop_flag = 0;
	alarm_in(on_alarm, 150000, &old);
	assert_int_equal(bounded_run(&ops, c, t0 + 30000000000ull, &stop_flag), -EINTR);
	took = time_now_ns() - t0;
	assert_int_equal(stop_flag, SIGALRM);
	assert_true(took >= 150000000ull);
	assert_true(took < 150000000ull + BOUNDED_STOP_POLL_NS + 500000000ull);
	assert_int_equal(abandoned, before + 1);
	assert_int_equal(dropped, dropped0);
	assert_int_equal(write(p[1], "x", 1), 1);
	wait_dropped(dropped0 + 1);
	sigaction(SIGALRM, &old, NULL);
	close(p[0]);
	close(p[1]);
}

/* The flag already raised: no wait at all; a call that is done still hands its results back. */
static void test_stop_before(void **state)
{
	struct call *c = calloc(1, sizeof(*c));
	uint64_t t0 = time_now_ns();
	int p[2], dropped0 = dropped;

	(void)state;
	assert_int_equal(pipe(p), 0);
	c->pipe_r = p[0];
	stop_flag = SIGINT;
	assert_int_equal(bounded_run(&ops, c, t0 + 30000000000ull, &stop_flag), -EINTR);
	assert_true(time_now_ns() - t0 < 1000000000ull);
	assert_int_equal(write(p[1], "x", 1), 1);
	wait_dropped(dropped0 + 1);
	close(p[0]);
	close(p[1]);
	stop_flag = 0;
}

static const struct bounded_ops ops_grace = {
	.call = call_read, .abandon = call_abandon, .drop = call_drop,
	.stop_grace_ns = 300000000ull,
};

static int grace_pipe_w = -1;

static void on_alarm_write(int sig)
{
	(void)sig;
	if (write(grace_pipe_w, "x", 1) != 1)
		grace_pipe_w = -2;
}

/*
 * With a grace: a stop lets the call go on that long. One that returns within it (a byte
 * 100 ms in) hands its results back; one that does not is given up on at its end.
 */
static void test_stop_grace(void **state)
{
	int p[2], before = abandoned, dropped0 = dropped;
	struct call *c = call_on_pipe(p);
	uint64_t t0 = time_now_ns(), took;
	struct sigaction old;

	(void)state;
	grace_pipe_w = p[1];
	stop_flag = SIGINT;
	alarm_in(on_alarm_write, 100000, &old);
	assert_int_equal(bounded_run(&ops_grace, c, t0 + 30000000000ull, &stop_flag), 0);
	assert_int_equal(c->result, 1);
	assert_int_equal(abandoned, before);
	assert_int_equal(grace_pipe_w, p[1]);
	sigaction(SIGALRM, &old, NULL);
	/* nothing comes: given up on once the grace is over */
	t0 = time_now_ns();
	assert_int_equal(bounded_run(&ops_grace, c, t0 + 30000000000ull, &stop_flag), -EINTR);
	took = time_now_ns() - t0;
	assert_true(took >= 300000000ull && took < 300000000ull + 500000000ull);
	assert_int_equal(abandoned, before + 1);
	assert_int_equal(write(p[1], "x", 1), 1);
	wait_dropped(dropped0 + 1);
	close(p[0]);
	close(p[1]);
	stop_flag = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_returns_in_time),
		cmocka_unit_test(test_given_up_at_deadline),
		cmocka_unit_test(test_start_then_wait),
		cmocka_unit_test(test_stopped_by_signal),
		cmocka_unit_test(test_stop_before),
		cmocka_unit_test(test_stop_grace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
