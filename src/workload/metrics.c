/* The workload figures from one per-rank per-iteration timeline (definitions in metrics.h). */
#include <stdlib.h>

#include "util/common.h"
#include "workload/metrics.h"

void wl_metrics_iter(const struct ddp_result *res, int nranks, int i, struct wl_iter_metrics *m)
{
	const struct ddp_iter *x;
	int r, c = 0;
	uint32_t b;

	for (r = 1; r < nranks; r++)
		if (res[r].iter[i].bwd_end > res[c].iter[i].bwd_end)
			c = r;
	x = &res[c].iter[i];
	m->critical_rank = c;
	m->fwd_ns = (double)x->fwd_end;
	m->bwd_ns = (double)(x->bwd_end - x->fwd_end);
	m->exposed_ns = x->end > x->bwd_end ? (double)(x->end - x->bwd_end) : 0;
	m->iter_ns = m->fwd_ns + m->bwd_ns + m->exposed_ns;
	m->comm_ns = 0;
	m->hidden_ns = 0;
	for (b = 0; b < res[c].nbuckets; b++) {
		const struct ddp_bucket_times *t = &res[c].bucket[(size_t)i * res[c].nbuckets + b];
		uint64_t s = GS_MAX(t->start, x->fwd_end), e = GS_MIN(t->end, x->bwd_end);

		if (t->end > t->start)
			m->comm_ns += (double)(t->end - t->start);
		if (e > s)
			m->hidden_ns += (double)(e - s);
	}
}

void wl_metrics_sum(const struct wl_iter_metrics *per, int niters, int nranks,
		    struct wl_metrics *m)
{
	double it = 0, ex = 0, comm = 0, hid = 0;
	int *cnt = calloc((size_t)(nranks > 0 ? nranks : 1), sizeof(*cnt));
	int i, r;

	m->critical_rank = 0;
	m->critical_share = 0;
	for (i = 0; i < niters; i++) {
		it += per[i].iter_ns;
		ex += per[i].exposed_ns;
		comm += per[i].comm_ns;
		hid += per[i].hidden_ns;
		if (cnt && per[i].critical_rank >= 0 && per[i].critical_rank < nranks)
			cnt[per[i].critical_rank]++;
	}
	for (r = 0; cnt && r < nranks; r++)
		if (cnt[r] > cnt[m->critical_rank])
			m->critical_rank = r;
	if (cnt && niters)
		m->critical_share = (double)cnt[m->critical_rank] / niters;
	m->comm_wait_share = it > 0 ? ex / it : 0;
	/* one rank moves nothing (its busbw is 0 by definition): its AllReduces are
	 * microsecond no-ops whose hidden share is noise, not overlap */
	m->overlap_efficiency = nranks > 1 && comm > 0 ? hid / comm : 1;
	free(cnt);
}
