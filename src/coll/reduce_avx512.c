/* AVX-512F reduction kernels: 64 f32 / 32 f64 / 32 half per iteration, scalar tails. */
#include <immintrin.h>

#include "coll/reduce.h"

#define AVX512	__attribute__((target("avx512f")))
#define F16_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

AVX512 static void sum_f32(void *dst, const void *src, uint64_t n)
{
	float *d = dst;
	const float *s = src;
	uint64_t i = 0;

	for (; i + 64 <= n; i += 64) {
		__m512 a0 = _mm512_add_ps(_mm512_loadu_ps(d + i), _mm512_loadu_ps(s + i));
		__m512 a1 = _mm512_add_ps(_mm512_loadu_ps(d + i + 16), _mm512_loadu_ps(s + i + 16));
		__m512 a2 = _mm512_add_ps(_mm512_loadu_ps(d + i + 32), _mm512_loadu_ps(s + i + 32));
		__m512 a3 = _mm512_add_ps(_mm512_loadu_ps(d + i + 48), _mm512_loadu_ps(s + i + 48));

		_mm512_storeu_ps(d + i, a0);
		_mm512_storeu_ps(d + i + 16, a1);
		_mm512_storeu_ps(d + i + 32, a2);
		_mm512_storeu_ps(d + i + 48, a3);
	}
	for (; i + 16 <= n; i += 16)
		_mm512_storeu_ps(d + i,
				 _mm512_add_ps(_mm512_loadu_ps(d + i), _mm512_loadu_ps(s + i)));
	reduce_scalar_kernels.sum[DT_F32](d + i, s + i, n - i);
}

AVX512 static void sum_f64(void *dst, const void *src, uint64_t n)
{
	double *d = dst;
	const double *s = src;
	uint64_t i = 0;

	for (; i + 32 <= n; i += 32) {
		__m512d a0 = _mm512_add_pd(_mm512_loadu_pd(d + i), _mm512_loadu_pd(s + i));
		__m512d a1 = _mm512_add_pd(_mm512_loadu_pd(d + i + 8), _mm512_loadu_pd(s + i + 8));
		__m512d a2 =
		    _mm512_add_pd(_mm512_loadu_pd(d + i + 16), _mm512_loadu_pd(s + i + 16));
		__m512d a3 =
		    _mm512_add_pd(_mm512_loadu_pd(d + i + 24), _mm512_loadu_pd(s + i + 24));

		_mm512_storeu_pd(d + i, a0);
		_mm512_storeu_pd(d + i + 8, a1);
		_mm512_storeu_pd(d + i + 16, a2);
		_mm512_storeu_pd(d + i + 24, a3);
	}
	for (; i + 8 <= n; i += 8)
		_mm512_storeu_pd(d + i,
				 _mm512_add_pd(_mm512_loadu_pd(d + i), _mm512_loadu_pd(s + i)));
	reduce_scalar_kernels.sum[DT_F64](d + i, s + i, n - i);
}

AVX512 static inline __m512 f16x16_load(const uint16_t *p)
{
	return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}

AVX512 static inline void f16x16_store(uint16_t *p, __m512 v)
{
	_mm256_storeu_si256((__m256i *)p, _mm512_cvtps_ph(v, F16_RNE));
}

AVX512 static void sum_f16(void *dst, const void *src, uint64_t n)
{
	uint16_t *d = dst;
	const uint16_t *s = src;
	uint64_t i = 0;

	for (; i + 32 <= n; i += 32) {
		__m512 a0 = _mm512_add_ps(f16x16_load(d + i), f16x16_load(s + i));
		__m512 a1 = _mm512_add_ps(f16x16_load(d + i + 16), f16x16_load(s + i + 16));

		f16x16_store(d + i, a0);
		f16x16_store(d + i + 16, a1);
	}
	for (; i + 16 <= n; i += 16)
		f16x16_store(d + i, _mm512_add_ps(f16x16_load(d + i), f16x16_load(s + i)));
	reduce_scalar_kernels.sum[DT_F16](d + i, s + i, n - i);
}

AVX512 static inline __m512 bf16x16_load(const uint16_t *p)
{
	__m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));

	return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}

/* Round to nearest even on the bit pattern; NaNs keep their top bits and turn quiet. */
AVX512 static inline void bf16x16_store(uint16_t *p, __m512 v)
{
	__m512i x = _mm512_castps_si512(v);
	__mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)),
						_mm512_set1_epi32(0x7f800000));
	__m512i odd = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
	__m512i r = _mm512_add_epi32(x, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), odd));

	r = _mm512_mask_or_epi32(r, nan, x, _mm512_set1_epi32(0x400000));
	_mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16)));
}

AVX512 static void sum_bf16(void *dst, const void *src, uint64_t n)
{
	uint16_t *d = dst;
	const uint16_t *s = src;
	uint64_t i = 0;

	for (; i + 32 <= n; i += 32) {
		__m512 a0 = _mm512_add_ps(bf16x16_load(d + i), bf16x16_load(s + i));
		__m512 a1 = _mm512_add_ps(bf16x16_load(d + i + 16), bf16x16_load(s + i + 16));

		bf16x16_store(d + i, a0);
		bf16x16_store(d + i + 16, a1);
	}
	for (; i + 16 <= n; i += 16)
		bf16x16_store(d + i, _mm512_add_ps(bf16x16_load(d + i), bf16x16_load(s + i)));
	reduce_scalar_kernels.sum[DT_BF16](d + i, s + i, n - i);
}

AVX512 static void div_f32(void *buf, uint64_t n, uint32_t div)
{
	float *b = buf;
	__m512 dv = _mm512_set1_ps((float)div);
	uint64_t i = 0;

	for (; i + 16 <= n; i += 16)
		_mm512_storeu_ps(b + i, _mm512_div_ps(_mm512_loadu_ps(b + i), dv));
	reduce_scalar_kernels.div[DT_F32](b + i, n - i, div);
}

AVX512 static void div_f64(void *buf, uint64_t n, uint32_t div)
{
	double *b = buf;
	__m512d dv = _mm512_set1_pd((double)div);
	uint64_t i = 0;

	for (; i + 8 <= n; i += 8)
		_mm512_storeu_pd(b + i, _mm512_div_pd(_mm512_loadu_pd(b + i), dv));
	reduce_scalar_kernels.div[DT_F64](b + i, n - i, div);
}

AVX512 static void div_f16(void *buf, uint64_t n, uint32_t div)
{
	uint16_t *b = buf;
	__m512 dv = _mm512_set1_ps((float)div);
	uint64_t i = 0;

	for (; i + 16 <= n; i += 16)
		f16x16_store(b + i, _mm512_div_ps(f16x16_load(b + i), dv));
	reduce_scalar_kernels.div[DT_F16](b + i, n - i, div);
}

AVX512 static void div_bf16(void *buf, uint64_t n, uint32_t div)
{
	uint16_t *b = buf;
	__m512 dv = _mm512_set1_ps((float)div);
	uint64_t i = 0;

	for (; i + 16 <= n; i += 16)
		bf16x16_store(b + i, _mm512_div_ps(bf16x16_load(b + i), dv));
	reduce_scalar_kernels.div[DT_BF16](b + i, n - i, div);
}

const struct reduce_kernels reduce_avx512_kernels = {
    .sum = {[DT_F32] = sum_f32, [DT_F16] = sum_f16, [DT_BF16] = sum_bf16, [DT_F64] = sum_f64},
    .div = {[DT_F32] = div_f32, [DT_F16] = div_f16, [DT_BF16] = div_bf16, [DT_F64] = div_f64},
};
