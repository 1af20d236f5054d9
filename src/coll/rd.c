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
	int n = s->nranks, p, lg, rem, v, ret;
	uint64_t count = s->count;
	uint32_t first, nsteps;
	bool away;

	rem = sched_fold_split(n, &p, &lg);
	first = rem ? 1 : 0;
	nsteps = (uint32_t)lg + 2 * first;
	ret = sched_alloc(s, nsteps);
	if (ret || n == 1)
		return ret;
	ret = sched_add_fold(s, rem, nsteps - 1, &away);
	if (ret || away)
		return ret;
	v = sched_fold_index(s->rank, rem);
	for (int j = 0; j < lg; j++) {
		int peer = sched_fold_rank(v ^ (1 << j), rem);
		uint32_t step = first + (uint32_t)j;

		ret = sched_add_send(s, step, peer, 0, count);
		if (!ret)
			ret = sched_add_recv(s, step, peer, SCHED_RECV_REDUCE, 0, count);
		if (ret)
			return ret;
		s->steps[step].overlap = true;
	}
	sched_set_scale(s, first + (uint32_t)lg - 1, 0, count);
	return 0;
}
