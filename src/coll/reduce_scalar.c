/* The scalar reduction kernels: the reference every vector path must match bit for bit. */
#include "coll/reduce.h"
#include "util/half.h"

static void sum_f32(void *dst, const void *src, uint64_t n)
{
	float *d = dst;
	const float *s = src;

	for (uint64_t i = 0; i < n; i++)
		d[i] += s[i];
}

static void sum_f64(void *dst, const void *src, uint64_t n)
{
	double *d = dst;
	const double *s = src;

	for (uint64_t i = 0; i < n; i++)
		d[i] += s[i];
}

static void sum_f16(void *dst, const void *src, uint64_t n)
{
	uint16_t *d = dst;
	const uint16_t *s = src;

	for (uint64_t i = 0; i < n; i++)
		d[i] = f32_to_f16(f16_to_f32(d[i]) + f16_to_f32(s[i]));
}

static void sum_bf16(void *dst, const void *src, uint64_t n)
{
	uint16_t *d = dst;
	const uint16_t *s = src;

	for (uint64_t i = 0; i < n; i++)
		d[i] = f32_to_bf16(bf16_to_f32(d[i]) + bf16_to_f32(s[i]));
}

static void div_f32(void *buf, uint64_t n, uint32_t div)
{
	float *b = buf, dv = (float)div;

	for (uint64_t i = 0; i < n; i++)
		b[i] /= dv;
}

static void div_f64(void *buf, uint64_t n, uint32_t div)
{
	double *b = buf, dv = (double)div;

	for (uint64_t i = 0; i < n; i++)
		b[i] /= dv;
}

static void div_f16(void *buf, uint64_t n, uint32_t div)
{
	uint16_t *b = buf;
	float dv = (float)div;

	for (uint64_t i = 0; i < n; i++)
		b[i] = f32_to_f16(f16_to_f32(b[i]) / dv);
}

static void div_bf16(void *buf, uint64_t n, uint32_t div)
{
	uint16_t *b = buf;
	float dv = (float)div;

	for (uint64_t i = 0; i < n; i++)
		b[i] = f32_to_bf16(bf16_to_f32(b[i]) / dv);
}

const struct reduce_kernels reduce_scalar_kernels = {
    .sum = {[DT_F32] = sum_f32, [DT_F16] = sum_f16, [DT_BF16] = sum_bf16, [DT_F64] = sum_f64},
    .div = {[DT_F32] = div_f32, [DT_F16] = div_f16, [DT_BF16] = div_bf16, [DT_F64] = div_f64},
};
