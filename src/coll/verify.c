/* The exact-result verification pattern (see verify.h for the construction). */
#include <string.h>

#include "coll/verify.h"
#include "util/half.h"

struct vpat {
	uint64_t seed;
	int64_t ymax, zmax;
	int nranks;
};

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void vpat_init(struct vpat *v, enum dtype dt, uint64_t seed, int nranks)
{
	static const int bits[DT_COUNT] = {
	    [DT_F32] = 24, [DT_F16] = 11, [DT_BF16] = 8, [DT_F64] = 53};
	int p = bits[dt] > 40 ? 40 : bits[dt];
	int64_t m = ((int64_t)1 << p) / nranks;

	if (m > (1 << 20))
		m = 1 << 20;
	v->seed = mix(seed + 0x9e3779b97f4a7c15ull);
	v->zmax = m / 4;
	v->ymax = m - 2 * v->zmax;
	v->nranks = nranks;
}

/* Uniform in [-max, max] from a hash. */
static int64_t vpat_int(uint64_t h, int64_t max)
{
	return (int64_t)(h % (uint64_t)(2 * max + 1)) - max;
}

static uint64_t vpat_hash(const struct vpat *v, uint64_t g, uint64_t r)
{
	return mix(v->seed ^ (g * 0xd6e8feb86659fd93ull) ^ (r * 0xa0761d6478bd642full));
}

static double vpat_scale(uint64_t h)
{
	static const double pow2[9] = {1.0 / 16, 1.0 / 8, 1.0 / 4, 1.0 / 2, 1, 2, 4, 8, 16};

	return pow2[(h >> 40) % 9];
}

/* y * 2^e at index g (hash 0 of the index), the z term of rank r (hash r + 1). */
static double vpat_y(const struct vpat *v, uint64_t g, double *scale)
{
	uint64_t h = vpat_hash(v, g, 0);

	*scale = vpat_scale(h);
	return (double)vpat_int(h, v->ymax);
}

static double vpat_z(const struct vpat *v, uint64_t g, int r)
{
	if (!v->zmax)
		return 0;
	return (double)vpat_int(vpat_hash(v, g, (uint64_t)r + 1), v->zmax);
}

static void store(void *buf, uint64_t i, enum dtype dt, double x)
{
	switch (dt) {
	case DT_F32:
		((float *)buf)[i] = (float)x;
		break;
	case DT_F64:
		((double *)buf)[i] = x;
		break;
	case DT_F16:
		((uint16_t *)buf)[i] = f32_to_f16((float)x);
		break;
	default:
		((uint16_t *)buf)[i] = f32_to_bf16((float)x);
		break;
	}
}

double verify_value(const void *buf, uint64_t i, enum dtype dt)
{
	switch (dt) {
	case DT_F32:
		return ((const float *)buf)[i];
	case DT_F64:
		return ((const double *)buf)[i];
	case DT_F16:
		return f16_to_f32(((const uint16_t *)buf)[i]);
	default:
		return bf16_to_f32(((const uint16_t *)buf)[i]);
	}
}

void verify_fill(void *buf, uint64_t count, uint64_t base, enum dtype dt, enum redop op,
		 uint64_t seed, int rank, int nranks)
{
	struct vpat v;
	int next = (rank + 1) % nranks;

	(void)op; /* one pattern serves sum and avg: the sum is always a multiple of n */
	vpat_init(&v, dt, seed, nranks);
	for (uint64_t i = 0; i < count; i++) {
		double scale, y = vpat_y(&v, base + i, &scale);
		double x = y + vpat_z(&v, base + i, rank) - vpat_z(&v, base + i, next);

		store(buf, i, dt, x * scale);
	}
}

double verify_expected(uint64_t g, enum dtype dt, enum redop op, uint64_t seed, int nranks)
{
	struct vpat v;
	double scale, y;

	vpat_init(&v, dt, seed, nranks);
	y = vpat_y(&v, g, &scale);
	return (op == REDOP_AVG ? y : y * nranks) * scale;
}

uint64_t verify_check(const void *buf, uint64_t count, uint64_t base, enum dtype dt, enum redop op,
		      uint64_t seed, int nranks, uint64_t *first_bad)
{
	size_t es = dtype_size(dt);
	uint64_t bad = 0;
	double mul = op == REDOP_AVG ? 1.0 : (double)nranks;
	unsigned char want[8];
	struct vpat v;

	vpat_init(&v, dt, seed, nranks);
	*first_bad = count;
	for (uint64_t i = 0; i < count; i++) {
		double scale, y = vpat_y(&v, base + i, &scale);

		store(want, 0, dt, y * mul * scale);
		if (memcmp(want, (const char *)buf + i * es, es)) {
			if (!bad)
				*first_bad = i;
			bad++;
		}
	}
	return bad;
}
