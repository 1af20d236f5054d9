/*
 * Recursive doubling AllReduce: log2 p steps over p = 2^floor(log2 n) participants, in
 * step j each exchanges its whole buffer with the participant at distance 2^j and
 * reduces what it gets into it. Fewest steps of every algorithm, but each moves the whole
 * buffer: for small messages, where a step's latency outweighs its bytes.
 * Each step's send and receive name the same range (an overlap step, schedule.h): the
 * send carries the values from before the step. With n = p + rem the first 2*rem ranks
 * fold as in rhd.c: each even one hands its buffer to its odd neighbour first and takes
 * the result back last.
 */
#include "coll/schedule.h"

int sched_build_rd(struct sched *s)
{
	uint64_t count = s->count;
	struct sched_fold f;
	int ret;

	ret = sched_fold_begin(s, 1, &f);
	if (ret || f.done)
		return ret;
	for (int j = 0; j < f.lg; j++) {
		int peer = sched_fold_rank(f.v ^ (1 << j), f.rem);
		uint32_t step = f.first + (uint32_t)j;

		ret = sched_add_send(s, step, peer, 0, count);
		if (!ret)
			ret = sched_add_recv(s, step, peer, SCHED_RECV_REDUCE, 0, count);
		if (ret)
			return ret;
		s->steps[step].overlap = true;
	}
	sched_set_scale(s, f.first + (uint32_t)f.lg - 1, 0, count);
	return 0;
}
