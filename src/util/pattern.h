/*
 * The engine's exact-result verification pattern, per element, in one place for C
 * (coll/verify.c: CPU fill and check) and CUDA (kernels/pattern.cu: GPU fill and check).
 * The construction and its guarantees are described in coll/verify.h.
 *
 * Contract: every function is pure integer / double arithmetic whose results are exact
 * (small integers times powers of two), so host and device compute identical values;
 * converting them to any dtype is exact too. Callers round with their own conversions.
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

/* The pattern of one (dtype, seed, nranks): what pattern_init() derives once. */
struct pattern {
	uint64_t seed;
	int64_t ymax, zmax;
	int nranks;
};

/* splitmix64's finaliser. */
PATTERN_FN uint64_t pattern_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Significand bits of the dtype (an enum dtype), capped at 40. */
PATTERN_FN int pattern_bits(int dtype)
{
	return dtype == DT_F16 ? 11 : dtype == DT_BF16 ? 8 : dtype == DT_F32 ? 24 : 40;
}

PATTERN_FN void pattern_init(struct pattern *v, int dtype, uint64_t seed, int nranks)
{
	int64_t m = ((int64_t)1 << pattern_bits(dtype)) / (nranks < 1 ? 1 : nranks);

	if (m > (1 << 20))
		m = 1 << 20;
	v->seed = pattern_mix(seed + 0x9e3779b97f4a7c15ull);
	v->zmax = m / 4;
	v->ymax = m - 2 * v->zmax;
	v->nranks = nranks < 1 ? 1 : nranks;
}

/* Uniform in [-max, max] from a hash. */
PATTERN_FN int64_t pattern_int(uint64_t h, int64_t max)
{
	return (int64_t)(h % (uint64_t)(2 * max + 1)) - max;
}

PATTERN_FN uint64_t pattern_hash(const struct pattern *v, uint64_t g, uint64_t r)
{
	return pattern_mix(v->seed ^ (g * 0xd6e8feb86659fd93ull) ^ (r * 0xa0761d6478bd642full));
}

/* 2^e, e in [-4, 4], from bits 40.. of the index hash. */
PATTERN_FN double pattern_scale(uint64_t h)
{
	return (double)(1u << ((h >> 40) % 9)) / 16.0;
}

/* The z term of rank r at global index g (hash r + 1). */
PATTERN_FN double pattern_z(const struct pattern *v, uint64_t g, int r)
{
	if (!v->zmax)
		return 0;
	return (double)pattern_int(pattern_hash(v, g, (uint64_t)r + 1), v->zmax);
}

/* Rank r's input at global index g: (y + z_r - z_{r+1 mod n}) * 2^e. */
PATTERN_FN double pattern_input(const struct pattern *v, uint64_t g, int r)
{
	uint64_t h = pattern_hash(v, g, 0);
	double y = (double)pattern_int(h, v->ymax);
	int next = (r + 1) % v->nranks;

	return (y + pattern_z(v, g, r) - pattern_z(v, g, next)) * pattern_scale(h);
}

/* The exact AllReduce result at g: n * y * 2^e for sum, y * 2^e for avg. */
PATTERN_FN double pattern_result(const struct pattern *v, uint64_t g, int avg)
{
	uint64_t h = pattern_hash(v, g, 0);
	double y = (double)pattern_int(h, v->ymax);

	return (avg ? y : y * v->nranks) * pattern_scale(h);
}

#endif
