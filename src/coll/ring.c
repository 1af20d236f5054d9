/*
 * Ring AllReduce: reduce-scatter then all-gather around rank -> rank+1, n-1 steps
 * each, over n balanced chunks (chunks are empty when count < nranks; empty transfers
 * are dropped on both sides alike).
 */
#include "coll/schedule.h"

static int ring_mod(int a, int n)
{
	return ((a % n) + n) % n;
}

int sched_build_ring(struct sched *s)
{
	int n = s->nranks, r = s->rank, next = ring_mod(r + 1, n), prev = ring_mod(r - 1, n);
	int ret;

	ret = sched_alloc(s, n > 1 ? 2 * (uint32_t)(n - 1) : 0);
	if (ret || n == 1)
		return ret;
	/* Reduce-scatter: step k sends chunk r-k and folds chunk r-k-1 in. */
	for (int k = 0; k < n - 1; k++) {
		int sc = ring_mod(r - k, n), rc = ring_mod(r - k - 1, n);

		ret = sched_add_send_chunks(s, k, next, n, sc, sc + 1);
		if (!ret)
			ret = sched_add_recv_chunks(s, k, prev, SCHED_RECV_REDUCE, n, rc, rc + 1);
		if (ret)
			return ret;
	}
	/* The last fold completed chunk r+1: this rank owns it from here on. */
	sched_set_scale_chunks(s, n - 2, n, next, next + 1);
	/* All-gather: step k forwards chunk r+1-k and receives chunk r-k. */
	for (int k = 0; k < n - 1; k++) {
		int sc = ring_mod(r + 1 - k, n), rc = ring_mod(r - k, n);
		uint32_t step = (uint32_t)(n - 1 + k);

		ret = sched_add_send_chunks(s, step, next, n, sc, sc + 1);
		if (!ret)
			ret = sched_add_recv_chunks(s, step, prev, SCHED_RECV_COPY, n, rc, rc + 1);
		if (ret)
			return ret;
	}
	return 0;
}
