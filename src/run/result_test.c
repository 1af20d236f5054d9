/*
 * The figures of one measured size (run/result.c) as numbers: the median is the stats'
 * p50, a rank that enters last in most iterations is the straggler only past the
 * rule's thresholds (10 iterations, 75% of them, 10% wait), per-rank means and times,
 * and an iteration's time is the ranks' mean (the largest for p2p rows).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <cmocka.h>

#include "run/run.h"

/* nranks samples of iters iterations: rank r takes ns[r] in every iteration, except
 * that rank `fast` takes fast_ns in the first fast_iters of them. */
static struct run_samples **samples(int nranks, int iters, const double *ns, int fast,
				    double fast_ns, int fast_iters)
{
	struct run_samples **s = calloc((size_t)nranks, sizeof(*s));

	for (int r = 0; r < nranks; r++) {
		s[r] = calloc(1, sizeof(**s) + (size_t)iters * sizeof(uint64_t));
		s[r]->iterations = iters;
		s[r]->first_wrong = -1;
		for (int i = 0; i < iters; i++)
			s[r]->ns[i] = (uint64_t)(r == fast && i < fast_iters ? fast_ns : ns[r]);
	}
	return s;
}

static void samples_free(struct run_samples **s, int nranks)
{
	for (int r = 0; r < nranks; r++)
		free(s[r]);
	free(s);
}

static void test_median(void **state)
{
	const double odd[] = { 5, 1, 3 }, even[] = { 4, 1, 3, 2 };
	struct rj_stats st;

	(void)state;
	assert_true(run_median(odd, 3) == 3);
	assert_true(run_median(even, 4) == 2); /* nearest rank: the lower middle */
	assert_true(run_median(odd, 0) == 0);
	run_stats(even, 4, 1e-3, &st);
	assert_true(fabs(st.avg - 2.5e-3) < 1e-12 && st.p50 == 2e-3 && st.max == 4e-3);
	run_stats(even, 0, 1, &st);
	assert_true(isnan(st.p50));
}

static void test_straggler(void **state)
{
	/* ranks 0, 1, 3 wait 1000 ns per iteration; rank 2 enters last, its time is short */
	const double ns[] = { 1000, 1000, 600, 1000 };
	const char *hosts[] = { "a", "a", "b", "b" };
	struct run_samples **s = samples(4, 20, ns, -1, 0, 0);
	struct rj_rank_stats rs;

	(void)state;
	assert_int_equal(run_rank_stats(s, 4, hosts, &rs), 0);
	assert_int_equal(rs.slowest, 2);
	assert_true(rs.slowest_share == 1.0);
	assert_true(fabs(rs.wait_share - 0.4) < 1e-9); /* (1000 - 600) / 1000 */
	assert_true(fabs(rs.spread - 1000.0 / 600) < 1e-9);
	assert_true(fabs(rs.mean_us[2] - 0.6) < 1e-9 && fabs(rs.mean_us[0] - 1.0) < 1e-9);
	assert_non_null(rs.iter_us);
	assert_true(fabs(rs.iter_us[2 * 20 + 19] - 0.6) < 1e-12);
	assert_int_equal(rs.straggler.rank, 2);
	assert_string_equal(rs.straggler.host, "b");
	run_rank_stats_free(&rs);
	samples_free(s, 4);
}

/*
 * The per-rank stats of samples(4, iters, ns, fast, fast_ns, fast_iters): the slowest
 * rank is `slowest`, and no straggler is named. Gives the slowest's share and the wait
 * share for the case's own checks.
 */
static void no_straggler(int iters, const double *ns, int fast, double fast_ns, int fast_iters,
			 int slowest, double *slowest_share, double *wait_share)
{
	struct run_samples **s = samples(4, iters, ns, fast, fast_ns, fast_iters);
	struct rj_rank_stats rs;

	assert_int_equal(run_rank_stats(s, 4, NULL, &rs), 0);
	assert_int_equal(rs.slowest, slowest);
	assert_int_equal(rs.straggler.rank, -1);
	*slowest_share = rs.slowest_share;
	*wait_share = rs.wait_share;
	run_rank_stats_free(&rs);
	samples_free(s, 4);
}

static void test_no_straggler(void **state)
{
	const double ns[] = { 1000, 1000, 600, 1000 }, even[] = { 1000, 1000, 1000, 1000 };
	double share, wait;

	(void)state;
	/* too few iterations to name anyone */
	no_straggler(9, ns, -1, 0, 0, 2, &share, &wait);
	/* last in 14 of 20 iterations: below 75% */
	no_straggler(20, even, 1, 900, 14, 1, &share, &wait);
	assert_true(fabs(share - 0.7) < 1e-9);
	/* last every time but the others wait only 5% */
	no_straggler(20, even, 3, 950, 20, 3, &share, &wait);
	assert_true(fabs(wait - 0.05) < 1e-9);
}

/* 4 ranks drifting apart by a step: each leaves early in one iteration and waits that
 * much in the next, at a period of 300 (the 4-host ring of tests/cluster/RESULTS.md) */
/* Host CPU s/GB from 25 ticks on; fewer (3 ticks over a 14 ms span read 0.36 s/GB for
 * both tcp and shm) is '-'. */
static void test_host_cpu(void **state)
{
	const uint64_t tick = 10000000; /* USER_HZ 100 */

	(void)state;
	assert_true(isnan(run_host_cpu_s_per_GB(0.03, 0.084, tick)));
	assert_true(isnan(run_host_cpu_s_per_GB(0.249, 1.0, tick)));
	assert_float_equal(run_host_cpu_s_per_GB(0.25, 0.5, tick), 0.5, 1e-12);
	assert_float_equal(run_host_cpu_s_per_GB(2.0, 4.0, tick), 0.5, 1e-12);
	assert_true(isnan(run_host_cpu_s_per_GB(2.0, 0, tick)));
	assert_true(isnan(run_host_cpu_s_per_GB(2.0, 4.0, 0))); /* no /proc: unknown */
}

static void test_iter_time(void **state)
{
	const double drift[4][4] = {
		{ 370, 250, 370, 250 }, { 300, 300, 300, 300 },
		{ 250, 370, 250, 370 }, { 280, 280, 280, 280 } };
	const double pair[] = { 500, 700, 0, 0 };
	struct run_samples **s = samples(4, 4, pair, -1, 0, 0);

	(void)state;
	for (int r = 0; r < 4; r++)
		for (int i = 0; i < 4; i++)
			s[r]->ns[i] = (uint64_t)drift[r][i];
	/* every iteration 300: the slowest rank's time read 370 */
	for (int i = 0; i < 4; i++)
		assert_true(fabs(run_iter_time(s, 4, i, false) - 300) < 1e-9);
	samples_free(s, 4);
	/* write_bw/write_lat: ranks 0 and 1 time it, the others hold zeros */
	s = samples(4, 1, pair, -1, 0, 0);
	assert_true(run_iter_time(s, 4, 0, true) == 700);
	assert_true(run_iter_time(s, 4, 0, false) == 300);
	samples_free(s, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_straggler),
		cmocka_unit_test(test_no_straggler),
		cmocka_unit_test(test_iter_time),
		cmocka_unit_test(test_host_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
