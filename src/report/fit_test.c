/* alpha-beta fit: recovery from synthetic sweeps, constraints, and one report case's fit. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "coll/schedule.h"
#include "report/fit.h"
#include "report/fixture.h"
#include "report/jget.h"
#include "report/project.h"

static void shape(int algo, int n, double *steps, double *factor)
{
	struct sched_cost c;

	assert_int_equal(sched_cost(algo, n, &c), 0);
	*steps = c.steps;
	*factor = c.wire_factor;
}

/* A 4KiB..1GiB sweep from known alpha, beta; noise is a fixed +-amp pattern. */
static int sweep(int algo, int n, double alpha, double beta, double amp, struct ab_point *p)
{
	double size;
	int k = 0;

	for (size = 4096; size <= 1073741824.0; size *= 2, k++) {
		shape(algo, n, &p[k].steps, &p[k].factor);
		p[k].bytes = size;
		p[k].time_s = (alpha * p[k].steps + beta * size * p[k].factor) *
			      (1 + amp * ((k % 2) ? 1 : -1));
	}
	return k;
}

static void test_recovers_alpha_beta(void **state)
{
	static const struct {
		int algo, n;
		double alpha, beta, amp;
	} cases[] = {
		{ ALGO_RING, 4, 2e-6, 1 / 12e9, 0 },
		{ ALGO_RING, 16, 25e-6, 1 / 2.5e9, 0 },
		{ ALGO_TREE, 8, 5e-6, 1 / 45e9, 0 },
		{ ALGO_RHD, 32, 1.5e-6, 1 / 90e9, 0 },
		/* 0.5% noise alternating in sign still lands within 1%. */
		{ ALGO_RING, 8, 3e-6, 1 / 40e9, 0.005 },
	};
	struct ab_point p[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ab_model m = { 0 };
		int n = sweep(cases[i].algo, cases[i].n, cases[i].alpha, cases[i].beta,
			      cases[i].amp, p);

		assert_int_equal(ab_fit(p, n, &m), 0);
		assert_true(fabs(m.alpha_s / cases[i].alpha - 1) < 0.01);
		assert_true(fabs(m.beta_s_per_B / cases[i].beta - 1) < 0.01);
		assert_int_equal(m.npoints, n);
		if (cases[i].amp == 0)
			assert_true(m.rel_rms < 1e-9);
		else
			assert_true(m.rel_rms > 0.003 && m.rel_rms < 0.007);
	}
}

static void test_constraints_and_errors(void **state)
{
	struct ab_point p[4] = {
		{ 1000, 1e-6, 2, 1 },
		{ 2000, 2e-6, 2, 1 },
		{ 4000, 4e-6, 2, 1 },
		{ 8000, 8e-6, 2, 1 },
	};
	struct ab_model m = { 0 };

	(void)state;
	/* Pure bandwidth: alpha would come out ~0; it is never negative. */
	p[0].time_s = 0.98e-6;
	assert_int_equal(ab_fit(p, 4, &m), 0);
	assert_true(m.alpha_s >= 0 && m.beta_s_per_B > 0);
	assert_true(fabs(m.beta_s_per_B / 1e-9 - 1) < 0.02);
	/* Time falling with size: beta held at 0, alpha the weighted mean. */
	p[0].time_s = 9e-6;
	p[1].time_s = 8e-6;
	p[2].time_s = 7e-6;
	p[3].time_s = 6e-6;
	assert_int_equal(ab_fit(p, 4, &m), 0);
	assert_true(m.beta_s_per_B == 0 && m.alpha_s > 0);
	/* One size, no time, or a zero time: nothing to fit. */
	assert_int_equal(ab_fit(p, 1, &m), -EINVAL);
	p[1].bytes = p[2].bytes = p[3].bytes = p[0].bytes;
	assert_int_equal(ab_fit(p, 4, &m), -EINVAL);
	p[1].bytes = 2000;
	p[2].time_s = 0;
	assert_int_equal(ab_fit(p, 4, &m), -EINVAL);
}

static void test_fit_report_case(void **state)
{
	json_t *doc = report_fixture("ib_node_a");
	json_t *ib = json_array_get(json_object_get(doc, "cases"), 1);
	json_t *tcp = json_array_get(json_object_get(doc, "cases"), 0);
	struct report_set s = { 0 };
	struct tier_fit f = { 0 };

	(void)state;
	assert_int_equal(report_set_add_json(&s, "r", doc), 0);
	assert_int_equal(report_set_finish(&s, NULL), 0);
	assert_string_equal(jget_str(ib, "name"), "transport=ib");
	/* The fixture's ib: alpha 2.4us, 46.5 GB/s on the wire; p50 is 0.98 of the mean. */
	assert_int_equal(project_fit_case(&s, 1, &f), 0);
	assert_true(fabs(f.ab.alpha_s / (2.4e-6 * 0.98) - 1) < 0.03);
	assert_true(fabs(f.ab.beta_s_per_B * 46.5e9 / 0.98 - 1) < 0.03);
	assert_true(f.ab.rel_rms < 0.02);
	json_array_clear(json_object_get(tcp, "collective"));
	assert_int_equal(project_fit_case(&s, 0, &f), -ENOENT);
	report_set_free(&s);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recovers_alpha_beta),
		cmocka_unit_test(test_constraints_and_errors),
		cmocka_unit_test(test_fit_report_case),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
