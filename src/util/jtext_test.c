/* json_text and utf8_valid: every string reaches JSON, valid UTF-8 unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/jtext.h"

static void check(const char *in, const char *want)
{
	json_t *j = json_text(in);

	assert_non_null(j);
	assert_string_equal(json_string_value(j), want);
	json_decref(j);
}

static void test_valid(void **state)
{
	size_t at = 99;

	(void)state;
	assert_true(utf8_valid("", NULL));
	assert_true(utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", NULL));
	assert_false(utf8_valid("caf\xe9", &at)); /* Latin-1 */
	assert_int_equal(at, 3);
	assert_false(utf8_valid("\xc0\xaf", NULL));         /* overlong '/' */
	assert_false(utf8_valid("\xe0\x80\xaf", NULL));     /* overlong, 3 bytes */
	assert_false(utf8_valid("\xed\xa0\x80", NULL));     /* a surrogate */
	assert_false(utf8_valid("\xf4\x90\x80\x80", NULL)); /* past U+10FFFF */
	assert_false(utf8_valid("ab\xe2\x82", &at));        /* cut short by the end */
	assert_int_equal(at, 2);
}

static void test_json_text(void **state)
{
	(void)state;
	check(NULL, "");
	check("plain", "plain");
	check("caf\xc3\xa9", "caf\xc3\xa9");
	check("caf\xe9", "caf\\xE9");
	check("\xff\xfe" "a\xe2\x82\xac" "\x80", "\\xFF\\xFEa\xe2\x82\xac\\x80");
	check("ab\xe2\x82", "ab\\xE2\\x82");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_json_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
