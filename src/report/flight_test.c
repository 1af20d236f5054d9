/* In-flight time of a link from both ends' logs, and clock offsets bounded by rounds. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "report/flight.h"

static void test_busy(void **state)
{
	/* three messages; the sender posts 2 before the receiver, which posts 3 first;
	 * 4 only the sender logged, 5 only the receiver */
	struct flight_xfer snd[] = {
		{ .tag = 3, .post_s = 10.0, .done_s = 10.1, .bytes = 100 },
		{ .tag = 1, .post_s = 0.0, .done_s = 0.5, .bytes = 100 },
		{ .tag = 2, .post_s = 1.0, .done_s = 1.2, .bytes = 100 },
		{ .tag = 4, .post_s = 20.0, .done_s = 21.0, .bytes = 100 },
	};
	struct flight_xfer rcv[] = {
		{ .tag = 5, .post_s = 30.0, .done_s = 31.0, .bytes = 100 },
		{ .tag = 1, .post_s = 0.2, .done_s = 1.0, .bytes = 100 },  /* [0.2, 1.0] */
		{ .tag = 2, .post_s = 3.0, .done_s = 3.5, .bytes = 100 },  /* [3.0, 3.5]: its post */
		{ .tag = 3, .post_s = 9.0, .done_s = 10.25, .bytes = 100 }, /* [10.0, 10.25] */
	};
	double bytes = 0, t;

	(void)state;
	t = flight_busy(snd, 4, rcv, 4, &bytes);
	assert_true(fabs(t - (0.8 + 0.5 + 0.25)) < 1e-12);
	assert_true(bytes == 300);
	/* two messages at once (channels) count their union once */
	struct flight_xfer s2[] = { { 1, 0, 1, 10 }, { 2, 0.5, 1, 10 } };
	struct flight_xfer r2[] = { { 1, 0, 2, 10 }, { 2, 0, 3, 10 } };

	assert_true(fabs(flight_busy(s2, 2, r2, 2, &bytes) - 3.0) < 1e-12);
	assert_true(bytes == 20);
	/* times before the clock's origin (the collector's) count the same */
	struct flight_xfer s4[] = { { 1, -9, -8, 10 }, { 2, -8.5, -8, 10 } };
	struct flight_xfer r4[] = { { 1, -9, -7, 10 }, { 2, -9, -6, 10 } };

	assert_true(fabs(flight_busy(s4, 2, r4, 2, &bytes) - 3.0) < 1e-12);
	/* a receive "done" before its send was posted (clock error): it took nothing */
	struct flight_xfer s3[] = { { 7, 5, 6, 10 } }, r3[] = { { 7, 1, 4, 10 } };

	assert_true(flight_busy(s3, 1, r3, 1, &bytes) == 0 && bytes == 10);
	assert_true(flight_busy(s3, 0, r3, 1, &bytes) == 0 && bytes == 0);
}

static void test_clock_bounds(void **state)
{
	/* the rank's clock runs 1000 ahead; round trips of 100, 40, 60 with the rank's
	 * read at different points in them */
	int64_t t0[] = { 0, 500, 900 }, t1[] = { 100, 540, 960 };
	int64_t tr[] = { 1000 + 30, 1000 + 530, 1000 + 905 };
	int64_t lo, hi;

	(void)state;
	assert_int_equal(flight_clock_bounds(t0, tr, t1, 3, &lo, &hi), 0);
	/* rounds: [930, 1030], [990, 1030], [975, 1005]: meet at [990, 1005] */
	assert_true(lo == 990 && hi == 1005);
	assert_true(lo <= 1000 && hi >= 1000);
	/* bounds that do not meet (drift): the narrowest round's */
	tr[2] = 1100 + 905;
	assert_int_equal(flight_clock_bounds(t0, tr, t1, 3, &lo, &hi), 0);
	assert_true(lo == 990 && hi == 1030);
	assert_int_equal(flight_clock_bounds(t0, tr, t1, 0, &lo, &hi), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busy),
		cmocka_unit_test(test_clock_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
