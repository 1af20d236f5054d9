/* Replaying a bucket timeline under the alpha-beta model, and comparing with measurement. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "coll/schedule.h"
#include "report/jget.h"
#include "report/predict.h"
#include "transport/transport.h"

int predict_iteration(int nranks, const double *bucket_comm_ms, const double *bucket_ready_ms,
		      int nbuckets, double backward_ms, double forward_ms,
		      struct prediction *out)
{
	double end = 0, comm = 0, compute;
	int i;

	if (nranks < 1 || nbuckets < 0 || !(backward_ms >= 0) || !(forward_ms >= 0))
		return -EINVAL;
	for (i = 0; i < nbuckets; i++) {
		double t = nranks > 1 ? bucket_comm_ms[i] : 0;
		double start;

		if (!(bucket_ready_ms[i] >= 0) || !(t >= 0))
			return -EINVAL;
		start = fmax(bucket_ready_ms[i], end);
		end = start + t;
		comm += t;
	}
	compute = forward_ms + backward_ms;
	out->nranks = nranks;
	out->forward_ms = forward_ms;
	out->backward_ms = backward_ms;
	out->comm_ms = comm;
	out->iter_ms = forward_ms + fmax(backward_ms, end);
	out->exposed_comm_ms = out->iter_ms - compute;
	out->comm_wait_share = out->iter_ms > 0 ? out->exposed_comm_ms / out->iter_ms : 0;
	out->scaling_efficiency = out->iter_ms > 0 ? compute / out->iter_ms : 1;
	return 0;
}

int predict_pick(const struct tier_model *m, struct tier_layout lay, int host_cpus,
		 uint64_t bytes)
{
	const struct transport_ops *ops = transport_by_name(m->tier[TIER_INTRA].transport);

	return sched_pick_on(lay.hosts * lay.ranks_per_host, bytes, lay.hosts == 1,
			     ops ? ops->kind : TP_AUTO,
			     host_cpus > 0 && lay.ranks_per_host > host_cpus);
}

int predict_workload(const struct tier_model *m, int algo, struct tier_layout lay,
		     struct tier_pipe pipe, int host_cpus,
		     const json_t *workload, struct prediction *out)
{
	json_t *tl = json_object_get(workload, "bucket_timeline"), *b;
	int nranks = lay.hosts * lay.ranks_per_host, ret = 0;
	double *comm, *ready;
	size_t n = json_array_size(tl), i;

	comm = calloc(n ? n : 1, sizeof(*comm));
	ready = calloc(n ? n : 1, sizeof(*ready));
	if (!comm || !ready) {
		ret = -ENOMEM;
		goto out_free;
	}
	json_array_foreach(tl, i, b) {
		double bytes = jget_num(b, "bytes");
		int a = algo != ALGO_AUTO ? algo :
			predict_pick(m, lay, host_cpus, (uint64_t)fmax(bytes, 0));

		/* the gradients' element size only rounds the count: 4 bytes is close enough */
		comm[i] = nranks > 1 ? tier_time(m, a, lay, bytes, 4, pipe) * 1e3 : 0;
		ready[i] = jget_num(b, "ready_ms");
		if (isnan(comm[i]) && bytes >= 0)
			ret = -EOPNOTSUPP;
	}
	if (!ret)
		ret = predict_iteration(nranks, comm, ready, (int)n,
					jget_num(workload, "bwd_ms.mean"),
					jget_num(workload, "fwd_ms.mean"), out);
out_free:
	free(ready);
	free(comm);
	return ret;
}

int prediction_from_workload(const json_t *workload, struct prediction *out)
{
	out->nranks = (int)jget_num(workload, "ranks");
	out->iter_ms = jget_num(workload, "iter_ms.mean");
	out->forward_ms = jget_num(workload, "fwd_ms.mean");
	out->backward_ms = jget_num(workload, "bwd_ms.mean");
	out->comm_ms = jget_num(workload, "allreduce_ms.mean");
	out->exposed_comm_ms = jget_num(workload, "exposed_comm_ms.mean");
	out->comm_wait_share = jget_num(workload, "comm_wait_share");
	out->scaling_efficiency = jget_num(workload, "scaling_efficiency");
	return isfinite(out->iter_ms) && out->nranks > 0 ? 0 : -ENOENT;
}

void predict_print(FILE *f, const struct prediction *pred, const struct prediction *measured)
{
	fprintf(f, "ranks %d: predicted iter %.2f ms, comm-wait %.1f%%, scaling %.1f%%",
		pred->nranks, pred->iter_ms, 100 * pred->comm_wait_share,
		100 * pred->scaling_efficiency);
	if (measured && measured->iter_ms > 0)
		fprintf(f, "; measured iter %.2f ms, comm-wait %.1f%%: error %+.1f%%",
			measured->iter_ms, 100 * measured->comm_wait_share,
			100 * (pred->iter_ms - measured->iter_ms) / measured->iter_ms);
	fputc('\n', f);
}
