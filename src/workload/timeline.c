/* Backward timeline from layer FLOPs: when each gradient and each bucket becomes ready. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workload/timeline.h"

int compute_timeline_build(const struct tensor_list *tl, const struct bucket_plan *plan,
			   double gpu_tflops, struct compute_timeline *out)
{
	double t = 0;
	uint32_t i, j;

	memset(out, 0, sizeof(*out));
	if (!(gpu_tflops > 0) || !isfinite(gpu_tflops) || !tl->nlayers)
		return -EINVAL;
	if (plan && plan->ntensors != tl->n)
		return -EINVAL;
	out->gpu_tflops = gpu_tflops;
	out->nlayers = tl->nlayers;
	out->ntensors = tl->n;
	out->nbuckets = plan ? plan->nbuckets : 0;
	out->layer_fwd_s = calloc(tl->nlayers, sizeof(double));
	out->layer_bwd_s = calloc(tl->nlayers, sizeof(double));
	out->layer_bwd_end = calloc(tl->nlayers, sizeof(double));
	out->tensor_ready = calloc(tl->n, sizeof(double));
	out->bucket_ready = calloc(out->nbuckets ? out->nbuckets : 1, sizeof(double));
	if (!out->layer_fwd_s || !out->layer_bwd_s || !out->layer_bwd_end || !out->tensor_ready ||
	    !out->bucket_ready) {
		compute_timeline_free(out);
		return -ENOMEM;
	}
	for (i = 0; i < tl->nlayers; i++) {
		out->layer_fwd_s[i] = compute_time_s(tl->layers[i].fwd_flops, gpu_tflops);
		out->layer_bwd_s[i] = compute_time_s(tl->layers[i].bwd_flops, gpu_tflops);
		out->fwd_s += out->layer_fwd_s[i];
	}
	for (i = tl->nlayers; i-- > 0;) {
		const struct layer *l = &tl->layers[i];

		t += out->layer_bwd_s[i];
		out->layer_bwd_end[i] = t;
		for (j = 0; j < l->ntensors; j++)
			out->tensor_ready[l->tensors[j]] = t;
	}
	out->bwd_s = t;
	for (i = 0; i < out->nbuckets; i++) {
		const struct bucket *b = &plan->b[i];
		double r = 0;

		for (j = 0; j < b->ntensors; j++) {
			uint32_t ti = plan->tensors[b->first + j];

			if (ti >= tl->n) {
				compute_timeline_free(out);
				return -EINVAL;
			}
			if (out->tensor_ready[ti] > r)
				r = out->tensor_ready[ti];
		}
		out->bucket_ready[i] = r;
	}
	return 0;
}

void compute_timeline_free(struct compute_timeline *ct)
{
	free(ct->layer_fwd_s);
	free(ct->layer_bwd_s);
	free(ct->layer_bwd_end);
	free(ct->tensor_ready);
	free(ct->bucket_ready);
	memset(ct, 0, sizeof(*ct));
}
