/* Element types and reduction operators shared by coll/, workload/ and gpu/. */
#ifndef GS_UTIL_DTYPE_H
#define GS_UTIL_DTYPE_H

#include <stddef.h>
#include <string.h>

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

/* The element types' one table: name (as the experiment file and report.json spell it),
 * bytes, and what it is ([collective] dtype's help). */
struct dtype_row {
	const char *name;
	size_t size;
	const char *help;
};

static inline const struct dtype_row *dtype_row(enum dtype t)
{
	static const struct dtype_row rows[DT_COUNT] = {
		[DT_F32] = { "f32", 4, "32-bit IEEE float" },
		[DT_F16] = { "f16", 2, "16-bit IEEE half" },
		[DT_BF16] = { "bf16", 2, "bfloat16" },
		[DT_F64] = { "f64", 8, "64-bit IEEE double" },
	};
	return &rows[t];
}

static inline size_t dtype_size(enum dtype t)
{
	return dtype_row(t)->size;
}

static inline const char *dtype_name(enum dtype t)
{
	return dtype_row(t)->name;
}

/* The dtype named name, or -1. */
static inline int dtype_find(const char *name)
{
	for (int t = 0; t < DT_COUNT; t++)
		if (!strcmp(dtype_row((enum dtype)t)->name, name))
			return t;
	return -1;
}

/* The reduction operators' one table: name ([collective] reduce_op, report.json) and help. */
struct redop_row {
	const char *name;
	const char *help;
};

static inline const struct redop_row *redop_row(enum redop op)
{
	static const struct redop_row rows[REDOP_COUNT] = {
		[REDOP_SUM] = { "sum", "element-wise sum" },
		[REDOP_AVG] = { "avg", "sum divided by the number of ranks (DDP's gradient averaging)" },
	};
	return &rows[op == REDOP_AVG ? REDOP_AVG : REDOP_SUM]; /* out of range: sum */
}

static inline const char *redop_name(enum redop op)
{
	return redop_row(op)->name;
}

#endif
