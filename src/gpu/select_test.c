/* Unit tests of [gpu] device resolution (gpu_pick_device): table-driven, no GPU needed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>

#include "gpu/gpu.h"
#include "util/common.h"

struct pick_case {
	const char *spec;
	int local_rank;
	int ndev;
	int want;
};

static void test_pick_table(void **state)
{
	static const struct pick_case cases[] = {
		{ "auto", 0, 4, 0 },
		{ "auto", 3, 4, 3 },
		{ "auto", 5, 4, 1 },            /* more ranks than GPUs: modulo */
		{ "auto", 0, 1, 0 },
		{ "auto", 2, 0, -ENODEV },
		{ "none", 0, 8, GPU_DEVICE_NONE },
		{ "none", 7, 0, GPU_DEVICE_NONE },
		{ "0,1,2,3", 2, 4, 2 },
		{ "3,2,1,0", 0, 4, 3 },
		{ "3, 2 ,1,0", 1, 4, 2 },       /* spaces around entries */
		{ "1,1", 1, 2, 1 },             /* two ranks sharing a GPU */
		{ "7", 0, -1, 7 },              /* ndev < 0: range unchecked */
		{ "0,1", 2, 4, -ERANGE },       /* list shorter than the local ranks */
		{ "0,4", 1, 4, -ERANGE },       /* index beyond the visible devices */
		{ "0,,1", 0, 4, -EINVAL },
		{ "0,1,", 0, 4, -EINVAL },
		{ "gpu0", 0, 4, -EINVAL },
		{ "-1", 0, 4, -EINVAL },
		{ "", 0, 4, -EINVAL },
		{ "Auto", 0, 4, -EINVAL },
		{ "1x", 0, 4, -EINVAL },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int got = gpu_pick_device(cases[i].spec, cases[i].local_rank, cases[i].ndev);

		if (got != cases[i].want)
			fail_msg("spec \"%s\" rank %d ndev %d: got %d want %d", cases[i].spec,
				 cases[i].local_rank, cases[i].ndev, got, cases[i].want);
	}
}

static void test_pick_negative_rank(void **state)
{
	(void)state;
	assert_int_equal(gpu_pick_device("auto", -1, 4), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pick_table),
		cmocka_unit_test(test_pick_negative_rank),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
