/* Unit tests of the exact-result pattern (util/pattern.h) and the 16-bit float helpers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>

#include "util/common.h"
#include "util/half.h"
#include "util/pattern.h"

/* Inputs are integers times 2^e with |integer| <= ymax + 2 zmax, e in [-4, 4]. */
static void test_inputs_in_range(void **state)
{
	static const struct {
		int dtype, nranks;
		int64_t ymax, zmax;
	} cases[] = {
		{ DT_BF16, 1, 128, 64 }, { DT_BF16, 8, 16, 8 },	 { DT_BF16, 300, 0, 0 },
		{ DT_F16, 3, 342, 170 }, { DT_F32, 2, 524288, 262144 },
		{ DT_F64, 7, 524288, 262144 },
	};

	(void)state;
	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct pattern v;
		int seen_scale[9] = { 0 };

		pattern_init(&v, cases[c].dtype, 42, cases[c].nranks);
		assert_int_equal(v.ymax, cases[c].ymax);
		assert_int_equal(v.zmax, cases[c].zmax);
		for (uint64_t g = 0; g < 20000; g++) {
			double x = pattern_input(&v, g, 0), s = pattern_scale(pattern_hash(&v, g, 0));
			double k = x / s;
			int e = 0;

			assert_true(k == floor(k));
			assert_true(fabs(k) <= (double)(v.ymax + 2 * v.zmax));
			while (s * 16 > (double)(1 << e))
				e++;
			seen_scale[e]++;
		}
		for (int e = 0; e < 9; e++)
			assert_true(seen_scale[e] > 1000);
	}
}

/* The z terms telescope: the sum over ranks is n * y * 2^e, the result pattern_result gives. */
static void test_sum_is_result(void **state)
{
	static const int ns[] = { 1, 2, 3, 5, 8, 64 };

	(void)state;
	for (size_t c = 0; c < ARRAY_SIZE(ns); c++) {
		struct pattern v;

		pattern_init(&v, DT_F32, 7, ns[c]);
		for (uint64_t g = 1000; g < 6000; g++) {
			double sum = 0;

			for (int r = 0; r < ns[c]; r++)
				sum += pattern_input(&v, g, r);
			assert_true(sum == pattern_result(&v, g, 0));
			assert_true(sum / ns[c] == pattern_result(&v, g, 1));
		}
	}
}

/* Seed, rank and index all change the values. */
static void test_depends_on_seed_rank_index(void **state)
{
	struct pattern a, b;
	int same_seed = 0, same_rank = 0, same_next = 0;

	(void)state;
	pattern_init(&a, DT_F32, 1, 4);
	pattern_init(&b, DT_F32, 2, 4);
	for (uint64_t g = 0; g < 1000; g++) {
		same_seed += pattern_input(&a, g, 0) == pattern_input(&b, g, 0);
		same_rank += pattern_input(&a, g, 0) == pattern_input(&a, g, 1);
		same_next += pattern_input(&a, g, 0) == pattern_input(&a, g + 1, 0);
	}
	assert_true(same_seed < 10);
	assert_true(same_rank < 10);
	assert_true(same_next < 10);
}

static void test_half_conversions(void **state)
{
	static const struct {
		float in;
		uint16_t f16, bf16;
	} cases[] = {
		{ 0.0f, 0x0000, 0x0000 },      { -0.0f, 0x8000, 0x8000 },
		{ 1.0f, 0x3c00, 0x3f80 },      { -2.5f, 0xc100, 0xc020 },
		{ 65504.0f, 0x7bff, 0x4780 },  { 65520.0f, 0x7c00, 0x4780 }, /* f16 overflows */
		{ 1.0009765625f, 0x3c01, 0x3f80 },
		{ 1.00048828125f, 0x3c00, 0x3f80 },  /* f16 tie: to even */
		{ 1.00146484375f, 0x3c02, 0x3f80 },  /* f16 tie: to even, up */
		{ 5.9604644775390625e-8f, 0x0001, 0x3380 }, /* smallest f16 subnormal */
		{ 2.98023223876953125e-8f, 0x0000, 0x3300 }, /* half of it: tie to even 0 */
		{ 1.00390625f, 0x3c04, 0x3f80 },     /* bf16 tie: to even */
		{ 1.01171875f, 0x3c0c, 0x3f82 },     /* bf16 tie: to even, up */
		{ 256.0f, 0x5c00, 0x4380 },    { 257.0f, 0x5c04, 0x4380 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		if (f32_to_f16(cases[i].in) != cases[i].f16 ||
		    f32_to_bf16(cases[i].in) != cases[i].bf16)
			fail_msg("%.10g: f16 %04x (want %04x) bf16 %04x (want %04x)",
				 (double)cases[i].in, f32_to_f16(cases[i].in), cases[i].f16,
				 f32_to_bf16(cases[i].in), cases[i].bf16);
	}
	/* every finite f16 and bf16 survives the round trip */
	for (uint32_t h = 0; h < 0x10000; h++) {
		if ((h & 0x7c00) != 0x7c00)
			assert_int_equal(f32_to_f16(f16_to_f32((uint16_t)h)), h);
		if ((h & 0x7f80) != 0x7f80)
			assert_int_equal(f32_to_bf16(bf16_to_f32((uint16_t)h)), h);
	}
	assert_true(isnan(f16_to_f32(f32_to_f16(NAN))));
	assert_true(isnan(bf16_to_f32(f32_to_bf16(NAN))));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inputs_in_range),
		cmocka_unit_test(test_sum_is_result),
		cmocka_unit_test(test_depends_on_seed_rank_index),
		cmocka_unit_test(test_half_conversions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
