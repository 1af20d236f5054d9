/*
 * CPU reduction: every supported ISA against the scalar reference, bit for bit, for all
 * dtypes, odd lengths and misaligned pointers; scalar half conversions against F16C.
 */
#include <immintrin.h>
#include <math.h>
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
#include "util/half.h"

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Random elements: mostly moderate finite values, some specials (inf, NaN, subnormal, max). */
static void fill_random(void *p, uint64_t n, enum dtype dt, uint64_t *s)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = rng_next(s);
		int kind = (int)(r % 64);
		double v = ((double)(int64_t)(r >> 20) / (double)(1ull << 43)) *
			   ldexp(1.0, (int)((r >> 8) % 24) - 12);

		if (kind == 0)
			v = INFINITY;
		else if (kind == 1)
			v = -INFINITY;
		else if (kind == 2)
			v = NAN;
		else if (kind == 3)
			v = ldexp((double)(r >> 50), -140);
		else if (kind == 4)
			v = dt == DT_F16 ? 65504.0 : 3e38;
		verify_store(p, i, dt, v);
	}
}

/* Bit-exact, except that any NaN equals any NaN (C leaves the payload of a + b open). */
static void assert_same(const void *a, const void *b, uint64_t n, enum dtype dt, const char *what)
{
	size_t es = dtype_size(dt);

	for (uint64_t i = 0; i < n; i++) {
		if (!memcmp((const char *)a + i * es, (const char *)b + i * es, es))
			continue;
		if (isnan(verify_value(a, i, dt)) && isnan(verify_value(b, i, dt)))
			continue;
		fail_msg("%s %s: element %llu of %llu differs", what, dtype_name(dt),
			 (unsigned long long)i, (unsigned long long)n);
	}
}

static void test_isa_vs_scalar(void **state)
{
	const uint64_t lens[] = {0,  1,	 2,  3,	 5,  7,	  8,   9,    15,   16,	17,
				 31, 33, 63, 64, 65, 127, 129, 1000, 1023, 4097};
	enum { MAXN = 4097 + 8 };
	uint64_t seed = 42;
	char *d0 = malloc(MAXN * 8), *d1 = malloc(MAXN * 8), *src = malloc(MAXN * 8);

	(void)state;
	assert_non_null(d0);
	assert_non_null(d1);
	assert_non_null(src);
	for (int isa = REDUCE_ISA_AVX2; isa < REDUCE_ISA_COUNT; isa++) {
		if (!reduce_isa_supported(isa)) {
			print_message("skipping %s: not supported by this CPU\n",
				      reduce_isa_name(isa));
			continue;
		}
		for (int dt = 0; dt < DT_COUNT; dt++) {
			size_t es = dtype_size(dt);

			for (size_t l = 0; l < ARRAY_SIZE(lens); l++)
				for (int mis = 0; mis < 4; mis++) {
					uint64_t n = lens[l];
					void *a = d0 + (size_t)mis * es, *b = d1 + (size_t)mis * es;
					void *s = src + (size_t)((mis * 3) % 5) * es;

					fill_random(a, n, dt, &seed);
					memcpy(b, a, n * es);
					fill_random(s, n, dt, &seed);
					reduce_sum_isa(REDUCE_ISA_SCALAR, a, s, n, dt);
					reduce_sum_isa(isa, b, s, n, dt);
					assert_same(a, b, n, dt, reduce_isa_name(isa));
					for (uint32_t div = 1; div <= 17; div += 4) {
						reduce_div_isa(REDUCE_ISA_SCALAR, a, n, dt, div);
						reduce_div_isa(isa, b, n, dt, div);
						assert_same(a, b, n, dt, "div");
					}
				}
		}
	}
	free(d0);
	free(d1);
	free(src);
}

/* Ties round to even in the 16-bit types; the dispatcher picks a supported ISA. */
static void test_rounding_and_dispatch(void **state)
{
	uint16_t h[2] = {f32_to_f16(2048.0f), f32_to_f16(2048.0f)};
	uint16_t o[2] = {f32_to_f16(1.0f), f32_to_f16(3.0f)};
	uint16_t b[2] = {f32_to_bf16(256.0f), f32_to_bf16(256.0f)};
	uint16_t bo[2] = {f32_to_bf16(1.0f), f32_to_bf16(3.0f)};
	float f[3] = {1.0f, 2.0f, 3.0f}, g[3] = {0.5f, 0.25f, -3.0f};

	(void)state;
	assert_true(reduce_isa_supported(reduce_isa()));
	assert_string_not_equal(reduce_isa_name(reduce_isa()), "?");
	reduce_sum(h, o, 2, DT_F16);
	assert_true(f16_to_f32(h[0]) == 2048.0f);
	assert_true(f16_to_f32(h[1]) == 2052.0f);
	reduce_sum(b, bo, 2, DT_BF16);
	assert_true(bf16_to_f32(b[0]) == 256.0f);
	assert_true(bf16_to_f32(b[1]) == 260.0f);
	reduce_sum(f, g, 3, DT_F32);
	assert_true(f[0] == 1.5f && f[1] == 2.25f && f[2] == 0.0f);
	reduce_div(f, 3, DT_F32, 3);
	assert_true(f[0] == 0.5f && f[1] == 0.75f);
	assert_true(f32_to_f16(65519.0f) == 0x7bff);
	assert_true(f32_to_f16(65520.0f) == 0x7c00);
	assert_true(f32_to_bf16(half_bits_f32(0x7f7fffff)) == 0x7f80);
	assert_true(f32_to_bf16(half_bits_f32(0x3f808000)) == 0x3f80);
	assert_true(f32_to_bf16(half_bits_f32(0x3f818000)) == 0x3f82);
}

__attribute__((target("f16c"))) static uint16_t f16c_from_f32(float f)
{
	return (uint16_t)_mm_extract_epi16(
	    _mm_cvtps_ph(_mm_set1_ps(f), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), 0);
}

__attribute__((target("f16c"))) static uint32_t f16c_to_f32(uint16_t h)
{
	return half_f32_bits(_mm_cvtss_f32(_mm_cvtph_ps(_mm_set1_epi16((short)h))));
}

/* The scalar conversions equal F16C: all 2^16 halves, and a sweep of f32 bit patterns. */
static void test_half_conversions(void **state)
{
	(void)state;
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("f16c")) {
		skip();
		return;
	}
	for (uint32_t h = 0; h < 65536; h++)
		if (half_f32_bits(f16_to_f32((uint16_t)h)) != f16c_to_f32((uint16_t)h))
			fail_msg("f16 %#x -> f32", h);
	for (uint64_t x = 0; x < (1ull << 32); x += 997) {
		float f = half_bits_f32((uint32_t)x);

		if (f32_to_f16(f) != f16c_from_f32(f))
			fail_msg("f32 %#llx -> f16: %#x vs %#x", (unsigned long long)x,
				 f32_to_f16(f), f16c_from_f32(f));
	}
	/* Every tie and near-tie of the subnormal/normal boundary region. */
	for (uint32_t x = 0x33000000; x < 0x38900000; x += 0x7f)
		assert_int_equal(f32_to_f16(half_bits_f32(x)), f16c_from_f32(half_bits_f32(x)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rounding_and_dispatch),
	    cmocka_unit_test(test_half_conversions),
	    cmocka_unit_test(test_isa_vs_scalar),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
