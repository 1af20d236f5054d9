/*
 * Who has the last word on a case's file (run/report.c, run_case_save): rank 0's main
 * thread writes its final account, its bootstrap reader a stand-in when the main thread
 * seems stuck. Both orders are forced, one after the other, with no clock: whichever
 * comes first, the file holds the main thread's account; the reader's stand-in stays
 * only where the main thread never wrote.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "run/run.h"
#include "util/test_tmpdir.h"

static struct experiment ex;
static struct run_rank rr;

static int setup(void **state)
{
	char cases[PATH_MAX + 16];

	(void)state;
	memset(&rr, 0, sizeof(rr));
	pthread_mutex_init(&rr.save_lock, NULL);
	ex.base.report.write_timeout_ns = 5000000000ull;
	rr.exp = &ex;
	if (test_tmpdir_make(rr.run_dir, sizeof(rr.run_dir), "case-account"))
		return -1;
	snprintf(cases, sizeof(cases), "%s/cases", rr.run_dir);
	return mkdir(cases, 0755);
}

static int teardown(void **state)
{
	(void)state;
	pthread_mutex_destroy(&rr.save_lock);
	return test_tmpdir_remove(rr.run_dir);
}

/* An account of case index by who, as the two threads write theirs: its status and why. */
static int save(size_t index, enum run_case_account who, bool *named)
{
	json_t *c = json_pack("{s:s, s:s}", "status", "failed", "error",
			      who == RUN_CASE_STANDIN ? "rank 0 is stuck" : "its own account");
	char path[PATH_MAX + 32], why[PATH_MAX + 160];
	int ret = run_case_save(&rr, index, c, who, named, path, sizeof(path), why, sizeof(why));

	if (ret == -EALREADY)
		assert_string_equal(why, "not written: the main thread's own account of the case is in");
	json_decref(c);
	return ret;
}

/* Case index's file as written: its error. */
static const char *on_disk(size_t index, char *buf, size_t len)
{
	char path[PATH_MAX + 32];
	json_t *c;

	run_case_file(path, sizeof(path), rr.run_dir, index);
	c = json_load_file(path, 0, NULL);
	assert_non_null(c);
	snprintf(buf, len, "%s", json_string_value(json_object_get(c, "error")));
	json_decref(c);
	return buf;
}

/* The reader first: it names rank 0 and writes its stand-in; the main thread comes back
 * and its account replaces it, told it had been named. */
static void test_reader_first(void **state)
{
	char buf[64];
	bool named = false;

	(void)state;
	assert_true(run_case_standin_claim(&rr, 3));
	assert_int_equal(save(3, RUN_CASE_STANDIN, NULL), 0);
	assert_string_equal(on_disk(3, buf, sizeof(buf)), "rank 0 is stuck");
	assert_int_equal(save(3, RUN_CASE_FINAL, &named), 0);
	assert_true(named);
	assert_string_equal(on_disk(3, buf, sizeof(buf)), "its own account");
}

/* The main thread first: the reader, deciding after, neither names nor writes. */
static void test_main_first(void **state)
{
	char buf[64];
	bool named = true;

	(void)state;
	assert_int_equal(save(4, RUN_CASE_FINAL, &named), 0);
	assert_false(named);
	assert_false(run_case_standin_claim(&rr, 4));
	assert_string_equal(on_disk(4, buf, sizeof(buf)), "its own account");
}

/* The reader decided first, the main thread wrote before the reader's write: the
 * stand-in's write is refused, the main thread's account stays. */
static void test_main_between(void **state)
{
	char buf[64];
	bool named = false;

	(void)state;
	assert_true(run_case_standin_claim(&rr, 5));
	assert_int_equal(save(5, RUN_CASE_FINAL, &named), 0);
	assert_true(named);
	assert_int_equal(save(5, RUN_CASE_STANDIN, NULL), -EALREADY);
	assert_string_equal(on_disk(5, buf, sizeof(buf)), "its own account");
}

/* A case whose main thread never came back keeps its stand-in, whatever was final for
 * the case before it; a partial file (the rows so far) does not count as final. */
static void test_per_case(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(save(6, RUN_CASE_FINAL, NULL), 0);
	assert_int_equal(save(7, RUN_CASE_PARTIAL, NULL), 0);
	assert_true(run_case_standin_claim(&rr, 7));
	assert_int_equal(save(7, RUN_CASE_STANDIN, NULL), 0);
	assert_string_equal(on_disk(7, buf, sizeof(buf)), "rank 0 is stuck");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader_first),
		cmocka_unit_test(test_main_first),
		cmocka_unit_test(test_main_between),
		cmocka_unit_test(test_per_case),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
