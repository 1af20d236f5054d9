/*
 * The blame window's policy (launch/blame_window.h): its length from the timeout, and
 * its steps in the full window's proportions.
 */
#include "launch/blame_window.h"
#include "util/common.h"

/*
 * The full window's steps, ms: a second's wait for the job's reason, two PINGs of half a
 * second, a second's grace, half a second to write. They are what a probe under load has
 * needed so far; longer helps nobody, so a long timeout gets these.
 */
static const struct blame_window full = {
	.reason_wait_ms = 1000, .probe_wait_ms = 500, .probe_grace_ms = 1000, .write_ms = 500,
	.total_ms = BLAME_WINDOW_MAX_MS,
};

/*
 * min(3.5 s, max(1.5 s, timeout / 2)):
 * - the local driver ends the survivors of a failure max(timeout, window) after it, so a
 *   window of half the timeout costs a run no time, and leaves rank 0 the other half as
 *   slack before that SIGTERM on a host that runs late; a job given a short timeout
 *   wants its failures told as fast, and its naming shrinks with it;
 * - never under 1.5 s: its steps would be 0.21 s for a PONG and a grace of 0.43 s for a
 *   thread to leave the case, about what a loaded host's scheduling can delay a healthy
 *   rank by; shorter, slow ranks would be called stuck. So only a timeout under 1.5 s
 *   is outlived, by 1.5 s less the timeout at most.
 * The steps keep the full window's proportions, rounded down: they never add up to more.
 */
void blame_window_plan(uint64_t timeout_ns, struct blame_window *w)
{
	uint64_t half_ms = timeout_ns / 2000000ull;
	uint32_t total = (uint32_t)GS_MIN((uint64_t)BLAME_WINDOW_MAX_MS,
					  GS_MAX((uint64_t)BLAME_WINDOW_MIN_MS, half_ms));

	w->reason_wait_ms = full.reason_wait_ms * total / full.total_ms;
	w->probe_wait_ms = full.probe_wait_ms * total / full.total_ms;
	w->probe_grace_ms = full.probe_grace_ms * total / full.total_ms;
	w->write_ms = full.write_ms * total / full.total_ms;
	w->total_ms = total;
}
