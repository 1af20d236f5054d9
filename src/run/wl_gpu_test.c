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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
