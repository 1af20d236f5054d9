/*
 * The executor's idle policy (comm_idle_action): when an empty poll round spins on,
 * yields, naps or sleeps in the transport, on a host with a CPU per rank, a crowded one, and
 * a CPU shared with another task.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "coll/comm.h"
#include "util/common.h"

struct idle_case {
	bool crowded, contended, can_wait;
	uint32_t spins;
	uint64_t idle_ns;
	enum comm_idle_act want;
};

static void test_idle_action(void **state)
{
	static const struct idle_case cases[] = {
	    /* a CPU per rank: spin through a short wait, yielding now and then; past
	     * COMM_YIELD_PROBE_NS every round that reads the clock yields (a probe for
	     * someone else on our CPU), and the transport is asked to sleep only after
	     * COMM_WAIT_AFTER_NS (a wake-up costs more than a small AllReduce) */
	    {false, false, true, 1, 1000, COMM_IDLE_SPIN},
	    {false, false, true, 2, COMM_YIELD_PROBE_NS, COMM_IDLE_SPIN},
	    {false, false, true, COMM_SPINS_BEFORE_YIELD, 1000, COMM_IDLE_YIELD},
	    {false, false, true, COMM_SPINS_BEFORE_YIELD + 1, 1000, COMM_IDLE_SPIN},
	    {false, false, true, 2 * COMM_SPINS_BEFORE_YIELD, 1000, COMM_IDLE_YIELD},
	    {false, false, true, COMM_CLOCK_EVERY, COMM_YIELD_PROBE_NS + 1, COMM_IDLE_YIELD},
	    {false, false, true, 2, COMM_WAIT_AFTER_NS, COMM_IDLE_YIELD},
	    {false, false, true, 2, COMM_WAIT_AFTER_NS + 1, COMM_IDLE_WAIT},
	    {false, false, true, 2, 10 * COMM_NAP_AFTER_NS, COMM_IDLE_WAIT},
	    /* no transport to sleep in: yield now and then, nap once the wait is long */
	    {false, false, false, COMM_SPINS_BEFORE_YIELD - 1, 1000, COMM_IDLE_SPIN},
	    {false, false, false, COMM_SPINS_BEFORE_YIELD, 1000, COMM_IDLE_YIELD},
	    {false, false, false, 2, COMM_YIELD_PROBE_NS + 1, COMM_IDLE_YIELD},
	    {false, false, false, 2, COMM_NAP_AFTER_NS + 1, COMM_IDLE_NAP},
	    /* crowded: yield every round after a few spins, sleep only once the wait is
	     * long (a wake-up per step costs more than the yields) */
	    {true, false, true, COMM_CROWDED_SPINS - 1, 1000, COMM_IDLE_SPIN},
	    {true, false, true, COMM_CROWDED_SPINS, 1000, COMM_IDLE_YIELD},
	    {true, false, true, COMM_CROWDED_SPINS + 1000, 1000, COMM_IDLE_YIELD},
	    {true, false, true, COMM_CROWDED_SPINS, COMM_YIELD_PROBE_NS + 1, COMM_IDLE_YIELD},
	    {true, false, true, COMM_CROWDED_SPINS, COMM_CROWDED_WAIT_AFTER_NS, COMM_IDLE_YIELD},
	    {true, false, true, 1, COMM_CROWDED_WAIT_AFTER_NS + 1, COMM_IDLE_WAIT},
	    {true, false, false, COMM_CROWDED_SPINS, 1000, COMM_IDLE_YIELD},
	    {true, false, false, 1, COMM_NAP_AFTER_NS + 1, COMM_IDLE_NAP},
	    /* contended (a yield ran another task): yield every round, sleep soon */
	    {false, true, true, COMM_CROWDED_SPINS - 1, 1000, COMM_IDLE_SPIN},
	    {false, true, true, COMM_CROWDED_SPINS, 1000, COMM_IDLE_YIELD},
	    {false, true, true, 1, COMM_CONTENDED_WAIT_AFTER_NS, COMM_IDLE_SPIN},
	    {false, true, true, 1, COMM_CONTENDED_WAIT_AFTER_NS + 1, COMM_IDLE_WAIT},
	    {true, true, true, 1, COMM_CONTENDED_WAIT_AFTER_NS + 1, COMM_IDLE_WAIT},
	    {false, true, false, COMM_CROWDED_SPINS, COMM_CONTENDED_WAIT_AFTER_NS + 1,
	     COMM_IDLE_YIELD},
	    {false, true, false, 1, COMM_NAP_AFTER_NS + 1, COMM_IDLE_NAP},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct idle_case *k = &cases[i];

		assert_int_equal(
		    comm_idle_action(k->crowded, k->contended, k->can_wait, k->spins, k->idle_ns),
		    k->want);
	}
}

/* The first empty round reads the clock (the wait's start), then one in COMM_CLOCK_EVERY;
 * crowded, every round yields and reads it. */
static void test_idle_clock(void **state)
{
	(void)state;
	assert_true(comm_idle_reads_clock(false, 1));
	assert_false(comm_idle_reads_clock(false, 2));
	assert_false(comm_idle_reads_clock(false, COMM_CLOCK_EVERY - 1));
	assert_true(comm_idle_reads_clock(false, COMM_CLOCK_EVERY));
	assert_true(comm_idle_reads_clock(false, COMM_SPINS_BEFORE_YIELD));
	assert_true(comm_idle_reads_clock(true, 2));
	assert_true(comm_idle_reads_clock(true, 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_idle_action),
	    cmocka_unit_test(test_idle_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
