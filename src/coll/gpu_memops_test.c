/* The GPU memops without a GPU (CI): creation fails cleanly, never half-made. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpu/gpu.h"
#include "coll/gpu_memops.h"

static void test_no_gpu(void **state)
{
	static const int channels[] = { 1, 2, 64 };

	(void)state;
	if (gpu_available())
		skip();
	for (size_t i = 0; i < sizeof(channels) / sizeof(channels[0]); i++)
		assert_null(gpu_memops_create(channels[i]));
	gpu_memops_destroy(NULL);
}

static void test_bad_channels(void **state)
{
	(void)state;
	assert_null(gpu_memops_create(0));
	assert_null(gpu_memops_create(COLL_MAX_CHANNELS + 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_gpu),
		cmocka_unit_test(test_bad_channels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
