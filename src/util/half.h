/*
 * Scalar f16 (IEEE binary16) and bf16 conversions to and from f32, bit-exact with
 * the x86 vector instructions the reduction uses: f32 -> 16-bit rounds to nearest
 * even, NaNs come back quiet with the payload truncated (as F16C's vcvtps2ph),
 * f16 -> f32 is exact and quiets signalling NaNs (as vcvtph2ps).
 */
#ifndef GS_UTIL_HALF_H
#define GS_UTIL_HALF_H

#include <stdint.h>
#include <string.h>

static inline float half_bits_f32(uint32_t b)
{
	float f;

	memcpy(&f, &b, sizeof(f));
	return f;
}

static inline uint32_t half_f32_bits(float f)
{
	uint32_t b;

	memcpy(&b, &f, sizeof(b));
	return b;
}

static inline float f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;

	if (e == 0x1f)
		return half_bits_f32(sign | 0x7f800000 | (m << 13) | (m ? 0x400000 : 0));
	if (e)
		return half_bits_f32(sign | ((e + 112) << 23) | (m << 13));
	if (!m)
		return half_bits_f32(sign);
	/* Subnormal: m * 2^-24, exact in f32. */
	e = 113;
	while (!(m & 0x400)) {
		m <<= 1;
		e--;
	}
	return half_bits_f32(sign | (e << 23) | ((m & 0x3ff) << 13));
}

static inline uint16_t f32_to_f16(float f)
{
	uint32_t x = half_f32_bits(f), sign = (x >> 16) & 0x8000, ax = x & 0x7fffffff;

	if (ax > 0x7f800000) /* NaN */
		return (uint16_t)(sign | 0x7e00 | ((ax >> 13) & 0x3ff));
	if (ax >= 0x477ff000) /* >= 65520 rounds to infinity */
		return (uint16_t)(sign | 0x7c00);
	if (ax >= 0x38800000) { /* normal result */
		ax += 0xfff + ((ax >> 13) & 1);
		return (uint16_t)(sign | ((ax - (112u << 23)) >> 13));
	}
	if (ax <= 0x33000000) /* <= 2^-25 rounds to zero (the tie goes to even 0) */
		return (uint16_t)sign;
	{
		/* Subnormal result: round(|f| * 2^24) to nearest even. */
		uint32_t e = ax >> 23, m = (ax & 0x7fffff) | 0x800000, sh = 126 - e;
		uint32_t r = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);

		if (rem > half || (rem == half && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
}

static inline float bf16_to_f32(uint16_t h)
{
	return half_bits_f32((uint32_t)h << 16);
}

static inline uint16_t f32_to_bf16(float f)
{
	uint32_t x = half_f32_bits(f);

	if ((x & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((x >> 16) | 0x40);
	return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

#endif
