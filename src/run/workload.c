/*
 * The workload of one case: build the model's tensors, DDP's bucket plan and the
 * compute timeline, run the DDP loop over the case's transports, and on rank 0 turn
 * every rank's timings into the workload metrics and a Perfetto trace.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "run/wl_gpu.h"
#include "coll/gpu_memops.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "workload/ddp.h"
#include "workload/metrics.h"
#include "workload/model.h"

#define TRACE_MAX_ITERS 5 /* README, "What a run produces": trace-NNNN.json */
#define WL_GPU_TIMEOUT_MS 60000

/* One rank's timings as sent to rank 0: header, then iter[], then bucket[]. */
struct wl_blob {
	int32_t iterations;
	uint32_t nbuckets;
	uint64_t wrong;
	int64_t first_wrong;
};

struct wl_ctx {
	struct run_rank *rr;
	struct run_comm *rc;
	const struct coll_opts *co;
	struct run_dbuf grads;
	struct run_dbuf scratch;
	struct wl_gpu gpu;
	struct run_test_delay delay; /* the test hook, before each bucket's AllReduce */
	int nallreduce;		     /* bucket AllReduces begun (comm thread only) */
};

/* Runs on the DDP comm thread, which is therefore the executor's progress thread. */
static int wl_allreduce(void *arg, void *buf, uint64_t count, enum dtype dt)
{
	struct wl_ctx *wc = arg;
	int ret;

	run_test_delay_sleep(&wc->rr->act[ACT_THREAD_COMM], &wc->delay, wc->nallreduce++);
	/* the comm thread's CUDA calls must act on the rank's device */
	if (wc->rc->gpu.ctx) {
		ret = gpu_set_device(wc->rc->gpu.ctx->dev);
		if (ret)
			return ret;
	}
	return run_comm_allreduce(wc->rc, &wc->grads,
				  (uint64_t)((char *)buf - (char *)wc->grads.cb.ptr), &wc->scratch,
				  count, dt, REDOP_AVG, wc->co, NULL);
}

/* Rank 0 prints iteration times as they come: a row each up to 100 iterations, else
 * the live line only. */
static void wl_on_iter(void *arg, int i, int total, int warmup, const struct ddp_iter *it)
{
	struct wl_ctx *wc = arg;
	struct progress *p = &wc->rr->progress;
	char what[64];

	if (total <= 100)
		progress_row(p, "  %s %d/%d: %.2f ms (forward %.2f, backward %.2f, after backward "
			     "%.2f), rank 0", i < warmup ? "warmup" : "iteration",
			     i < warmup ? i + 1 : i - warmup + 1, i < warmup ? warmup : total - warmup,
			     it->end / 1e6, it->fwd_end / 1e6, (it->bwd_end - it->fwd_end) / 1e6,
			     (it->end > it->bwd_end ? it->end - it->bwd_end : 0) / 1e6);
	snprintf(what, sizeof(what), "last %.2f ms,", it->end / 1e6);
	progress_tick(p, what, i + 1, total, (double)(i + 1) / total);
}

static int wl_fill(void *arg, uint64_t count, enum dtype dt, uint64_t seed, int rank, int nranks)
{
	struct wl_ctx *wc = arg;
	int ret = gpu_fill(wc->grads.dev, count, 0, dt, seed, rank, nranks, wc->rc->gpu.ctx->comm);

	return ret ? ret : gpu_stream_sync(wc->rc->gpu.ctx->comm, WL_GPU_TIMEOUT_MS);
}

static int wl_check(void *arg, uint64_t count, enum dtype dt, uint64_t seed, int nranks,
		    uint64_t *wrong, uint64_t *first)
{
	struct wl_ctx *wc = arg;

	return gpu_verify(wc->grads.dev, count, 0, dt, REDOP_AVG, seed, nranks, wc->rc->gpu.ctx->comm,
			  WL_GPU_TIMEOUT_MS, wrong, first);
}

static int wl_compute(void *arg, uint32_t layer, int backward, double seconds)
{
	struct wl_ctx *wc = arg;

	return wl_gpu_compute(&wc->gpu, layer, backward, seconds);
}

static int wl_compute_wait(void *arg)
{
	struct wl_ctx *wc = arg;
	struct activity *a = &wc->rr->act[ACT_THREAD_MAIN];
	struct act_mark m;
	int ret;

	/* a pass's GPU work, waited for on the main thread: a driver that never returns is
	 * what rank 0's probe names */
	act_enter(a, ACT_GPU_SYNC, -1, 0, time_now_ns(), &m);
	ret = wl_gpu_wait(&wc->gpu);
	act_leave(a, &m, time_now_ns());
	return ret;
}

/* The buckets' mean times over the iterations, since backward started (the report's
 * convention); tl has plan->nbuckets entries. */
static void bucket_timeline(const struct bucket_plan *plan, const struct ddp_result *r0,
			    int nranks, struct rj_bucket *tl)
{
	uint32_t b;
	int i;

	for (b = 0; b < plan->nbuckets; b++) {
		double ready = 0, start = 0, end = 0, dur;

		for (i = 0; i < r0->iterations; i++) {
			const struct ddp_bucket_times *t = &r0->bucket[(size_t)i * plan->nbuckets + b];
			double bwd0 = r0->iter[i].fwd_end / 1e6;

			ready += t->ready / 1e6 - bwd0;
			start += t->start / 1e6 - bwd0;
			end += t->end / 1e6 - bwd0;
		}
		ready /= r0->iterations;
		start /= r0->iterations;
		end /= r0->iterations;
		dur = end - start;
		tl[b] = (struct rj_bucket){
			.index = (int)b, .bytes = plan->b[b].bytes, .tensors = (int)plan->b[b].ntensors,
			.ready_ms = ready, .start_ms = start, .end_ms = end,
			.busbw_GBps = dur > 0 ? plan->b[b].bytes / (dur / 1e3) / 1e9 *
							coll_busbw_factor(COLL_OP_ALLREDUCE, nranks)
					      : 0.0,
		};
	}
}

/*
 * Rank 0: the metrics of the workload from every rank's timings. gpu_tflops_used: the
 * matrix rate the compute model priced this precision's GEMMs at (the profile's, or
 * [workload] gpu_tflops), not the calibration, which has a field of its own.
 */
static json_t *workload_json(const struct run_rank *rr, const struct tensor_list *tl,
			     const struct bucket_plan *plan, struct ddp_result *res, int n,
			     const struct wl_gpu *g, double gpu_tflops_used)
{
	const struct workload_opts *w = &rr->ecase->cfg.workload;
	int iters = res[0].iterations, i, r;
	double *it = calloc(iters, sizeof(double)), *fw = calloc(iters, sizeof(double));
	double *bw = calloc(iters, sizeof(double)), *ex = calloc(iters, sizeof(double));
	double *ar = calloc((size_t)iters * plan->nbuckets, sizeof(double));
	struct rj_bucket *btl = calloc(plan->nbuckets ? plan->nbuckets : 1, sizeof(*btl));
	struct wl_iter_metrics *per = calloc(iters, sizeof(*per));
	double sum_it = 0, sum_comm = 0, bytes_comm = 0;
	struct wl_metrics sum;
	struct ddp_logging lg;
	struct rj_workload m = {
		.model = w->model, .params = tl->numel, .tensors = (int)tl->n,
		.buckets = (int)plan->nbuckets, .batch = tl->batch, .iterations = iters,
		.compute = compute_mode_name(w->compute), .ranks = n, .overlap = w->overlap,
		.grad_bytes = plan->bytes, .first_wrong = -1,
		.unchecked = rr->ecase->cfg.collective.verify == VERIFY_OFF,
		.scaling_efficiency = NAN, /* filled against a 1-rank case by the report */
		.timeline = btl, .ntimeline = (int)plan->nbuckets,
		.gpu_tflops_calibrated = rr->gpu.tflops_cal > 0 ? rr->gpu.tflops_cal : NAN,
		.gpu_tflops_used = gpu_tflops_used, .gpu_kernels = g->kernels,
		.precision = precision_name(w->precision),
		.grad_dtype = dtype_name(plan->grad_dtype),
		.gpu_profile = w->gpu_profile[0] ? w->gpu_profile : "h200",
	};
	json_t *j = NULL;
	uint32_t b;

	if (!it || !fw || !bw || !ex || !ar || !btl || !per)
		goto out;
	/* One timeline per iteration, the critical rank's (workload/metrics.h): the parts
	 * add up to the iteration and the shares are taken from the same spans. */
	for (i = 0; i < iters; i++) {
		struct wl_iter_metrics *pm = &per[i];

		wl_metrics_iter(res, n, i, pm);
		it[i] = pm->iter_ns;
		fw[i] = pm->fwd_ns;
		bw[i] = pm->bwd_ns;
		ex[i] = pm->exposed_ns;
		sum_it += it[i];
		for (b = 0; b < plan->nbuckets; b++) {
			const struct ddp_bucket_times *t =
				&res[pm->critical_rank].bucket[(size_t)i * plan->nbuckets + b];
			double d = (double)(t->end - t->start);

			ar[(size_t)i * plan->nbuckets + b] = d;
			sum_comm += d;
			bytes_comm += plan->b[b].bytes;
		}
	}
	wl_metrics_sum(per, iters, n, &sum);
	for (r = 0; r < n; r++) {
		m.wrong += res[r].wrong;
		if (res[r].first_wrong >= 0 && (m.first_wrong < 0 || res[r].first_wrong < m.first_wrong))
			m.first_wrong = res[r].first_wrong;
	}
	m.comm_wait_share = sum.comm_wait_share;
	m.overlap_efficiency = sum.overlap_efficiency;
	m.critical_rank = sum.critical_rank;
	m.critical_share = sum.critical_share;
	ddp_logging_fields(&res[0], &lg);
	m.avg_forward_compute_time = lg.avg_forward_compute_time;
	m.avg_backward_compute_time = lg.avg_backward_compute_time;
	m.avg_backward_comm_time = lg.avg_backward_comm_time;
	m.avg_backward_compute_comm_overlap_time = lg.avg_backward_compute_comm_overlap_time;
	/* a trace recorded without its batch has none: unknown ("-", null), never 0 */
	m.samples_per_s = sum_it > 0 && tl->batch > 0 ?
				  (double)tl->batch * n * iters / (sum_it / 1e9) : NAN;
	m.samples_per_s_rank = sum_it > 0 && tl->batch > 0 ?
				       (double)tl->batch * iters / (sum_it / 1e9) : NAN;
	m.busbw_GBps = sum_comm > 0 ? bytes_comm / (sum_comm / 1e9) / 1e9 *
					      coll_busbw_factor(COLL_OP_ALLREDUCE, n)
				    : 0;
	bucket_timeline(plan, &res[0], n, btl);
	run_stats(it, iters, 1e-6, &m.iter_ms);
	run_stats(fw, iters, 1e-6, &m.fwd_ms);
	run_stats(bw, iters, 1e-6, &m.bwd_ms);
	run_stats(ex, iters, 1e-6, &m.exposed_comm_ms);
	run_stats(ar, (size_t)iters * plan->nbuckets, 1e-6, &m.allreduce_ms);
	j = rj_workload_json(&m);
out:
	free(per);
	free(it);
	free(fw);
	free(bw);
	free(ex);
	free(ar);
	free(btl);
	return j;
}

/*
 * Chrome trace-event JSON: per rank a compute track (layers) and a comm track (buckets),
 * written atomically. Rank 0. 0 or -errno; a failure is logged naming the file and
 * fails the case (its figures kept).
 */
static int write_trace(const struct run_rank *rr, const struct compute_timeline *ct,
		       const struct bucket_plan *plan, const struct tensor_list *tl,
		       struct ddp_result *res, int n)
{
	json_t *ev = json_array(), *root;
	uint64_t t0 = UINT64_MAX;
	char path[PATH_MAX + 32], why[PATH_MAX + 160], err[PATH_MAX + 160], *text;
	int r, i, ret;
	uint32_t l, b;

	for (r = 0; r < n; r++)
		if (res[r].iterations)
			t0 = GS_MIN(t0, res[r].iter[0].start_abs);
	for (r = 0; r < n; r++) {
		char pname[32];

		snprintf(pname, sizeof(pname), "rank %d", r);
		json_array_append_new(ev, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name",
						    "process_name", "ph", "M", "pid", r, "tid", 0,
						    "args", "name", pname));
		json_array_append_new(ev, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name",
						    "thread_name", "ph", "M", "pid", r, "tid", 1,
						    "args", "name", "compute"));
		json_array_append_new(ev, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name",
						    "thread_name", "ph", "M", "pid", r, "tid", 2,
						    "args", "name", "allreduce"));
		for (i = 0; i < GS_MIN(res[r].iterations, TRACE_MAX_ITERS); i++) {
			const struct ddp_iter *it = &res[r].iter[i];
			double base = (it->start_abs - t0) / 1e3, f = 0;

			if (rr->ecase->cfg.workload.compute != COMPUTE_NONE) {
				for (l = 0; l < ct->nlayers; l++) {
					double bs = base + it->fwd_end / 1e3 +
						    (ct->layer_bwd_end[l] - ct->layer_bwd_s[l]) * 1e6;

					json_array_append_new(ev, json_pack("{s:s, s:s, s:s, s:f, s:f, s:i, s:i}",
						"name", tl->layers[l].name, "cat", "forward", "ph", "X",
						"ts", base + f * 1e6, "dur", ct->layer_fwd_s[l] * 1e6,
						"pid", r, "tid", 1));
					json_array_append_new(ev, json_pack("{s:s, s:s, s:s, s:f, s:f, s:i, s:i}",
						"name", tl->layers[l].name, "cat", "backward", "ph", "X",
						"ts", bs, "dur", ct->layer_bwd_s[l] * 1e6, "pid", r, "tid", 1));
					f += ct->layer_fwd_s[l];
				}
			}
			for (b = 0; b < plan->nbuckets; b++) {
				const struct ddp_bucket_times *t =
					&res[r].bucket[(size_t)i * plan->nbuckets + b];
				char name[64];

				snprintf(name, sizeof(name), "bucket %u (%.2f MiB)", b,
					 plan->b[b].bytes / 1048576.0);
				json_array_append_new(ev, json_pack("{s:s, s:s, s:s, s:f, s:f, s:i, s:i, s:{s:f, s:i}}",
					"name", name, "cat", "allreduce", "ph", "X", "ts",
					base + t->start / 1e3, "dur", (t->end - t->start) / 1e3, "pid", r,
					"tid", 2, "args", "ready_us", base + t->ready / 1e3, "iteration", i));
			}
		}
	}
	root = json_pack("{s:o, s:s, s:{s:s, s:s}}", "traceEvents", ev, "displayTimeUnit", "ms",
			 "otherData", "case", rr->ecase->name, "note",
			 "layer spans are the compute model's; bucket spans are measured");
	snprintf(path, sizeof(path), "%s/trace-%04d.json", rr->run_dir, rr->case_index);
	text = root ? json_dumps(root, JSON_COMPACT) : NULL;
	if (text) {
		ret = run_dir_write(rr->run_dir, path, NULL, text,
				    rr->exp->base.report.write_timeout_ns, err, sizeof(err));
	} else {
		ret = -ENOMEM;
		snprintf(err, sizeof(err), "%s", strerror(ENOMEM));
	}
	if (ret) {
		log_err(LOG_WORKLOAD, "write %s: %s", path, err);
		/* the case's figures stand; the run fails, saying which file is missing */
		snprintf(why, sizeof(why), "write %s: %s (the figures are kept)",
			 strrchr(path, '/') + 1, err);
		rj_case_fail(rr->case_doc, why);
	}
	free(text);
	json_decref(root);
	return ret;
}

static int gather_results(struct run_rank *rr, struct ddp_result *mine, struct ddp_result **all)
{
	size_t ni = mine->iterations, nb = (size_t)mine->iterations * mine->nbuckets;
	size_t len = sizeof(struct wl_blob) + ni * sizeof(struct ddp_iter) +
		     nb * sizeof(struct ddp_bucket_times);
	char *blob = malloc(len), **blobs = NULL;
	size_t *lens = NULL;
	struct wl_blob h = { mine->iterations, mine->nbuckets, mine->wrong, mine->first_wrong };
	int ret, n = rr->li.nranks, r;

	if (!blob)
		return -ENOMEM;
	memcpy(blob, &h, sizeof(h));
	memcpy(blob + sizeof(h), mine->iter, ni * sizeof(struct ddp_iter));
	memcpy(blob + sizeof(h) + ni * sizeof(struct ddp_iter), mine->bucket,
	       nb * sizeof(struct ddp_bucket_times));
	ret = bootstrap_gatherv(rr->bs, blob, len, (void ***)&blobs, &lens);
	free(blob);
	if (ret || rr->li.rank != 0)
		return ret;
	*all = calloc(n, sizeof(**all));
	for (r = 0; r < n && *all; r++) {
		struct wl_blob *bh = (struct wl_blob *)blobs[r];

		if (lens[r] != len || bh->iterations != mine->iterations ||
		    bh->nbuckets != mine->nbuckets) {
			log_err(LOG_WORKLOAD, "results of rank %d: %zu bytes, expected %zu", r,
				lens[r], len);
			ret = -EPROTO;
			break;
		}
		(*all)[r].iterations = bh->iterations;
		(*all)[r].nbuckets = bh->nbuckets;
		(*all)[r].wrong = bh->wrong;
		(*all)[r].first_wrong = bh->first_wrong;
		(*all)[r].iter = (struct ddp_iter *)(blobs[r] + sizeof(*bh));
		(*all)[r].bucket = (struct ddp_bucket_times *)(blobs[r] + sizeof(*bh) +
							       ni * sizeof(struct ddp_iter));
	}
	/* the blobs stay alive: (*all)[r] points into them; freed with the array below */
	free(lens);
	if (!*all)
		ret = -ENOMEM;
	if (ret) {
		for (r = 0; r < n; r++)
			free(blobs[r]);
		free(*all);
		*all = NULL;
	}
	free(blobs);
	return ret;
}

static int wl_realign(void *arg)
{
	struct wl_ctx *wc = arg;

	return bootstrap_barrier(wc->rr->bs);
}

int run_workload(struct run_rank *rr, struct run_comm *rc, json_t **out)
{
	const struct cfg *cfg = &rr->ecase->cfg;
	const struct workload_opts *w = &cfg->workload;
	/* on the heap: the comm thread's AllReduce holds it, and may never return */
	struct wl_ctx *wc = calloc(1, sizeof(*wc));
	struct ddp_ops ops = { .arg = wc, .allreduce = wl_allreduce,
			       .abort_flag = bootstrap_abort_flag(rr->bs),
			       .timeout_ns = cfg->launch.timeout_ns, .on_iter = wl_on_iter,
			       .realign = wl_realign, .comm_act = &rr->act[ACT_THREAD_COMM] };
	struct tensor_list tl;
	struct bucket_plan plan = { 0 };
	struct compute_timeline ct = { 0 };
	struct ddp_result res = { 0 }, *all = NULL;
	struct gpu_profile prof;
	struct cost_params cp;
	int ret, r;

	*out = NULL;
	tensor_list_init(&tl);
	if (!wc)
		return -ENOMEM;
	*wc = (struct wl_ctx){ .rr = rr, .rc = rc, .co = &cfg->collective,
			       .delay = run_test_delay_get(rr->li.rank) };
	ret = model_build(w, &tl);
	if (ret) {
		log_err(LOG_WORKLOAD, "build model %s: %s", w->model, strerror(-ret));
		goto out_tl;
	}
	ret = bucket_plan_build(&tl, w->bucket_cap,
				bucket_first_cap(w->bucket_cap, w->first_bucket_cap, w->bucket_cap_set),
				model_grad_dtype(w), &plan);
	if (ret)
		goto out_tl;
	ret = compute_params_resolve(w, &prof, &cp);
	if (!ret)
		ret = compute_timeline_build(&tl, &plan, &cp, &ct);
	if (ret)
		goto out_plan;
	ret = run_dbuf_alloc(rc, &wc->grads, plan.bytes, GPU_MIRROR_DATA);
	if (ret) {
		log_err(LOG_WORKLOAD, "gradients of %s: %llu bytes: %s", w->model,
			(unsigned long long)plan.bytes, strerror(-ret));
		goto out_ct;
	}
	if (wc->grads.host)
		run_node_verify(rr, wc->grads.host, plan.bytes);
	ret = run_dbuf_alloc(rc, &wc->scratch,
			     coll_scratch_bytes(run_comm_chunk(rc, plan.bytes),
					cfg->collective.channels),
			     GPU_MIRROR_SCRATCH);
	if (ret)
		goto out_grads;
	if (rc->gpu.ctx) {
		ops.fill = wl_fill;
		ops.check = wl_check;
	}
	if (w->compute == COMPUTE_GEMM || w->compute == COMPUTE_SPIN) {
		ret = wl_gpu_init(&wc->gpu, rc->gpu.ctx, w->compute, &tl, &ct, rr->gpu.tflops_cal);
		if (ret)
			goto out_scratch;
		ops.compute = wl_compute;
		ops.compute_wait = wl_compute_wait;
	}
	ret = bootstrap_barrier(rr->bs);
	if (!ret)
		ret = ddp_run(w, &plan, &ct, wc->grads.cb.ptr, &ops, rr->li.rank, rr->li.nranks,
			      cfg->experiment.seed, cfg->collective.verify != VERIFY_OFF, &res);
	if (!ret)
		ret = gather_results(rr, &res, &all);
	if (!ret && rr->li.rank == 0) {
		*out = workload_json(rr, &tl, &plan, all, rr->li.nranks, &wc->gpu,
				     prof.matrix_tflops[precision_matrix(w->precision)]);
		write_trace(rr, &ct, &plan, &tl, all, rr->li.nranks); /* says why itself */
		for (r = 0; r < rr->li.nranks; r++)
			free((char *)all[r].iter - sizeof(struct wl_blob));
		free(all);
	}
	ddp_result_free(&res);
	wl_gpu_fini(&wc->gpu);
	if (res.comm_stuck) {
		/* its AllReduce holds wc, the gradients and the scratch, registered with the
		 * transports: left to it, leaked on purpose, as the case's comm is (rank.c) */
		rr->thread_stuck = true;
		wc = NULL;
		goto out_ct;
	}
out_scratch:
	run_dbuf_free(rc, &wc->scratch, GPU_MIRROR_SCRATCH);
out_grads:
	run_dbuf_free(rc, &wc->grads, GPU_MIRROR_DATA);
out_ct:
	compute_timeline_free(&ct);
out_plan:
	bucket_plan_free(&plan);
out_tl:
	tensor_list_free(&tl);
	free(wc);
	return ret;
}
