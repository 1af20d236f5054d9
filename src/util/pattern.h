/*
 * The engine's exact-result data pattern, shared by C (CPU fill/verify) and CUDA
 * (kernels/pattern.cu): element `index` of rank `rank` holds the small integer
 * pattern_value(seed, rank, index, mag) in [-mag, mag].
 *
 * Contract: with mag = pattern_mag(dtype, nranks), every partial sum of up to nranks
 * such values is an integer whose magnitude is exactly representable in the dtype
 * (bf16: 256, f16: 2048, f32/f64: 2^24), so an AllReduce sum is exact in any order and
 * its result can be checked bit for bit. Avg results are round_T((float)sum * scale)
 * with scale = 1/nranks (see gpu_reduce() in gpu/gpu.h for the rounding contract).
 */
#ifndef GS_UTIL_PATTERN_H
#define GS_UTIL_PATTERN_H

#include <stdint.h>

#include "util/dtype.h"

#ifdef __CUDACC__
#define PATTERN_FN __host__ __device__ static inline
#else
#define PATTERN_FN static inline
#endif

/* Largest magnitude chosen for wide types: enough values to catch misplaced chunks. */
#define PATTERN_MAG_MAX 4096

/* 32 well-mixed bits of (seed, rank, index): splitmix64's finaliser. */
PATTERN_FN uint32_t pattern_hash(uint64_t seed, int rank, uint64_t index)
{
	uint64_t x = index + seed * 0x9e3779b97f4a7c15ull + (uint64_t)(uint32_t)(rank + 1) *
		0xd1b54a32d192ed03ull;

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (uint32_t)(x >> 32);
}

/* Integer in [-mag, mag], mag >= 1 (multiply-shift range reduction, no division). */
PATTERN_FN int32_t pattern_value(uint64_t seed, int rank, uint64_t index, int32_t mag)
{
	uint64_t span = (uint64_t)(2 * mag + 1);

	return (int32_t)(((uint64_t)pattern_hash(seed, rank, index) * span) >> 32) - mag;
}

/* Exact sum over ranks [rank0, rank0 + nranks) of element index. */
PATTERN_FN int64_t pattern_sum(uint64_t seed, int rank0, int nranks, uint64_t index, int32_t mag)
{
	int64_t s = 0;

	for (int r = rank0; r < rank0 + nranks; r++)
		s += pattern_value(seed, r, index, mag);
	return s;
}

/*
 * Magnitude for dtype (an enum dtype) so that sums of nranks values stay exact.
 * Exactness is guaranteed for nranks up to the dtype's limit (256 ranks for bf16);
 * beyond it mag is 1 and partial sums would have to wander past the limit to lose bits.
 */
PATTERN_FN int32_t pattern_mag(int dtype, int nranks)
{
	int32_t limit = dtype == DT_BF16 ? 256 : dtype == DT_F16 ? 2048 : (1 << 24);
	int32_t m;

	if (nranks < 1)
		nranks = 1;
	m = limit / nranks;
	if (m > PATTERN_MAG_MAX)
		m = PATTERN_MAG_MAX;
	return m < 1 ? 1 : m;
}

#endif
