/* str_int_set: runs as ranges, and a list out of room ends at a member with how many
 * more (a timeout line naming the ranks that never came stopped mid-list). */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/common.h"
#include "util/strutil.h"

/* members: the characters of a string, '1' = in the set */
static bool in_text(int i, const void *ctx)
{
	return ((const char *)ctx)[i] == '1';
}

static void test_int_set(void **state)
{
	static const struct {
		const char *set;
		size_t len;
		const char *want;
	} cases[] = {
		{ "", 64, "" },
		{ "000", 64, "" },
		{ "1", 64, "0" },
		{ "0110", 64, "1,2" },
		{ "0111", 64, "1-3" },
		{ "1101110001", 64, "0,1,3-5,9" },
		/* all that fits is shown as is */
		{ "10101", 6, "0,2,4" },
		{ "0111111111", 4, "1-9" },
		/* out of room: whole members, then how many more */
		{ "10101010101010101010", 20, "0,2,4,6 and 6 more" },
		{ "10101010101010101010", 22, "0,2,4,6,8 and 5 more" },
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(buf, 'x', sizeof(buf));
		str_int_set(in_text, cases[i].set, (int)strlen(cases[i].set), buf, cases[i].len);
		assert_string_equal(buf, cases[i].want);
		assert_true(strlen(buf) < cases[i].len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int_set),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
