/*
 * The test hook GRADSYNC_TEST_DELAY=RANK:USEC[@N] (README, Collective benchmark): that
 * rank sleeps before each AllReduce, or with @N before the Nth only, the sleep shown in
 * the sleeping thread's activity record, so the others wait for it: straggler naming,
 * and with a sleep far past the timeout a rank stuck in the case, which no abort ends
 * (rank 0's probe names it, run/blame.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "run/run.h"
#include "util/timeutil.h"

struct run_test_delay run_test_delay_get(int rank)
{
	const char *e = getenv("GRADSYNC_TEST_DELAY");
	struct run_test_delay d = { 0 };
	int r, at = 0, n;
	long us;

	n = e ? sscanf(e, "%d:%ld@%d", &r, &us, &at) : 0;
	if (n < 2 || r != rank || us <= 0 || at < 0)
		return d;
	d.ns = (uint64_t)us * 1000;
	d.at = n == 3 ? at : 0;
	return d;
}

void run_test_delay_sleep(struct activity *a, const struct run_test_delay *d, int i)
{
	struct act_mark m;

	if (!d->ns || (d->at && d->at != i + 1))
		return;
	act_enter(a, ACT_TEST_DELAY, -1, 0, time_now_ns(), &m);
	time_sleep_ns(d->ns);
	act_leave(a, &m, time_now_ns());
}
