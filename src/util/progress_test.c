/* Unit tests of the live progress line's text (util/progress.h): iterations and waits. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "util/common.h"
#include "util/progress.h"

static void test_iteration_line(void **state)
{
	char buf[256];

	(void)state;
	progress_format(buf, sizeof(buf), 3, 10, "64MiB", 5, 20, 12.34, 0.25);
	assert_string_equal(buf, "case 3/10: 64MiB iteration 5/20,  25%, elapsed 12.3s, ETA 37.0s");
	/* nothing done yet: no ETA to give */
	progress_format(buf, sizeof(buf), 1, 1, "1MiB", 0, 20, 0.5, 0);
	assert_string_equal(buf, "case 1/1: 1MiB iteration 0/20,   0%, elapsed 0.5s, ETA ?");
	progress_format(buf, sizeof(buf), 2, 72, "workload", 3, 3, 125, 1);
	assert_string_equal(buf, "case 2/72: workload iteration 3/3, 100%, elapsed 2m05s, ETA 0.0s");
}

static void test_wait_line(void **state)
{
	char buf[256];

	(void)state;
	progress_format_wait(buf, sizeof(buf), 3, 10, "connecting", 2, 4, 1.04);
	assert_string_equal(buf, "case 3/10: connecting, 2/4 ranks, 1.0s");
	/* before the first case: no case number */
	progress_format_wait(buf, sizeof(buf), 0, 10, "waiting for ranks", 1, 8, 61);
	assert_string_equal(buf, "waiting for ranks: 1/8 ranks, 1m01s");
}

/* A disabled progress (ranks other than 0, -q) prints nothing, whatever is called. */
static void test_disabled_silent(void **state)
{
	char out[256] = "";
	FILE *f = fmemopen(out, sizeof(out), "w");
	struct progress p;

	(void)state;
	assert_non_null(f);
	progress_init(&p, f, false);
	progress_wait(&p, "waiting for ranks", 1, 4);
	progress_arrived(&p, 3, 4);
	progress_case(&p, 1, 1, "base", 4);
	progress_tick(&p, "4KiB", 1, 2, 0.5);
	progress_row(&p, "row");
	progress_fini(&p);
	fclose(f);
	assert_string_equal(out, "");
}

/* An arrival only moves a wait's count: after a tick it changes nothing. */
static void test_arrival_only_while_waiting(void **state)
{
	char out[1024] = "";
	FILE *f = fmemopen(out, sizeof(out), "w");
	struct progress p;

	(void)state;
	assert_non_null(f);
	progress_init(&p, f, true);
	progress_case(&p, 1, 2, "base", 4);
	progress_wait(&p, "connecting", 1, 4);
	progress_arrived(&p, 3, 4);
	assert_true(p.waiting);
	assert_int_equal(p.i, 3);
	progress_tick(&p, "4KiB", 1, 5, 0.1);
	assert_false(p.waiting);
	progress_arrived(&p, 2, 4);
	assert_int_equal(p.i, 1);
	progress_fini(&p);
	fclose(f);
	assert_non_null(strstr(out, "case 1/2: base (4 ranks)\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iteration_line),
		cmocka_unit_test(test_wait_line),
		cmocka_unit_test(test_disabled_silent),
		cmocka_unit_test(test_arrival_only_while_waiting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
