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

static void test_values_in_range_and_spread(void **state)
{
	static const int32_t mags[] = { 1, 3, 51, 256, 4096 };

	(void)state;
	for (size_t m = 0; m < ARRAY_SIZE(mags); m++) {
		int32_t mag = mags[m];
		int lo = 0, hi = 0;
		int64_t sum = 0;

		for (uint64_t i = 0; i < 100000; i++) {
			int32_t v = pattern_value(42, 3, i, mag);

			assert_true(v >= -mag && v <= mag);
			lo += v == -mag;
			hi += v == mag;
			sum += v;
		}
		/* both ends reached, mean near zero: the range reduction is unbiased */
		assert_true(lo > 0 && hi > 0);
		assert_true(llabs(sum) < 100000LL * mag / 50);
	}
}

static void test_depends_on_seed_rank_index(void **state)
{
	int same_seed = 0, same_rank = 0;

	(void)state;
	for (uint64_t i = 0; i < 1000; i++) {
		same_seed += pattern_value(1, 0, i, 100) == pattern_value(2, 0, i, 100);
		same_rank += pattern_value(1, 0, i, 100) == pattern_value(1, 1, i, 100);
	}
	/* chance agreement is 1/201 */
	assert_true(same_seed < 30);
	assert_true(same_rank < 30);
	assert_int_equal(pattern_value(9, 2, 77, 100), pattern_value(9, 2, 77, 100));
}

static void test_mag_keeps_sums_exact(void **state)
{
	static const struct {
		int dtype, nranks;
		int32_t want;
	} cases[] = {
		{ DT_BF16, 1, 256 }, { DT_BF16, 8, 32 }, { DT_BF16, 256, 1 }, { DT_BF16, 1000, 1 },
		{ DT_F16, 8, 256 }, { DT_F16, 3, 682 }, { DT_F32, 8, PATTERN_MAG_MAX },
		{ DT_F64, 100000, 167 }, { DT_F32, 0, PATTERN_MAG_MAX },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_int_equal(pattern_mag(cases[i].dtype, cases[i].nranks), cases[i].want);
	/* every partial sum of 8 bf16 ranks is exact in bf16 */
	for (uint64_t i = 0; i < 20000; i++) {
		float acc = 0;

		for (int r = 0; r < 8; r++) {
			acc = bf16_to_f32(f32_to_bf16(acc + (float)pattern_value(5, r, i, 32)));
			assert_true(acc == (float)pattern_sum(5, 0, r + 1, i, 32));
		}
	}
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
		cmocka_unit_test(test_values_in_range_and_spread),
		cmocka_unit_test(test_depends_on_seed_rank_index),
		cmocka_unit_test(test_mag_keeps_sums_exact),
		cmocka_unit_test(test_half_conversions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
