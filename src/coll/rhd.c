/*
 * Recursive halving-doubling AllReduce (Rabenseifner): reduce-scatter by recursive
 * halving, all-gather by recursive doubling, over p = 2^floor(log2 n) participants.
 * With n = p + rem, the first 2*rem ranks pair up (MPICH's fold): each even one sends
 * its whole buffer to its odd neighbour in the first step and receives the result
 * from it in the last step; in between it has nothing to do.
 *
 * Participant new-rank v: v = r/2 for r < 2*rem (odd r), else r - rem. Halving step j
 * (distance p/2^(j+1)) keeps the half of the current chunk range on v's side of the
 * split; after log2 p steps v owns chunk v (of p balanced chunks) fully reduced.
 */
#include "coll/schedule.h"

int sched_build_rhd(struct sched *s)
{
	int n = s->nranks, p, lg, rem, v;
	uint32_t first, nsteps;
	uint64_t count = s->count;
	int lo, hi, ret;
	bool away;

	rem = sched_fold_split(n, &p, &lg);
	first = rem ? 1 : 0;
	nsteps = 2 * (uint32_t)lg + 2 * first;
	ret = sched_alloc(s, nsteps);
	if (ret || n == 1)
		return ret;
	ret = sched_add_fold(s, rem, nsteps - 1, &away);
	if (ret || away)
		return ret;
	v = sched_fold_index(s->rank, rem);
	lo = 0;
	hi = p;
	for (int j = 0; j < lg; j++) {
		int dist = p >> (j + 1), mid = (lo + hi) / 2, peer = sched_fold_rank(v ^ dist, rem);
		int keep_lo = (v & dist) ? mid : lo, keep_hi = (v & dist) ? hi : mid;
		int send_lo = (v & dist) ? lo : mid, send_hi = (v & dist) ? mid : hi;
		uint64_t so = sched_chunk_off(count, p, send_lo);
		uint64_t ko = sched_chunk_off(count, p, keep_lo);

		ret =
		    sched_add_send(s, first + j, peer, so, sched_chunk_off(count, p, send_hi) - so);
		if (!ret)
			ret = sched_add_recv(s, first + j, peer, SCHED_RECV_REDUCE, ko,
					     sched_chunk_off(count, p, keep_hi) - ko);
		if (ret)
			return ret;
		lo = keep_lo;
		hi = keep_hi;
	}
	{
		uint64_t o = sched_chunk_off(count, p, v);

		sched_set_scale(s, first + lg - 1, o, sched_chunk_off(count, p, v + 1) - o);
	}
	for (int j = 0; j < lg; j++) {
		int dist = 1 << j, peer = sched_fold_rank(v ^ dist, rem);
		/* The partner owns the same-sized range on the other side of this split. */
		int plo = (v & dist) ? lo - (hi - lo) : hi, phi = plo + (hi - lo);
		uint64_t so = sched_chunk_off(count, p, lo), po = sched_chunk_off(count, p, plo);
		uint32_t step = first + (uint32_t)lg + (uint32_t)j;

		ret = sched_add_send(s, step, peer, so, sched_chunk_off(count, p, hi) - so);
		if (!ret)
			ret = sched_add_recv(s, step, peer, SCHED_RECV_COPY, po,
					     sched_chunk_off(count, p, phi) - po);
		if (ret)
			return ret;
		lo = (lo < plo ? lo : plo);
		hi = lo + 2 * (phi - plo);
	}
	return 0;
}
