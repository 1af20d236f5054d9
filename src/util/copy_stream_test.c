/* The streaming copy: equal to memcpy at every alignment of either side and at lengths
 * around the 64-byte line (head only, head and tail, whole lines), bytes outside the
 * destination range untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/copy_stream.h"

#define AREA 4096

static void test_matches_memcpy(void **state)
{
	static const struct {
		size_t dst_off, src_off, n;
	} cases[] = {
	    {0, 0, 0},	  {0, 0, 1},	  {0, 0, 64},	  {0, 0, 3000},	 {1, 0, 63},
	    {1, 0, 64},	  {63, 5, 65},	  {17, 3, 1000},  {32, 32, 2048}, {60, 0, 4},
	    {60, 0, 3},	  {7, 9, 3077},	  {64, 1, 2500},
	};
	unsigned char *src = malloc(AREA), *dst = malloc(AREA), *want = malloc(AREA);

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	assert_non_null(want);
	for (size_t i = 0; i < AREA; i++)
		src[i] = (unsigned char)(i * 131 + 7);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(dst, 0xa5, AREA);
		memset(want, 0xa5, AREA);
		memcpy(want + cases[i].dst_off, src + cases[i].src_off, cases[i].n);
		gs_copy_stream(dst + cases[i].dst_off, src + cases[i].src_off, cases[i].n);
		assert_memory_equal(dst, want, AREA);
	}
	free(src);
	free(dst);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_matches_memcpy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
