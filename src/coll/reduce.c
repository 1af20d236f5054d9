/* Runtime dispatch of the CPU reduction: the widest ISA the CPU supports, chosen once. */
#include <cpuid.h>

#include "coll/reduce.h"

static const struct {
	const char *name;
	const struct reduce_kernels *k;
} isa_table[REDUCE_ISA_COUNT] = {
    [REDUCE_ISA_SCALAR] = {"scalar", &reduce_scalar_kernels},
    [REDUCE_ISA_AVX2] = {"avx2+f16c", &reduce_avx2_kernels},
    [REDUCE_ISA_AVX512] = {"avx512f", &reduce_avx512_kernels},
};

/* CPUID.1:ECX.F16C, asked directly: clang's __builtin_cpu_supports() has no "f16c". */
static bool cpu_has_f16c(void)
{
	unsigned int a, b, c, d;

	return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}

bool reduce_isa_supported(int isa)
{
	__builtin_cpu_init();
	switch (isa) {
	case REDUCE_ISA_SCALAR:
		return true;
	case REDUCE_ISA_AVX2:
		return __builtin_cpu_supports("avx2") && cpu_has_f16c();
	case REDUCE_ISA_AVX512:
		return __builtin_cpu_supports("avx512f");
	default:
		return false;
	}
}

/* A property of the CPU, not an option: cached after the first call (benign race). */
static int reduce_best = -1;

int reduce_isa(void)
{
	int isa = __atomic_load_n(&reduce_best, __ATOMIC_RELAXED);

	if (isa < 0) {
		for (isa = REDUCE_ISA_COUNT - 1; isa > 0; isa--)
			if (reduce_isa_supported(isa))
				break;
		__atomic_store_n(&reduce_best, isa, __ATOMIC_RELAXED);
	}
	return isa;
}

const char *reduce_isa_name(int isa)
{
	return isa >= 0 && isa < REDUCE_ISA_COUNT ? isa_table[isa].name : "?";
}

void reduce_sum_isa(int isa, void *dst, const void *src, uint64_t count, enum dtype dt)
{
	isa_table[isa].k->sum[dt](dst, src, count);
}

void reduce_div_isa(int isa, void *buf, uint64_t count, enum dtype dt, uint32_t divisor)
{
	isa_table[isa].k->div[dt](buf, count, divisor);
}

void reduce_sum(void *dst, const void *src, uint64_t count, enum dtype dt)
{
	reduce_sum_isa(reduce_isa(), dst, src, count, dt);
}

void reduce_div(void *buf, uint64_t count, enum dtype dt, uint32_t divisor)
{
	reduce_div_isa(reduce_isa(), buf, count, dt, divisor);
}
