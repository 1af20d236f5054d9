/*
 * CPU reduction: dst = dst + src and the avg scale buf = buf / n, for every dtype,
 * vectorized with runtime dispatch (AVX-512, AVX2+F16C, scalar).
 *
 * Arithmetic contract (identical on every ISA, bit for bit): f32 and f64 add and divide
 * in their own precision; f16 and bf16 are widened to f32 (exact), added or divided
 * there (one correctly rounded f32 op, which is also the correctly rounded 16-bit
 * result since f32 carries more than twice their precision), and rounded back to
 * nearest even. avg = sum over ranks, then one IEEE division by nranks of each
 * element by the rank that completed it (schedule.h's scale step).
 * Pointers need no alignment; counts may be any length.
 */
#ifndef GS_COLL_REDUCE_H
#define GS_COLL_REDUCE_H

#include <stdbool.h>
#include <stdint.h>
#include "util/dtype.h"

enum reduce_isa {
	REDUCE_ISA_SCALAR = 0,
	REDUCE_ISA_AVX2,   /* AVX2 + F16C */
	REDUCE_ISA_AVX512, /* AVX-512F */
	REDUCE_ISA_COUNT,
};

/* The best ISA this CPU runs, chosen once; its name goes into reports. */
int reduce_isa(void);
const char *reduce_isa_name(int isa);
bool reduce_isa_supported(int isa);

void reduce_sum(void *dst, const void *src, uint64_t count, enum dtype dt);
void reduce_div(void *buf, uint64_t count, enum dtype dt, uint32_t divisor);

/* The same with a given ISA (tests and benchmarks); the ISA must be supported. */
void reduce_sum_isa(int isa, void *dst, const void *src, uint64_t count, enum dtype dt);
void reduce_div_isa(int isa, void *buf, uint64_t count, enum dtype dt, uint32_t divisor);

/* One ISA's kernels, one entry per dtype (reduce_scalar.c, reduce_avx2.c, reduce_avx512.c). */
struct reduce_kernels {
	void (*sum[DT_COUNT])(void *dst, const void *src, uint64_t n);
	void (*div[DT_COUNT])(void *buf, uint64_t n, uint32_t d);
};

extern const struct reduce_kernels reduce_scalar_kernels;
extern const struct reduce_kernels reduce_avx2_kernels;
extern const struct reduce_kernels reduce_avx512_kernels;

#endif
