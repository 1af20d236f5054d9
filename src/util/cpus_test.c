/* Who shares a rank's CPUs: ranks of one kernel whose affinity masks meet, against the CPUs
 * of their union; other kernels and disjoint masks never count (cpus_shared_crowded). */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/common.h"
#include "util/cpus.h"

/* A mask from a bit field of CPUs 0..31 (0: empty, unreadable). */
static cpu_set_t mask(uint32_t bits)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	for (int i = 0; i < 32; i++)
		if (bits & (1u << i))
			CPU_SET(i, &s);
	return s;
}

static void test_shared(void **state)
{
	static const struct {
		const char *what;
		int nranks, online, busy;
		int kernel[8];
		uint32_t bits[8];
		bool want[8];
	} cases[] = {
		{"8 namespace hosts of one 2-CPU kernel, unbound", 8, 2, 1,
		 {0, 0, 0, 0, 0, 0, 0, 0}, {0},
		 {true, true, true, true, true, true, true, true}},
		{"2 ranks, 2 CPUs: a CPU each", 2, 2, 1, {0, 0}, {0}, {false, false}},
		{"2 ranks with 2 busy threads each on 2 CPUs", 2, 2, 2, {0, 0}, {0}, {true, true}},
		{"4 ranks on 2 kernels of 2 CPUs each", 4, 2, 1, {0, 0, 2, 2}, {0},
		 {false, false, false, false}},
		{"3 ranks on one kernel of 2 CPUs, one on another", 4, 2, 1, {0, 0, 0, 3}, {0},
		 {true, true, true, false}},
		{"4 ranks bound a CPU each of 4", 4, 4, 1, {0, 0, 0, 0}, {1, 2, 4, 8},
		 {false, false, false, false}},
		{"2 ranks bound to CPU 0, 2 to CPUs 2-3: the first pair crowded", 4, 4, 1,
		 {0, 0, 0, 0}, {1, 1, 0xc, 0xc}, {true, true, false, false}},
		{"a rank bound to CPUs 0-1 meets an unbound one: 2 ranks on 4 CPUs", 2, 4, 1,
		 {0, 0}, {0x3, 0}, {false, false}},
		{"unbound rank on 2 CPUs meets 2 bound to CPU 0", 3, 2, 1, {0, 0, 0}, {0, 1, 1},
		 {true, true, true}},
		{"one rank alone", 1, 1, 1, {0}, {0}, {false}},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		cpu_set_t m[8];

		for (int r = 0; r < cases[i].nranks; r++)
			m[r] = mask(cases[i].bits[r]);
		for (int r = 0; r < cases[i].nranks; r++) {
			bool got = cpus_shared_crowded(m, cases[i].kernel, cases[i].nranks, r,
						       cases[i].busy, cases[i].online);

			if (got != cases[i].want[r])
				fail_msg("%s: rank %d crowded %d, want %d", cases[i].what, r, got,
					 cases[i].want[r]);
		}
	}
}

/* The count behind the host CPU figure: equal map entries, 1 without a map. */
static void test_host_ranks(void **state)
{
	const int kernel[5] = {0, 0, 2, 0, 4};

	(void)state;
	assert_int_equal(cpus_host_ranks(kernel, 5, 0), 3);
	assert_int_equal(cpus_host_ranks(kernel, 5, 2), 1);
	assert_int_equal(cpus_host_ranks(kernel, 5, 3), 3);
	assert_int_equal(cpus_host_ranks(NULL, 5, 3), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_host_ranks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
