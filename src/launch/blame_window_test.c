/*
 * The blame window's policy (launch/blame_window.c): the steps of a few timeouts, then
 * the promises over the whole range of [launch] timeout: the steps add up to the window
 * at most, the window lies in 1.5..3.5 s, outlives only a timeout under 1.5 s, and never
 * shrinks as the timeout grows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "launch/blame_window.h"
#include "util/common.h"

#define MS 1000000ull

static void test_steps(void **state)
{
	static const struct {
		uint64_t timeout_ns;
		struct blame_window want;
	} cases[] = {
		/* the default 60 s, and anything from 7 s: the full window */
		{ 60000 * MS, { 1000, 500, 1000, 500, 3500 } },
		{ 7000 * MS, { 1000, 500, 1000, 500, 3500 } },
		{ 86400000 * MS, { 1000, 500, 1000, 500, 3500 } },
		/* half the timeout, the full window's proportions, rounded down */
		{ 6000 * MS, { 857, 428, 857, 428, 3000 } },
		{ 4000 * MS, { 571, 285, 571, 285, 2000 } },
		/* 3 s and under: the floor */
		{ 3000 * MS, { 428, 214, 428, 214, 1500 } },
		{ 1000 * MS, { 428, 214, 428, 214, 1500 } },
		{ 1 * MS, { 428, 214, 428, 214, 1500 } },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct blame_window w;

		blame_window_plan(cases[i].timeout_ns, &w);
		assert_int_equal(w.reason_wait_ms, cases[i].want.reason_wait_ms);
		assert_int_equal(w.probe_wait_ms, cases[i].want.probe_wait_ms);
		assert_int_equal(w.probe_grace_ms, cases[i].want.probe_grace_ms);
		assert_int_equal(w.write_ms, cases[i].want.write_ms);
		assert_int_equal(w.total_ms, cases[i].want.total_ms);
	}
}

static void test_promises(void **state)
{
	uint32_t last = 0;

	(void)state;
	/* [launch] timeout's range, 1 ms to a day, every 10 ms up to a minute, then hours */
	for (uint64_t t = MS; t <= 86400000 * MS; t += t < 60000 * MS ? 10 * MS : 3600000 * MS) {
		struct blame_window w;

		blame_window_plan(t, &w);
		assert_true(w.reason_wait_ms + 2 * w.probe_wait_ms + w.probe_grace_ms +
				    w.write_ms <= w.total_ms);
		assert_in_range(w.total_ms, BLAME_WINDOW_MIN_MS, BLAME_WINDOW_MAX_MS);
		/* the run outlives its timeout only under the floor, by the floor at most */
		assert_true((uint64_t)w.total_ms * MS <= GS_MAX(t, BLAME_WINDOW_MIN_MS * MS));
		assert_true(w.total_ms >= last);
		last = w.total_ms;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_promises),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
