/*
 * The blame window: how long, after a case failed, rank 0 takes to name the ranks that
 * caused it and write the case, step by step, for a job's [launch] timeout. One policy
 * for the three that must agree on it: the ranks (run/rank.c, run/blame.c), rank 0's
 * bootstrap reader (which judges rank 0 itself) and the local driver, which ends the
 * survivors of a failure no sooner than the window (launch/spawn.c).
 */
#ifndef GS_LAUNCH_BLAME_WINDOW_H
#define GS_LAUNCH_BLAME_WINDOW_H

#include <stdint.h>

/* The full window and the shortest, in ms (blame_window.c says why these). */
#define BLAME_WINDOW_MAX_MS 3500
#define BLAME_WINDOW_MIN_MS 1500

struct blame_window {
	/* a rank whose case failed waits this long for the job's abort, whose reason
	 * names the rank that caused it (a dead peer's EOF reaches the watchdog later
	 * than the transport sees it), before it aborts with its own */
	uint32_t reason_wait_ms;
	/* rank 0's probe (bootstrap_probe's wait_ms): a rank that has not answered its
	 * PING this long after it, nor left, is stopped or its host froze */
	uint32_t probe_wait_ms;
	/* the probe's grace_ms: a thread still in the case this long after its rank
	 * heard of the abort has not returned from it (a healthy one is out within
	 * 0.1 s: the waits look at the abort as they go) */
	uint32_t probe_grace_ms;
	/* rank 0 writes the case */
	uint32_t write_ms;
	/* all of it: reason_wait_ms + 2 * probe_wait_ms + probe_grace_ms + write_ms (a
	 * probe asks at most twice) */
	uint32_t total_ms;
};

/* The window of a job whose [launch] timeout is timeout_ns: pure, the same everywhere. */
void blame_window_plan(uint64_t timeout_ns, struct blame_window *w);

#endif
