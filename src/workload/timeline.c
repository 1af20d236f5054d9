/* The compute timeline: operators through the eager pipeline, gradient and bucket ready times. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "workload/timeline.h"

int compute_params_resolve(const struct workload_opts *w, struct gpu_profile *g,
			   struct cost_params *cp)
{
	double tf = w->gpu_tflops;
	char err[256];
	int ret = gpu_profile_load(w->gpu_profile[0] ? w->gpu_profile : "h200", g, err,
				   sizeof(err));

	if (ret) {
		log_err(LOG_WORKLOAD, "%s", err);
		return ret;
	}
	if (tf > 0) {
		/* a given GEMM rate is the 16-bit one; the other units keep their ratio */
		double scale = tf / g->matrix_tflops[precision_matrix(w->precision)];

		for (int i = 0; i < MX_COUNT; i++)
			g->matrix_tflops[i] *= scale;
	}
	cp->gpu = g;
	cp->precision = w->precision;
	cp->launch_gap_us = w->launch_gap_ns == UINT64_MAX ? -1 : w->launch_gap_ns / 1e3;
	return 0;
}

/* Play layer l's ops of one phase (pass_start: the phase's start); returns the GPU
 * clock after them. */
static double play(const struct cost_params *cp, const struct tensor_list *tl, uint32_t l,
		   int bwd, double pass_start, double *host, double *gpu,
		   struct compute_timeline *out)
{
	const struct layer *ly = &tl->layers[l];

	for (uint32_t k = ly->op_first; k < ly->op_first + ly->nops; k++) {
		if (tl->ops[k].bwd != bwd)
			continue;
		cost_issue(cp, &tl->ops[k], host, gpu, &out->op_gpu_s[k]);
		out->op_issue_s[k] = *host - pass_start;
	}
	return *gpu;
}

int compute_timeline_build(const struct tensor_list *tl, const struct bucket_plan *plan,
			   const struct cost_params *cp, struct compute_timeline *out)
{
	double host = 0, gpu = 0, prev = 0, t0;
	uint32_t i, j;

	memset(out, 0, sizeof(*out));
	if (!cp || !cp->gpu || !tl->nlayers)
		return -EINVAL;
	if (plan && plan->ntensors != tl->n)
		return -EINVAL;
	out->gpu_tflops = cp->gpu->matrix_tflops[precision_matrix(cp->precision)];
	out->nlayers = tl->nlayers;
	out->ntensors = tl->n;
	out->nbuckets = plan ? plan->nbuckets : 0;
	out->layer_fwd_s = calloc(tl->nlayers, sizeof(double));
	out->layer_bwd_s = calloc(tl->nlayers, sizeof(double));
	out->layer_bwd_end = calloc(tl->nlayers, sizeof(double));
	out->tensor_ready = calloc(tl->n, sizeof(double));
	out->bucket_ready = calloc(out->nbuckets ? out->nbuckets : 1, sizeof(double));
	out->nops = tl->nops;
	out->op_issue_s = calloc(tl->nops ? tl->nops : 1, sizeof(double));
	out->op_gpu_s = calloc(tl->nops ? tl->nops : 1, sizeof(double));
	if (!out->layer_fwd_s || !out->layer_bwd_s || !out->layer_bwd_end || !out->tensor_ready ||
	    !out->bucket_ready || !out->op_issue_s || !out->op_gpu_s) {
		compute_timeline_free(out);
		return -ENOMEM;
	}
	for (i = 0; i < tl->nlayers; i++) {
		double end = play(cp, tl, i, 0, 0, &host, &gpu, out);

		out->layer_fwd_s[i] = end - prev;
		prev = end;
	}
	/* the step's forward ends when both the GPU and the host are through it */
	out->fwd_s = fmax(gpu, host);
	out->host_fwd_s = host;
	out->gpu_fwd_s = gpu;
	gpu = t0 = out->fwd_s;
	if (out->fwd_s > prev && tl->nlayers)
		out->layer_fwd_s[tl->nlayers - 1] += out->fwd_s - prev;
	prev = t0;
	/* the host calls backward when it is through forward; the GPU waits for the
	 * engine's start-up only where the host is not already ahead of it */
	out->bwd_start_s = cost_bwd_start_s(cp, tl->ops, tl->nops);
	host += out->bwd_start_s;
	for (i = tl->nlayers; i-- > 0;) {
		const struct layer *l = &tl->layers[i];
		double end = play(cp, tl, i, 1, t0, &host, &gpu, out);

		out->layer_bwd_s[i] = end - prev;
		prev = end;
		out->layer_bwd_end[i] = end - t0;
		for (j = 0; j < l->ntensors; j++)
			out->tensor_ready[l->tensors[j]] = end - t0;
	}
	out->bwd_s = fmax(gpu, host) - t0;
	out->host_bwd_s = host - out->host_fwd_s;
	/*
	 * The player waits to each time as whole nanoseconds in 64 bits: gpu_tflops =
	 * 1e-300 modelled a step of 1e302 ms, which played as 8 ms without a word.
	 */
	if (!(out->fwd_s + out->bwd_s <= COMPUTE_STEP_MAX_S)) {
		log_err(LOG_WORKLOAD, "modelled step of %.3g s (forward %.3g s, backward %.3g s) is longer than %.0e s: the model's FLOPs (a custom model's gflops) are too many for the GPU's matrix rate (gpu_tflops, else the profile's)",
			out->fwd_s + out->bwd_s, out->fwd_s, out->bwd_s, COMPUTE_STEP_MAX_S);
		compute_timeline_free(out);
		return -ERANGE;
	}
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
	free(ct->op_issue_s);
	free(ct->op_gpu_s);
	memset(ct, 0, sizeof(*ct));
}

/* the part of backward's start-up the GPU waits for, had the host's forward taken host s */
static double startup_shown_s(const struct compute_timeline *ct, double host)
{
	return fmin(fmax(host + ct->bwd_start_s - ct->gpu_fwd_s, 0), ct->bwd_start_s);
}

double timeline_startup_swing_s(const struct compute_timeline *ct, double frac)
{
	return startup_shown_s(ct, ct->host_fwd_s * (1 + frac)) -
	       startup_shown_s(ct, ct->host_fwd_s * (1 - frac));
}
