/*
 * The verification pattern: reducing every rank's input in random orders (and with the
 * ring's pairwise partial sums) gives the exact expected bits for sum and avg, in every
 * dtype, up to and past the significand limit; a corrupted element is found.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "coll/reduce.h"
#include "coll/verify.h"
#include "util/common.h"

#define COUNT 1031

static void reduce_in_order(int dt, int op, int n, uint64_t seed, uint64_t order_seed)
{
	size_t es = dtype_size(dt);
	char *in = malloc((size_t)n * COUNT * es), *acc = malloc(COUNT * es);
	int *perm = malloc((size_t)n * sizeof(int));
	uint64_t first;

	assert_non_null(in);
	assert_non_null(acc);
	assert_non_null(perm);
	for (int r = 0; r < n; r++) {
		verify_fill(in + (size_t)r * COUNT * es, COUNT, 5000, dt, op, seed, r, n);
		perm[r] = r;
	}
	for (int r = n - 1; r > 0; r--) {
		int j =
		    (int)((order_seed = order_seed * 6364136223846793005ull + 1) >> 33) % (r + 1);
		int t = perm[r];

		perm[r] = perm[j];
		perm[j] = t;
	}
	/* Tree-shaped partial sums: pairs first, then pairs of pairs. */
	for (int stride = 1; stride < n; stride *= 2)
		for (int r = 0; r + stride < n; r += 2 * stride)
			reduce_sum(in + (size_t)perm[r] * COUNT * es,
				   in + (size_t)perm[r + stride] * COUNT * es, COUNT, dt);
	memcpy(acc, in + (size_t)perm[0] * COUNT * es, COUNT * es);
	if (op == REDOP_AVG)
		reduce_div(acc, COUNT, dt, (uint32_t)n);
	if (verify_check(acc, COUNT, 5000, dt, op, seed, n, &first))
		fail_msg("%s %s n=%d: first bad %llu: got %g want %g", dtype_name(dt),
			 redop_name(op), n, (unsigned long long)first, verify_value(acc, first, dt),
			 verify_expected(5000 + first, dt, op, seed, n));
	assert_int_equal(first, COUNT);
	free(in);
	free(acc);
	free(perm);
}

static void test_exact_any_order(void **state)
{
	const int ns[] = {1, 2, 3, 5, 8, 17, 64, 85, 86, 255, 256, 257, 300};

	(void)state;
	for (int dt = 0; dt < DT_COUNT; dt++)
		for (int op = 0; op < REDOP_COUNT; op++)
			for (size_t i = 0; i < ARRAY_SIZE(ns); i++)
				for (uint64_t o = 1; o <= 3; o++)
					reduce_in_order(dt, op, ns[i], 77 + o, o);
}

static void test_detects_corruption(void **state)
{
	float a[64];
	uint64_t first;

	(void)state;
	/* With one rank the result is the input itself. */
	verify_fill(a, 64, 0, DT_F32, REDOP_SUM, 9, 0, 1);
	assert_int_equal(verify_check(a, 64, 0, DT_F32, REDOP_SUM, 9, 1, &first), 0);
	assert_int_equal(first, 64);
	a[17] += 1.0f;
	a[40] = -a[40] + 0.5f;
	assert_int_equal(verify_check(a, 64, 0, DT_F32, REDOP_SUM, 9, 1, &first), 2);
	assert_int_equal(first, 17);
	/* Another seed or base is another pattern. */
	verify_fill(a, 64, 0, DT_F32, REDOP_SUM, 9, 0, 1);
	assert_true(verify_check(a, 64, 0, DT_F32, REDOP_SUM, 10, 1, &first) > 32);
	assert_true(verify_check(a, 64, 1, DT_F32, REDOP_SUM, 9, 1, &first) > 32);
}

/* Inputs are not trivially equal across ranks, and not all zero. */
static void test_pattern_varies(void **state)
{
	uint16_t a[256], b[256];
	int nz = 0, diff = 0;

	(void)state;
	verify_fill(a, 256, 0, DT_BF16, REDOP_AVG, 3, 0, 16);
	verify_fill(b, 256, 0, DT_BF16, REDOP_AVG, 3, 1, 16);
	for (int i = 0; i < 256; i++) {
		nz += a[i] != 0;
		diff += a[i] != b[i];
	}
	assert_true(nz > 128);
	assert_true(diff > 128);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_detects_corruption),
	    cmocka_unit_test(test_pattern_varies),
	    cmocka_unit_test(test_exact_any_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
