/*
 * A link's busy time from the two ends' transfer logs (coll_xfers): how long its data was
 * in flight, and the clock offsets between hosts that putting two logs on one timeline
 * needs. Pure; report/links.h judges the rates, run/links.c gathers the logs.
 *
 * Why not each end's waits (coll_peer_busy): on a ring behind one slow link, rank 0's
 * send to rank 1 waits while rank 1's slots are full (they wait on the slow link), and
 * rank 1's receive from 0 waits at other times, while rank 0 itself is starved by the
 * slow link upstream. Each end's sum is long, so min(send, recv) read the fast link 0 -> 1
 * at 4-9x its rate below the line rate, as slow as the slow one (tests/cluster/RESULTS.md).
 * A message's data is in flight only from when both ends have posted it (the sender has
 * the data, the receiver a place for it) until the receiver has it.
 */
#ifndef GS_REPORT_FLIGHT_H
#define GS_REPORT_FLIGHT_H

#include <stdint.h>

/* One end's entry for one message, times in seconds on a common clock. */
struct flight_xfer {
	uint64_t tag;	/* the transport's tag: the same at both ends of one message */
	double post_s;
	double done_s;	/* completed then (only completed transfers are given) */
	double bytes;
};

/*
 * The union over messages (a send in snd and a receive in rcv with one tag) of
 * [max(both posts), the receive's completion]: the time the link had data in flight.
 * *bytes gets the matched messages' bytes. Messages only one side logged are left out.
 * Sorts both arrays by tag. Returns seconds, 0 when nothing matched.
 */
double flight_busy(struct flight_xfer *snd, int ns, struct flight_xfer *rcv, int nr,
		   double *bytes);

/*
 * The offset of a rank's clock from rank 0's (rank's - rank 0's), from k rounds in each
 * of which rank 0 read t0[i], then (told by rank 0) the rank read tr[i], then (told by the
 * rank) rank 0 read t1[i]: each bounds it to [tr - t1, tr - t0]. *lo, *hi get the
 * intersection of those bounds, or the narrowest one when they do not meet (the clocks
 * drifted between rounds). Returns 0, -EINVAL for k < 1.
 */
int flight_clock_bounds(const int64_t *t0, const int64_t *tr, const int64_t *t1, int k,
			int64_t *lo, int64_t *hi);

#endif
