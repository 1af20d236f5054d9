/* The two-tier model: loads read from the schedules against hand counts, fits, verdicts, layouts. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "coll/schedule.h"
#include "report/tier.h"

#define P(ch) ((struct tier_pipe){ (ch), 0 })

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1, fabs(b));
}

static void test_loads_by_hand(void **state)
{
	static const struct {
		int algo, hosts, rph, channels;
		double steps_intra, steps_inter, bytes_intra, bytes_inter; /* bytes in S */
	} t[] = {
		/* ring: 2(n-1) steps of S/n through every host's link */
		{ ALGO_RING, 2, 1, 2, 0, 2, 0, 1.0 },
		{ ALGO_RING, 8, 1, 2, 0, 14, 0, 1.75 },
		/* one host: the same steps, inside it */
		{ ALGO_RING, 1, 4, 2, 6, 0, 1.5, 0 },
		/* 2 hosts x 2: each step has one rank pair crossing each link, 6 steps of S/4 */
		{ ALGO_RING, 2, 2, 2, 6, 6, 1.5, 1.5 },
		/* hierarchical 2x2: reduce-scatter and all-gather inside (S/2 each way), the
		 * two ranks of a host each exchanging S/2 * 2(N-1)/N = S/2 across: S per link */
		{ ALGO_HIERARCHICAL, 2, 2, 2, 2, 2, 1.0, 1.0 },
		/* rhd 4x1: halving S/2 then S/4, doubling S/4 then S/2: 1.5 S per link */
		{ ALGO_RHD, 4, 1, 2, 0, 4, 0, 1.5 },
	};
	const double S = 1 << 20;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct tier_load l;

		assert_int_equal(tier_load(t[i].algo, (struct tier_layout){ t[i].hosts, t[i].rph },
					   S, 4, (struct tier_pipe){ t[i].channels, 0 }, &l), 0);
		assert_true(near(l.steps[TIER_INTRA], t[i].steps_intra));
		assert_true(near(l.steps[TIER_INTER], t[i].steps_inter));
		assert_true(near(l.bytes[TIER_INTRA], t[i].bytes_intra * S));
		assert_true(near(l.bytes[TIER_INTER], t[i].bytes_inter * S));
		tier_load_free(&l);
	}
}

static void test_tree_pipeline(void **state)
{
	/* Tree levels load different links: with one piece in flight the steps add up,
	 * with enough pieces the busiest link's total is the limit, never below it. */
	struct tier_load one, many;
	const double S = 1 << 20;

	(void)state;
	assert_int_equal(tier_load(ALGO_TREE, (struct tier_layout){ 8, 1 }, S, 4, (struct tier_pipe){ 1, 0 }, &one), 0);
	assert_int_equal(tier_load(ALGO_TREE, (struct tier_layout){ 8, 1 }, S, 4, (struct tier_pipe){ 64, 0 }, &many), 0);
	assert_true(one.bytes[TIER_INTER] >= many.bytes[TIER_INTER]);
	assert_true(many.bytes[TIER_INTER] >= S); /* an inner node takes in two halves */
	assert_true(near(one.steps[TIER_INTER], 6));
	tier_load_free(&many);
	/* a buffer of one piece (tree: 2 chunks) has one piece in flight, whatever channels */
	assert_int_equal(tier_load(ALGO_TREE, (struct tier_layout){ 8, 1 }, S, 4,
				   (struct tier_pipe){ 64, S / 2 }, &many), 0);
	assert_true(near(many.bytes[TIER_INTER], one.bytes[TIER_INTER]));
	tier_load_free(&one);
	tier_load_free(&many);
}

/* Tree on one rank per host, 8 pieces in flight of many: the executor's staggered
 * pipelining as tests/cluster/pipesim.py models it (2.06 S at 4 hosts; at 8, 2.4-2.5 S
 * by the order simultaneous completions are taken in), above the 2 S the busiest link
 * carries; the ring keeps its 2(n-1)/n. */
static void test_tree_staggered_model(void **state)
{
	const struct { int hosts; double tree, tol; } t[] = { { 4, 2.062, 0.01 }, { 8, 2.45, 0.1 } };
	const double S = 64 << 20;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct tier_load l;

		assert_int_equal(tier_load(ALGO_TREE, (struct tier_layout){ t[i].hosts, 1 }, S, 4,
					   (struct tier_pipe){ 8, 512 << 10 }, &l), 0);
		print_message("tree %d hosts: %.3f S\n", t[i].hosts, l.bytes[TIER_INTER] / S);
		assert_true(fabs(l.bytes[TIER_INTER] / S - t[i].tree) < t[i].tol);
		tier_load_free(&l);
		assert_int_equal(tier_load(ALGO_RING, (struct tier_layout){ t[i].hosts, 1 }, S, 4,
					   (struct tier_pipe){ 8, 512 << 10 }, &l), 0);
		assert_true(near(l.bytes[TIER_INTER], 2.0 * (t[i].hosts - 1) / t[i].hosts * S));
		tier_load_free(&l);
	}
}

static void test_errors(void **state)
{
	struct tier_load l;

	(void)state;
	assert_int_equal(tier_load(ALGO_AUTO, (struct tier_layout){ 2, 1 }, 1e6, 4, P(2), &l), -EINVAL);
	assert_int_equal(tier_load(ALGO_RING, (struct tier_layout){ 0, 1 }, 1e6, 4, P(2), &l), -EINVAL);
	assert_int_equal(tier_load(ALGO_RING, (struct tier_layout){ 2, 1 }, 1e6, 4, P(0), &l), -EINVAL);
	assert_int_equal(tier_load(ALGO_RING, (struct tier_layout){ TIER_MAX_RANKS, 2 }, 1e6, 4,
				   P(2), &l), -E2BIG);
	/* one rank or nothing to move: no steps */
	assert_int_equal(tier_load(ALGO_RING, (struct tier_layout){ 1, 1 }, 1e6, 4, P(2), &l), 0);
	assert_int_equal(l.nsteps, 0);
	assert_int_equal(tier_load(ALGO_RING, (struct tier_layout){ 4, 1 }, 2, 4, P(2), &l), 0);
	assert_int_equal(l.nsteps, 0);
}

/* Fit on 2 hosts (every algorithm is the same there), predict 4 and 8 exactly. */
static void test_fit_then_project(void **state)
{
	struct tier_model truth = {
		.tier[TIER_INTER] = { .valid = true, .ab = { .alpha_s = 40e-6, .beta_s_per_B = 1 / 12e6 } },
		.tier[TIER_INTRA] = { .valid = true, .ab = { .alpha_s = 5e-6, .beta_s_per_B = 1 / 2e9 } },
	};
	struct tier_sample s[12];
	struct tier_model fit = { 0 };
	int i, n = 0, algo;

	(void)state;
	for (i = 0; i < 6; i++) {
		double b = 65536.0 * (1 << (2 * i));

		s[n++] = (struct tier_sample){ ALGO_RING, { 2, 1 }, b, 4, P(8),
					       tier_time(&truth, ALGO_RING, (struct tier_layout){ 2, 1 },
							 b, 4, P(8)) };
		s[n++] = (struct tier_sample){ ALGO_RING, { 1, 2 }, b, 4, P(8),
					       tier_time(&truth, ALGO_RING, (struct tier_layout){ 1, 2 },
							 b, 4, P(8)) };
	}
	{
		struct tier_sample inter[6], intra[6];

		for (i = 0; i < 6; i++) {
			inter[i] = s[2 * i];
			intra[i] = s[2 * i + 1];
		}
		assert_int_equal(tier_fit_samples(TIER_INTER, inter, 6, NULL, &fit.tier[TIER_INTER]), 0);
		assert_int_equal(tier_fit_samples(TIER_INTRA, intra, 6, NULL, &fit.tier[TIER_INTRA]), 0);
	}
	assert_true(fabs(fit.tier[TIER_INTER].ab.alpha_s - 40e-6) < 1e-9);
	assert_true(fabs(fit.tier[TIER_INTER].ab.beta_s_per_B * 12e6 - 1) < 1e-6);
	assert_int_equal(fit.tier[TIER_INTER].nsizes, 6);
	for (algo = ALGO_RING; algo <= ALGO_HIERARCHICAL; algo++) {
		static const struct tier_layout lays[] = { { 4, 1 }, { 8, 1 }, { 2, 2 }, { 4, 2 } };

		for (i = 0; i < 4; i++) {
			double want = tier_time(&truth, algo, lays[i], 64 << 20, 4, P(8));
			double got = tier_time(&fit, algo, lays[i], 64 << 20, 4, P(8));

			assert_true(fabs(got - want) <= 1e-6 * want);
		}
	}
	/* too few points */
	assert_int_equal(tier_fit_samples(TIER_INTER, s, 1, NULL, &fit.tier[TIER_INTER]), -EINVAL);
	assert_false(fit.tier[TIER_INTER].valid);
}

static void test_verdicts(void **state)
{
	static const struct {
		bool valid;
		double alpha, beta, err;
		int nsizes;
		enum fit_verdict want;
		enum fit_reason reason;
		const char *why;
	} t[] = {
		{ true, 10e-6, 1e-9, 0.03, 6, FIT_GOOD, FIT_WHY_NONE, "" },
		{ true, 10e-6, 1e-9, 0.18, 6, FIT_POOR, FIT_WHY_ERROR, "fit error 18% is above 15%" },
		{ true, 0, 1e-9, 0.03, 6, FIT_POOR, FIT_WHY_ALPHA, "alpha held at 0" },
		/* alpha unresolved too, but the error is what the verdict names */
		{ true, 0, 1e-9, 0.18, 6, FIT_POOR, FIT_WHY_ERROR, "fit error 18% is above 15%" },
		{ true, 10e-6, 0, 0.03, 6, FIT_POOR, FIT_WHY_BETA, "beta held at 0" },
		{ true, 10e-6, 1e-9, 0.03, 2, FIT_POOR, FIT_WHY_SIZES, "2 sizes" },
		/* the seed's 49%: refused */
		{ true, 10e-6, 1e-9, 0.49, 6, FIT_UNUSABLE, FIT_WHY_ERROR_REFUSED,
		  "fit error 49% is above 35%" },
		{ false, 0, 0, 0, 0, FIT_UNUSABLE, FIT_WHY_NO_FIT, "no fit" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct tier_fit f = { .valid = t[i].valid, .nsizes = t[i].nsizes,
				      .ab = { .alpha_s = t[i].alpha, .beta_s_per_B = t[i].beta,
					      .rel_rms = t[i].err } };
		char why[192];

		assert_int_equal(tier_fit_verdict(&f, why, sizeof(why)), t[i].want);
		assert_non_null(strstr(why, t[i].why));
		assert_int_equal(tier_fit_reason(&f), t[i].reason);
	}
}

static void test_layout_and_fill(void **state)
{
	json_t *blocks = json_pack("{s:[{s:i,s:i},{s:i,s:i},{s:i,s:i},{s:i,s:i}]}", "hosts",
				   "rank", 0, "host_index", 0, "rank", 1, "host_index", 0,
				   "rank", 2, "host_index", 1, "rank", 3, "host_index", 1);
	json_t *mixed = json_pack("{s:[{s:i,s:s},{s:i,s:s},{s:i,s:s}]}", "hosts", "rank", 0,
				  "hostname", "a", "rank", 1, "hostname", "b", "rank", 2,
				  "hostname", "a");
	struct tier_layout l;
	struct tier_model m = { .tier[TIER_INTER] = { .valid = true, .ab = { .alpha_s = 1 } } };

	(void)state;
	assert_int_equal(tier_layout_of(blocks, &l), 0);
	assert_int_equal(l.hosts, 2);
	assert_int_equal(l.ranks_per_host, 2);
	assert_int_equal(tier_layout_of(mixed, &l), -EINVAL);
	assert_int_equal(tier_model_fill(&m), 0);
	assert_true(m.tier[TIER_INTRA].valid && m.tier[TIER_INTRA].assumed);
	assert_false(m.tier[TIER_INTER].assumed);
	memset(&m, 0, sizeof(m));
	assert_int_equal(tier_model_fill(&m), -ENOENT);
	json_decref(blocks);
	json_decref(mixed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loads_by_hand),
		cmocka_unit_test(test_tree_pipeline),
		cmocka_unit_test(test_tree_staggered_model),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_fit_then_project),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_layout_and_fill),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
