/* AVX2 + F16C reduction kernels: 32 f32 / 16 f64 / 16 half per iteration, scalar tails. */
#include <immintrin.h>

#include "coll/reduce.h"

#define AVX2	__attribute__((target("avx2,f16c")))
#define F16_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

AVX2 static void sum_f32(void *dst, const void *src, uint64_t n)
{
	float *d = dst;
	const float *s = src;
	uint64_t i = 0;

	for (; i + 32 <= n; i += 32) {
		__m256 a0 = _mm256_add_ps(_mm256_loadu_ps(d + i), _mm256_loadu_ps(s + i));
		__m256 a1 = _mm256_add_ps(_mm256_loadu_ps(d + i + 8), _mm256_loadu_ps(s + i + 8));
		__m256 a2 = _mm256_add_ps(_mm256_loadu_ps(d + i + 16), _mm256_loadu_ps(s + i + 16));
		__m256 a3 = _mm256_add_ps(_mm256_loadu_ps(d + i + 24), _mm256_loadu_ps(s + i + 24));

		_mm256_storeu_ps(d + i, a0);
		_mm256_storeu_ps(d + i + 8, a1);
		_mm256_storeu_ps(d + i + 16, a2);
		_mm256_storeu_ps(d + i + 24, a3);
	}
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(d + i,
				 _mm256_add_ps(_mm256_loadu_ps(d + i), _mm256_loadu_ps(s + i)));
	reduce_scalar_kernels.sum[DT_F32](d + i, s + i, n - i);
}

AVX2 static void sum_f64(void *dst, const void *src, uint64_t n)
{
	double *d = dst;
	const double *s = src;
	uint64_t i = 0;

	for (; i + 16 <= n; i += 16) {
		__m256d a0 = _mm256_add_pd(_mm256_loadu_pd(d + i), _mm256_loadu_pd(s + i));
		__m256d a1 = _mm256_add_pd(_mm256_loadu_pd(d + i + 4), _mm256_loadu_pd(s + i + 4));
		__m256d a2 = _mm256_add_pd(_mm256_loadu_pd(d + i + 8), _mm256_loadu_pd(s + i + 8));
		__m256d a3 =
		    _mm256_add_pd(_mm256_loadu_pd(d + i + 12), _mm256_loadu_pd(s + i + 12));

		_mm256_storeu_pd(d + i, a0);
		_mm256_storeu_pd(d + i + 4, a1);
		_mm256_storeu_pd(d + i + 8, a2);
		_mm256_storeu_pd(d + i + 12, a3);
	}
	for (; i + 4 <= n; i += 4)
		_mm256_storeu_pd(d + i,
				 _mm256_add_pd(_mm256_loadu_pd(d + i), _mm256_loadu_pd(s + i)));
	reduce_scalar_kernels.sum[DT_F64](d + i, s + i, n - i);
}

AVX2 static inline __m256 f16x8_load(const uint16_t *p)
{
	return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

AVX2 static inline void f16x8_store(uint16_t *p, __m256 v)
{
	_mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(v, F16_RNE));
}

AVX2 static void sum_f16(void *dst, const void *src, uint64_t n)
{
	uint16_t *d = dst;
	const uint16_t *s = src;
	uint64_t i = 0;

	for (; i + 16 <= n; i += 16) {
		__m256 a0 = _mm256_add_ps(f16x8_load(d + i), f16x8_load(s + i));
		__m256 a1 = _mm256_add_ps(f16x8_load(d + i + 8), f16x8_load(s + i + 8));

		f16x8_store(d + i, a0);
		f16x8_store(d + i + 8, a1);
	}
	for (; i + 8 <= n; i += 8)
		f16x8_store(d + i, _mm256_add_ps(f16x8_load(d + i), f16x8_load(s + i)));
	reduce_scalar_kernels.sum[DT_F16](d + i, s + i, n - i);
}

AVX2 static inline __m256 bf16x8_load(const uint16_t *p)
{
	__m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));

	return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

/* Round to nearest even on the bit pattern; NaNs keep their top bits and turn quiet. */
AVX2 static inline void bf16x8_store(uint16_t *p, __m256 v)
{
	__m256i x = _mm256_castps_si256(v);
	__m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)),
					 _mm256_set1_epi32(0x7f800000));
	__m256i odd = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
	__m256i r = _mm256_add_epi32(x, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), odd));

	r = _mm256_blendv_epi8(r, _mm256_or_si256(x, _mm256_set1_epi32(0x400000)), nan);
	r = _mm256_srli_epi32(r, 16);
	_mm_storeu_si128((__m128i *)p, _mm_packus_epi32(_mm256_castsi256_si128(r),
							_mm256_extracti128_si256(r, 1)));
}

AVX2 static void sum_bf16(void *dst, const void *src, uint64_t n)
{
	uint16_t *d = dst;
	const uint16_t *s = src;
	uint64_t i = 0;

	for (; i + 16 <= n; i += 16) {
		__m256 a0 = _mm256_add_ps(bf16x8_load(d + i), bf16x8_load(s + i));
		__m256 a1 = _mm256_add_ps(bf16x8_load(d + i + 8), bf16x8_load(s + i + 8));

		bf16x8_store(d + i, a0);
		bf16x8_store(d + i + 8, a1);
	}
	for (; i + 8 <= n; i += 8)
		bf16x8_store(d + i, _mm256_add_ps(bf16x8_load(d + i), bf16x8_load(s + i)));
	reduce_scalar_kernels.sum[DT_BF16](d + i, s + i, n - i);
}

AVX2 static void div_f32(void *buf, uint64_t n, uint32_t div)
{
	float *b = buf;
	__m256 dv = _mm256_set1_ps((float)div);
	uint64_t i = 0;

	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(b + i, _mm256_div_ps(_mm256_loadu_ps(b + i), dv));
	reduce_scalar_kernels.div[DT_F32](b + i, n - i, div);
}

AVX2 static void div_f64(void *buf, uint64_t n, uint32_t div)
{
	double *b = buf;
	__m256d dv = _mm256_set1_pd((double)div);
	uint64_t i = 0;

	for (; i + 4 <= n; i += 4)
		_mm256_storeu_pd(b + i, _mm256_div_pd(_mm256_loadu_pd(b + i), dv));
	reduce_scalar_kernels.div[DT_F64](b + i, n - i, div);
}

AVX2 static void div_f16(void *buf, uint64_t n, uint32_t div)
{
	uint16_t *b = buf;
	__m256 dv = _mm256_set1_ps((float)div);
	uint64_t i = 0;

	for (; i + 8 <= n; i += 8)
		f16x8_store(b + i, _mm256_div_ps(f16x8_load(b + i), dv));
	reduce_scalar_kernels.div[DT_F16](b + i, n - i, div);
}

AVX2 static void div_bf16(void *buf, uint64_t n, uint32_t div)
{
	uint16_t *b = buf;
	__m256 dv = _mm256_set1_ps((float)div);
	uint64_t i = 0;

	for (; i + 8 <= n; i += 8)
		bf16x8_store(b + i, _mm256_div_ps(bf16x8_load(b + i), dv));
	reduce_scalar_kernels.div[DT_BF16](b + i, n - i, div);
}

const struct reduce_kernels reduce_avx2_kernels = {
    .sum = {[DT_F32] = sum_f32, [DT_F16] = sum_f16, [DT_BF16] = sum_bf16, [DT_F64] = sum_f64},
    .div = {[DT_F32] = div_f32, [DT_F16] = div_f16, [DT_BF16] = div_bf16, [DT_F64] = div_f64},
};
