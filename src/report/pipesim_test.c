/* Unit tests of the pipelining model (report/pipesim.h): hand-computed timelines. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "report/pipesim.h"

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-9 * fmax(1, fabs(b));
}

static void test_sharing_and_steps(void **state)
{
	/* ports 0..3: rank r's port out is r, in is 2 + r (2 ranks) */
	const struct psim_xfer one[] = { { 0, 1, 0, 0, 3, 1.0 } };
	const struct psim_xfer both_ways[] = { { 0, 1, 0, 0, 3, 1.0 }, { 1, 0, 0, 1, 2, 1.0 } };
	const struct psim_xfer same_port[] = { { 0, 1, 0, 0, 3, 1.0 }, { 0, 1, 0, 0, 3, 3.0 } };
	const struct psim_xfer two_steps[] = { { 0, 1, 0, 0, 3, 1.0 }, { 1, 0, 1, 1, 2, 1.0 } };
	const struct psim_xfer free_port[] = { { 0, 1, 0, -1, -1, 5.0 }, { 1, 0, 1, 1, 2, 1.0 } };

	(void)state;
	assert_true(near(psim_run(one, 1, 2, 1, 4, 1, 1, false), 1));
	/* full duplex: each way has its own ports */
	assert_true(near(psim_run(both_ways, 2, 2, 1, 4, 1, 1, false), 1));
	/* one port shared: 1 + 3 bytes at 1 byte per unit, max-min fair: 4 */
	assert_true(near(psim_run(same_port, 2, 2, 1, 4, 1, 1, false), 4));
	/* a piece's steps follow each other; 3 pieces, one at a time: 6 */
	assert_true(near(psim_run(two_steps, 2, 2, 2, 4, 1, 1, false), 2));
	assert_true(near(psim_run(two_steps, 2, 2, 2, 4, 3, 1, false), 6));
	/* two in flight, ungated: pieces 0 and 1 move together (steps 0..2, 2..4), and
	 * piece 2 takes the first slot freed: 6, no better than one at a time */
	assert_true(near(psim_run(two_steps, 2, 2, 2, 4, 3, 2, false), 6));
	/* gated at ceil(2 / 2) = 1 piece per step: a pipeline, one unit a beat: 4 */
	assert_true(near(psim_run(two_steps, 2, 2, 2, 4, 3, 2, true), 4));
	/* a transfer on no limited port takes no time */
	assert_true(near(psim_run(free_port, 2, 2, 2, 4, 2, 1, false), 2));
}

/* Lockstep against staggered: three steps, each loading a different port (a tree's
 * levels). Started together, pieces wait on one port at a time; gated, one per step. */
static void test_gate_spreads_pieces(void **state)
{
	/* 4 ranks on a line; step k: rank k -> k + 1, ports: out r, in 4 + r */
	const struct psim_xfer line[] = {
		{ 0, 1, 0, 0, 5, 1.0 }, { 1, 2, 1, 1, 6, 1.0 }, { 2, 3, 2, 2, 7, 1.0 } };
	double lock = psim_run(line, 3, 4, 3, 8, 30, 3, false);
	double gated = psim_run(line, 3, 4, 3, 8, 30, 3, true);

	(void)state;
	/* 30 pieces through 3 ports in a row, 1 unit each: a full pipeline takes 30 + 2 */
	assert_true(near(gated, 32));
	/* three pieces moving together share each port three ways: 3 units per step */
	assert_true(lock > gated);
}

static void test_errors(void **state)
{
	const struct psim_xfer self[] = { { 1, 1, 0, 0, 3, 1.0 } };
	const struct psim_xfer bad_port[] = { { 0, 1, 0, 0, 9, 1.0 } };
	const struct psim_xfer one[] = { { 0, 1, 0, 0, 3, 1.0 } };

	(void)state;
	assert_true(psim_run(self, 1, 2, 1, 4, 1, 1, false) == -EINVAL);
	assert_true(psim_run(bad_port, 1, 2, 1, 4, 1, 1, false) == -EINVAL);
	assert_true(psim_run(one, 1, 2, 1, 4, 0, 1, false) == -EINVAL);
	assert_true(psim_run(one, 1, 2, 1, 4, 1, 0, false) == -EINVAL);
	/* nothing to move: no time */
	assert_true(near(psim_run(one, 0, 2, 1, 4, 2, 1, false), 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sharing_and_steps),
		cmocka_unit_test(test_gate_spreads_pieces),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
