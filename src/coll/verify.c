/* The exact-result verification pattern on the CPU (per-element math: util/pattern.h). */
#include <string.h>

#include "coll/verify.h"
#include "util/half.h"
#include "util/pattern.h"

void verify_store(void *buf, uint64_t i, enum dtype dt, double x)
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
	struct pattern v;

	(void)op; /* one pattern serves sum and avg: the sum is always a multiple of n */
	pattern_init(&v, dt, seed, nranks);
	for (uint64_t i = 0; i < count; i++)
		verify_store(buf, i, dt, pattern_input(&v, base + i, rank));
}

double verify_expected(uint64_t g, enum dtype dt, enum redop op, uint64_t seed, int nranks)
{
	struct pattern v;

	pattern_init(&v, dt, seed, nranks);
	return pattern_result(&v, g, op == REDOP_AVG);
}

uint64_t verify_check(const void *buf, uint64_t count, uint64_t base, enum dtype dt, enum redop op,
		      uint64_t seed, int nranks, uint64_t *first_bad)
{
	size_t es = dtype_size(dt);
	uint64_t bad = 0;
	unsigned char want[8];
	struct pattern v;

	pattern_init(&v, dt, seed, nranks);
	*first_bad = count;
	for (uint64_t i = 0; i < count; i++) {
		verify_store(want, 0, dt, pattern_result(&v, base + i, op == REDOP_AVG));
		if (memcmp(want, (const char *)buf + i * es, es)) {
			if (!bad)
				*first_bad = i;
			bad++;
		}
	}
	return bad;
}
