/* Element types and reduction operators shared by coll/, workload/ and gpu/. */
#ifndef GS_UTIL_DTYPE_H
#define GS_UTIL_DTYPE_H

#include <stddef.h>

enum dtype {
	DT_F32 = 0,
	DT_F16,
	DT_BF16,
	DT_F64,
	DT_COUNT,
};

enum redop {
	REDOP_SUM = 0,
	REDOP_AVG, /* sum, then divide by the number of ranks (as NCCL's ncclAvg) */
	REDOP_COUNT,
};

static inline size_t dtype_size(enum dtype t)
{
	static const size_t sz[DT_COUNT] = { [DT_F32] = 4, [DT_F16] = 2, [DT_BF16] = 2, [DT_F64] = 8 };
	return sz[t];
}

static inline const char *dtype_name(enum dtype t)
{
	static const char *const n[DT_COUNT] = {
		[DT_F32] = "f32", [DT_F16] = "f16", [DT_BF16] = "bf16", [DT_F64] = "f64",
	};
	return n[t];
}

static inline const char *redop_name(enum redop op)
{
	return op == REDOP_AVG ? "avg" : "sum";
}

#endif
