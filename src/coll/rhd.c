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
	struct sched_fold f;
	int p, lg, v, rem, lo, hi, ret;

	ret = sched_fold_begin(s, 2, &f);
	if (ret || f.done)
		return ret;
	p = f.p;
	lg = f.lg;
	v = f.v;
	rem = f.rem;
	lo = 0;
	hi = p;
	for (int j = 0; j < lg; j++) {
		int dist = p >> (j + 1), mid = (lo + hi) / 2, peer = sched_fold_rank(v ^ dist, rem);
		int keep_lo = (v & dist) ? mid : lo, keep_hi = (v & dist) ? hi : mid;
		int send_lo = (v & dist) ? lo : mid, send_hi = (v & dist) ? mid : hi;
		uint32_t step = f.first + (uint32_t)j;

		ret = sched_add_send_chunks(s, step, peer, p, send_lo, send_hi);
		if (!ret)
			ret = sched_add_recv_chunks(s, step, peer, SCHED_RECV_REDUCE, p, keep_lo,
						    keep_hi);
		if (ret)
			return ret;
		lo = keep_lo;
		hi = keep_hi;
	}
	sched_set_scale_chunks(s, f.first + (uint32_t)lg - 1, p, v, v + 1);
	for (int j = 0; j < lg; j++) {
		int dist = 1 << j, peer = sched_fold_rank(v ^ dist, rem);
		/* The partner owns the same-sized range on the other side of this split. */
		int plo = (v & dist) ? lo - (hi - lo) : hi, phi = plo + (hi - lo);
		uint32_t step = f.first + (uint32_t)lg + (uint32_t)j;

		ret = sched_add_send_chunks(s, step, peer, p, lo, hi);
		if (!ret)
			ret = sched_add_recv_chunks(s, step, peer, SCHED_RECV_COPY, p, plo, phi);
		if (ret)
			return ret;
		lo = (lo < plo ? lo : plo);
		hi = lo + 2 * (phi - plo);
	}
	return 0;
}
