/* The workload figures on hand-computed timelines: one definition, sums that add up. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "workload/metrics.h"

/* Two ranks, two iterations, two buckets; times in ns from each iteration's start. */
static struct ddp_iter it0[2] = { { 10, 30, 40, 0 }, { 10, 50, 55, 0 } };
static struct ddp_iter it1[2] = { { 12, 34, 41, 0 }, { 10, 45, 56, 0 } };
static struct ddp_bucket_times b0[4] = { { 20, 20, 28 }, { 30, 30, 40 },
					 { 30, 30, 38 }, { 50, 50, 55 } };
static struct ddp_bucket_times b1[4] = { { 22, 22, 30 }, { 34, 34, 41 },
					 { 30, 31, 39 }, { 45, 45, 56 } };

static void test_hand_computed(void **state)
{
	struct ddp_result res[2] = {
		{ .iterations = 2, .nbuckets = 2, .iter = it0, .bucket = b0, .first_wrong = -1 },
		{ .iterations = 2, .nbuckets = 2, .iter = it1, .bucket = b1, .first_wrong = -1 },
	};
	struct wl_iter_metrics m[2];
	struct wl_metrics s;

	(void)state;
	/* iteration 0: rank 1 ends backward last (34 > 30) */
	wl_metrics_iter(res, 2, 0, &m[0]);
	assert_int_equal(m[0].critical_rank, 1);
	assert_true(m[0].fwd_ns == 12 && m[0].bwd_ns == 22 && m[0].exposed_ns == 7);
	assert_true(m[0].iter_ns == 41);
	/* its buckets: 22..30 (inside backward 12..34) and 34..41 (after it) */
	assert_true(m[0].comm_ns == 15 && m[0].hidden_ns == 8);
	/* iteration 1: rank 0 (50 > 45); buckets 30..38 hidden, 50..55 exposed */
	wl_metrics_iter(res, 2, 1, &m[1]);
	assert_int_equal(m[1].critical_rank, 0);
	assert_true(m[1].fwd_ns == 10 && m[1].bwd_ns == 40 && m[1].exposed_ns == 5);
	assert_true(m[1].iter_ns == 55);
	assert_true(m[1].comm_ns == 13 && m[1].hidden_ns == 8);
	wl_metrics_sum(m, 2, 2, &s);
	/* comm-wait = (7 + 5) / (41 + 55); overlap = (8 + 8) / (15 + 13) */
	assert_true(s.comm_wait_share == 12.0 / 96.0);
	assert_true(s.overlap_efficiency == 16.0 / 28.0);
	assert_int_equal(s.critical_rank, 0); /* a tie: the lowest rank */
	assert_true(s.critical_share == 0.5);
}

/*
 * The bert_large case of issue 15: a bucket that starts 2.7 ms into a 19.7 ms backward
 * is partly hidden, so overlap efficiency is above 0; the stacked parts add up to the
 * iteration exactly, and exposed comm never exceeds the iteration.
 */
static void test_first_bucket_overlaps(void **state)
{
	struct ddp_iter it = { 5000000, 24700000, 60000000, 0 };
	struct ddp_bucket_times bt[2] = { { 7700000, 7700000, 30000000 },
					  { 24700000, 30000000, 60000000 } };
	struct ddp_result res = { .iterations = 1, .nbuckets = 2, .iter = &it, .bucket = bt };
	struct wl_iter_metrics m;
	struct wl_metrics s;

	(void)state;
	wl_metrics_iter(&res, 1, 0, &m);
	assert_true(m.fwd_ns + m.bwd_ns + m.exposed_ns == m.iter_ns);
	assert_true(m.exposed_ns == 35300000);
	assert_true(m.hidden_ns == 17000000);
	assert_true(m.comm_ns == 52300000);
	/* the critical rank's timeline of a 2-rank job: 17 of 52.3 ms hidden */
	wl_metrics_sum(&m, 1, 2, &s);
	assert_true(s.overlap_efficiency == 17000000.0 / 52300000.0);
	assert_true(s.comm_wait_share == 35300000.0 / 60000000.0);
}

/*
 * One rank: its AllReduces move nothing (a 1-rank quickstart read 3 us spans and
 * "overlap eff. 45.2%"); overlap efficiency is 1, as with no comm, while the times
 * and comm-wait share stay the measured ones.
 */
static void test_one_rank_no_comm(void **state)
{
	struct ddp_iter it = { 10000, 30000, 30500, 0 };
	struct ddp_bucket_times bt[2] = { { 20000, 20000, 20003 }, { 30000, 30497, 30500 } };
	struct ddp_result res = { .iterations = 1, .nbuckets = 2, .iter = &it, .bucket = bt };
	struct wl_iter_metrics m;
	struct wl_metrics s;

	(void)state;
	wl_metrics_iter(&res, 1, 0, &m);
	assert_true(m.comm_ns == 6 && m.hidden_ns == 3 && m.exposed_ns == 500);
	wl_metrics_sum(&m, 1, 1, &s);
	assert_true(s.overlap_efficiency == 1);
	assert_true(s.comm_wait_share == 500.0 / 30500.0);
}

/* No buckets: nothing to hide, overlap efficiency 1, exposed 0 when end == bwd_end. */
static void test_no_comm(void **state)
{
	struct ddp_iter it = { 10, 30, 30, 0 };
	struct ddp_result res = { .iterations = 1, .nbuckets = 0, .iter = &it };
	struct wl_iter_metrics m;
	struct wl_metrics s;

	(void)state;
	wl_metrics_iter(&res, 1, 0, &m);
	assert_true(m.exposed_ns == 0 && m.iter_ns == 30);
	wl_metrics_sum(&m, 1, 1, &s);
	assert_true(s.overlap_efficiency == 1 && s.comm_wait_share == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_computed),
		cmocka_unit_test(test_first_bucket_overlaps),
		cmocka_unit_test(test_no_comm),
		cmocka_unit_test(test_one_rank_no_comm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
