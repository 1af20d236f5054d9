/*
 * 16-bit floats on the CPU: f16 (IEEE binary16) and bf16 stored as uint16_t bits,
 * converted with round-to-nearest-even exactly as CUDA's __float2half_rn and
 * __float2bfloat16_rn do, so CPU references match GPU results bit for bit.
 */
#ifndef GS_UTIL_HALF_H
#define GS_UTIL_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t half_f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline float half_bits_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static inline float bf16_to_f32(uint16_t h)
{
	return half_bits_f32((uint32_t)h << 16);
}

static inline uint16_t f32_to_bf16(float f)
{
	uint32_t u = half_f32_bits(f);

	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40); /* quiet NaN, sign kept */
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

static inline float f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1fu;
	uint32_t man = h & 0x3ffu;

	if (exp == 0x1f)
		return half_bits_f32(sign | 0x7f800000u | (man << 13));
	if (exp == 0) {
		/* zero or subnormal: man * 2^-24, exact in f32 */
		float v = (float)man * 5.9604644775390625e-8f;
		return sign ? -v : v;
	}
	return half_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

static inline uint16_t f32_to_f16(float f)
{
	uint32_t u = half_f32_bits(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
	uint32_t a = u & 0x7fffffffu;
	int32_t exp;
	uint32_t man, shift, rest, half, out;

	if (a > 0x7f800000u)
		return sign | 0x7e00u;
	if (a >= 0x477ff000u) /* rounds to >= 65520: infinity */
		return sign | 0x7c00u;
	exp = (int32_t)(a >> 23) - 127;
	if (exp >= -14) {
		/* normal f16: drop 13 mantissa bits with round-to-nearest-even */
		out = ((uint32_t)(exp + 15) << 10) | ((a >> 13) & 0x3ffu);
		rest = a & 0x1fffu;
		if (rest > 0x1000u || (rest == 0x1000u && (out & 1u)))
			out++;
		return sign | (uint16_t)out;
	}
	if (exp < -25)
		return sign; /* below half the smallest subnormal */
	/* subnormal f16: value = man * 2^-24 */
	man = (a & 0x7fffffu) | 0x800000u;
	shift = (uint32_t)(-exp - 14 + 13);
	out = man >> shift;
	rest = man & ((1u << shift) - 1u);
	half = 1u << (shift - 1);
	if (rest > half || (rest == half && (out & 1u)))
		out++;
	return sign | (uint16_t)out;
}

#endif
