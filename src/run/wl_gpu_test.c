/* GEMM shapes of the workload's layers: multiples of 8, near the layer's FLOPs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "run/wl_gpu.h"

static void test_shapes(void **state)
{
	static const double flops[] = { 1e3, 1e6, 2.3e7, 1.16e8, 3.7e9, 6.9e10, 5.1e11, 4e13 };

	(void)state;
	for (size_t i = 0; i < sizeof(flops) / sizeof(flops[0]); i++) {
		int m, n, k;
		double got;

		wl_gemm_shape(flops[i], &m, &n, &k);
		got = 2.0 * m * n * (double)k;
		print_message("%.3g FLOP -> %d x %d x %d = %.3g\n", flops[i], m, n, k, got);
		assert_true(m % 8 == 0 && n % 8 == 0 && k % 8 == 0);
		assert_true(m >= 8 && n >= 8 && n <= 8192 && k <= 8192);
		if (flops[i] >= 1e7)
			assert_true(fabs(got / flops[i] - 1) < 0.05);
	}
}

/* Sizes from a table of our kernel's times: exact at the points, between them on the
 * log-log line, the last rate past the end, 0 (spin) below the shortest. */
static void test_rate_work(void **state)
{
	struct wl_rate r = { .n = 3, .x = { 1e6, 1e8, 1e10 }, .t = { 4e-6, 1e-5, 1e-4 } };

	(void)state;
	assert_float_equal(wl_rate_work(&r, 4e-6), 1e6, 1e-3);
	assert_float_equal(wl_rate_work(&r, 1e-4), 1e10, 1);
	/* halfway in log time between 1e-5 and 1e-4: halfway in log work */
	assert_float_equal(wl_rate_work(&r, sqrt(1e-5 * 1e-4)), 1e9, 1e3);
	assert_float_equal(wl_rate_work(&r, 1e-3), 1e11, 10);
	assert_float_equal(wl_rate_work(&r, 1e-6), 0, 0);
	r.n = 0;
	assert_float_equal(wl_rate_work(&r, 1), 0, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_rate_work),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
