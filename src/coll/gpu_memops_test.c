/* The GPU memops without a GPU (CI): creation fails cleanly, never half-made; the batch policy. */
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

/* The batch policy: steady `batch`, from 1 doubling at the start, halving at the end. */
static void test_batch_pieces(void **state)
{
	static const struct {
		int batch;
		bool ramp;
		uint32_t queued;
		uint64_t left, want;
	} c[] = {
		{ 8, false, 0, 1000, 8 }, { 8, false, 0, 1, 8 },   /* off: always batch */
		{ 8, true, 0, 1000, 1 },  { 8, true, 1, 1000, 2 }, /* the start doubles */
		{ 8, true, 2, 1000, 4 },  { 8, true, 3, 1000, 8 },
		{ 8, true, 40, 1000, 8 }, { 16, true, 4, 1000, 16 }, /* then batch */
		{ 8, true, 9, 10, 5 },	  { 8, true, 9, 5, 2 },	     /* the end halves */
		{ 8, true, 9, 3, 1 },	  { 8, true, 9, 1, 1 },	     /* at least 1 */
		{ 8, true, 9, 0, 1 },	  { 1, true, 9, 1000, 1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		assert_int_equal(gpu_memops_batch_pieces(c[i].batch, c[i].ramp, c[i].queued,
							 c[i].left),
				 c[i].want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_gpu),
		cmocka_unit_test(test_bad_channels),
		cmocka_unit_test(test_batch_pieces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
