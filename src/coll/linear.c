/*
 * Linear AllReduce (Open MPI's basic linear): every rank sends its whole buffer to rank
 * 0, which reduces them and sends the result back. Each non-root rank makes one send and
 * one receive, 2(n-1) messages in all where rd makes n log2 n and ring 2n(n-1): the
 * fewest hand-overs, which is what counts when ranks outnumber CPUs and every message
 * waits for its receiver to be scheduled. The root carries n-1 whole buffers each way,
 * so it is for small messages only.
 *
 * The root takes at most SCHED_MAX_XFER ranks per step (the step's transfer bound, and
 * its scratch bound: SCHED_MAX_XFER whole pieces of one chunk each): with b = ceil((n-1) /
 * SCHED_MAX_XFER) batches, batch i (ranks 1 + i*SCHED_MAX_XFER ..) sends up in step i and
 * receives the result in step b + i; 2b steps in all, 2 up to 5 ranks.
 */
#include "coll/schedule.h"

_Static_assert(SCHED_MAX_XFER <= SCHED_SCRATCH_CHUNKS,
	       "the root reduces one batch of whole one-chunk pieces per step");

int sched_build_linear(struct sched *s)
{
	int n = s->nranks, r = s->rank, ret = 0;
	uint32_t batches = (uint32_t)(n - 1 + SCHED_MAX_XFER - 1) / SCHED_MAX_XFER;

	ret = sched_alloc(s, 2 * batches);
	if (ret || n == 1)
		return ret;
	if (r) {
		uint32_t b = (uint32_t)(r - 1) / SCHED_MAX_XFER;

		ret = sched_add_send(s, b, 0, 0, s->count);
		return ret ? ret : sched_add_recv(s, batches + b, 0, SCHED_RECV_COPY, 0, s->count);
	}
	for (int p = 1; p < n && !ret; p++) {
		uint32_t b = (uint32_t)(p - 1) / SCHED_MAX_XFER;

		ret = sched_add_recv(s, b, p, SCHED_RECV_REDUCE, 0, s->count);
		if (!ret)
			ret = sched_add_send(s, batches + b, p, 0, s->count);
	}
	sched_set_scale(s, batches - 1, 0, s->count);
	return ret;
}
