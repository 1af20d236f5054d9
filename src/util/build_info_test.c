/* util/build_info: this build's stamp and id, and the line ranks compare. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "util/build_info.h"

/* struct agree_build's build[] (run/agree.c), whose size never changes */
#define AGREE_BUILD_LEN 96

static void test_build_info_self(void **state)
{
	struct build_info bi;
	char line[AGREE_BUILD_LEN], want[64];

	(void)state;
	build_info_get(&bi);
	/* configure links with --build-id=sha1; the stamp is there */
	assert_int_equal(strlen(bi.build_id), 40);
	assert_true(strspn(bi.build_id, "0123456789abcdef") == 40);
	assert_true(*bi.version && *bi.commit && strlen(bi.date) == 20);
	assert_true(build_info_line(&bi, line, sizeof(line)) < (int)sizeof(line));
	snprintf(want, sizeof(want), ", build-id %.16s)", bi.build_id);
	assert_non_null(strstr(line, want));
}

static void test_build_info_line_fits(void **state)
{
	/* the longest line the header promises to fit: a 30-character version, dirty */
	struct build_info bi = {.version = "123456789012345678901234567890",
				.commit = "0123456789ab-dirty",
				.date = "2026-11-29T16:00:00Z",
				.build_id = "00112233445566778899aabbccddeeff01234567"};
	char line[AGREE_BUILD_LEN];
	int n = build_info_line(&bi, line, sizeof(line));

	(void)state;
	assert_true(n < (int)sizeof(line));
	assert_string_equal(line, "gradsync 123456789012345678901234567890 (commit "
				  "0123456789ab-dirty, build-id 0011223344556677)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_build_info_self),
	    cmocka_unit_test(test_build_info_line_fits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
