/* The workload's GPU compute: each modelled operator as our GEMM or streaming kernel (wl_gpu.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run/wl_gpu.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "workload/workload.h"

#define WL_GEMM_DIM_MAX 8192
#define WL_WAIT_MS 60000
#define WL_STREAM_MAX_BYTES (256ull << 20) /* per operand; longer ops repeat the kernel */
#define WL_TIME_REPS 5                   /* launches per timed point */
#define WL_SLEEP_SLACK_NS 150000         /* sleep until this close, then spin on the clock */
#define WL_WARMUP_S 0.2                  /* GEMM time before sizing: sustained clocks */
#define WL_REFINE 2                      /* timed corrections of each op's size */

static int round8(double x, int lo, int hi)
{
	long v = lround(x / 8.0) * 8;

	return (int)(v < lo ? lo : v > hi ? hi : v);
}

void wl_gemm_shape(double flops, int *m, int *n, int *k)
{
	double s = cbrt(flops / 2.0);

	*n = round8(s, 8, WL_GEMM_DIM_MAX);
	*k = *n;
	*m = round8(flops / (2.0 * *n * *k), 8, INT32_MAX - 7);
}

double wl_rate_work(const struct wl_rate *r, double seconds)
{
	int i;

	if (r->n < 1 || !(seconds >= r->t[0]))
		return 0;
	for (i = 1; i < r->n; i++) {
		if (seconds <= r->t[i]) {
			double f, lt0 = log(r->t[i - 1]), lt1 = log(r->t[i]);

			if (!(lt1 > lt0))
				return r->x[i];
			f = (log(seconds) - lt0) / (lt1 - lt0);
			return exp(log(r->x[i - 1]) + f * (log(r->x[i]) - log(r->x[i - 1])));
		}
	}
	return r->x[r->n - 1] * seconds / r->t[r->n - 1];
}

static bool op_is_matrix(const struct op *o)
{
	return o->flops > 0 && (o->cls == OPC_GEMM || o->cls == OPC_CONV || o->cls == OPC_ATTN);
}

/* Our GEMM of about `flops` (its real shape's FLOPs counted), repeated past the
 * operands' size. */
static int play_gemm(struct wl_gpu *g, double flops)
{
	int m, n, k, ret = 0;

	while (flops > 0 && !ret) {
		double f = flops > g->gemm_cap ? g->gemm_cap : flops;

		wl_gemm_shape(f, &m, &n, &k);
		g->flops += 2.0 * m * n * (double)k;
		ret = gpu_gemm(g->c, g->a, g->b, m, n, k, g->gpu->compute);
		flops -= f;
	}
	return ret;
}

/* Our streaming kernel over `elems` f32 elements, repeated past the operands' size. */
static int play_stream(struct wl_gpu *g, double elems)
{
	int ret = 0;

	while (elems >= 1 && !ret) {
		size_t n = elems > (double)g->stream_max ? g->stream_max : (size_t)elems;

		ret = gpu_reduce(g->sd, g->sa, g->sb, n, DT_F32, 1.0, g->gpu->compute);
		elems -= (double)n;
	}
	return ret;
}

/* Seconds of WL_TIME_REPS back-to-back launches of work x (gemm or stream), per launch. */
static int time_point(struct wl_gpu *g, bool gemm, double x, double *seconds)
{
	struct gpu_event *e0 = gpu_event_create(true), *e1 = gpu_event_create(true);
	double ms = 0;
	int ret = e0 && e1 ? 0 : -ENOMEM;

	/* one launch to warm up, then the timed batch */
	if (!ret)
		ret = gemm ? play_gemm(g, x) : play_stream(g, x);
	if (!ret)
		ret = gpu_event_record(e0, g->gpu->compute);
	for (int i = 0; i < WL_TIME_REPS && !ret; i++)
		ret = gemm ? play_gemm(g, x) : play_stream(g, x);
	if (!ret)
		ret = gpu_event_record(e1, g->gpu->compute);
	if (!ret)
		ret = gpu_event_sync(e1, WL_WAIT_MS);
	if (!ret)
		ret = gpu_event_elapsed_ms(e0, e1, &ms);
	*seconds = ms * 1e-3 / WL_TIME_REPS;
	gpu_event_destroy(e1);
	gpu_event_destroy(e0);
	return ret;
}

/* Our kernel's time at sizes x0 * 4^i up to xmax: the table play sizes ops from. */
static int time_table(struct wl_gpu *g, bool gemm, double x0, double xmax, struct wl_rate *r)
{
	double x = x0, t = 0;
	int ret = 0;

	r->n = 0;
	for (; r->n < WL_RATE_POINTS && !ret; x *= 4) {
		if (x > xmax)
			x = xmax;
		ret = time_point(g, gemm, x, &t);
		if (!ret && t > 0 && (!r->n || (x > r->x[r->n - 1] && t > r->t[r->n - 1]))) {
			r->x[r->n] = x;
			r->t[r->n] = t;
			r->n++;
		}
		if (x >= xmax)
			break;
	}
	if (!ret && r->n < 1)
		ret = -EIO;
	return ret;
}

/* Both tables: our GEMM from 64^3 to max_flops, our stream from 4096 elements to the
 * operands' size. */
static int time_tables(struct wl_gpu *g, double max_flops)
{
	int ret = time_table(g, true, 2.0 * 64 * 64 * 64, max_flops, &g->gemm);

	return ret ? ret : time_table(g, false, 4096, (double)g->stream_max, &g->stream);
}

/* Largest matrix and memory op the timeline holds, in seconds. */
static void longest_ops(const struct tensor_list *tl, const struct compute_timeline *ct,
			double *mat_s, double *mem_s)
{
	*mat_s = *mem_s = 0;
	for (uint32_t i = 0; i < tl->nops && i < ct->nops; i++) {
		double *m = op_is_matrix(&tl->ops[i]) ? mat_s : mem_s;

		if (!(tl->ops[i].fixed_s > 0) && ct->op_gpu_s[i] > *m)
			*m = ct->op_gpu_s[i];
	}
}

/* Bring the GPU to its sustained clocks: our largest GEMM for about WL_WARMUP_S. */
static int warm_up(struct wl_gpu *g)
{
	const struct wl_rate *r = &g->gemm;
	double each = r->t[r->n - 1];
	int n = each > 0 ? (int)(WL_WARMUP_S / each) : 0, ret = 0;

	for (int i = 0; i < n && i < 100000 && !ret; i++)
		ret = play_gemm(g, r->x[r->n - 1]);
	return ret ? ret : gpu_stream_sync(g->gpu->compute, WL_WAIT_MS);
}

/*
 * The work of every op: the table's guess, then timed and scaled by target / measured
 * WL_REFINE times; ops of the same kind and duration (a model's repeated layers) share
 * the first one's result.
 */
static int size_ops(struct wl_gpu *g)
{
	const struct tensor_list *tl = g->tl;
	int ret = 0;

	g->op_work = calloc(tl->nops ? tl->nops : 1, sizeof(double));
	if (!g->op_work)
		return -ENOMEM;
	for (uint32_t k = 0; k < tl->nops && k < g->ct->nops && !ret; k++) {
		const struct op *o = &tl->ops[k];
		bool mat = op_is_matrix(o);
		double s = g->ct->op_gpu_s[k], x, t = 0;
		uint32_t j;

		if (o->fixed_s > 0 || !(s > 0))
			continue;
		for (j = 0; j < k; j++) {
			if (op_is_matrix(&tl->ops[j]) == mat && !(tl->ops[j].fixed_s > 0) &&
			    fabs(g->ct->op_gpu_s[j] - s) <= 1e-3 * s)
				break;
		}
		if (j < k) {
			g->op_work[k] = g->op_work[j];
			continue;
		}
		x = wl_rate_work(mat ? &g->gemm : &g->stream, s);
		for (int i = 0; i < WL_REFINE && x > 0 && !ret; i++) {
			ret = time_point(g, mat, x, &t);
			if (!ret && t > 0)
				x *= s / t;
		}
		g->op_work[k] = x;
	}
	return ret;
}

static int gemm_init(struct wl_gpu *g)
{
	double mat_s, mem_s, fmax_flops;
	size_t amax, bmax, cmax;
	int m, n, k, ret;

	longest_ops(g->tl, g->ct, &mat_s, &mem_s);
	/* operands: the largest op at the calibrated rate, with room for a slower small-size
	 * rate (the table may ask for more FLOPs than that per second at no size) */
	fmax_flops = GS_MAX(mat_s * g->tflops * 1e12, 1e9);
	g->gemm_cap = fmax_flops;
	wl_gemm_shape(fmax_flops, &m, &n, &k);
	amax = (size_t)m * k;
	bmax = (size_t)k * n;
	cmax = (size_t)m * n;
	g->stream_max = (size_t)GS_MIN((double)(WL_STREAM_MAX_BYTES / 4),
				       GS_MAX(mem_s * 8e12 / 12.0, 1 << 20));
	g->a = gpu_alloc(amax * 2);
	g->b = gpu_alloc(bmax * 2);
	g->c = gpu_alloc(cmax * 2);
	g->sa = gpu_alloc(g->stream_max * 4);
	g->sb = gpu_alloc(g->stream_max * 4);
	g->sd = gpu_alloc(g->stream_max * 4);
	if (!g->a || !g->b || !g->c || !g->sa || !g->sb || !g->sd) {
		log_err(LOG_WORKLOAD, "operands of the largest op (GEMM %zu, %zu, %zu elements; stream 3 x %zu f32): out of GPU memory",
			amax, bmax, cmax, g->stream_max);
		return -ENOMEM;
	}
	/* the engine pattern: finite small values, no NaN or denormal slow paths */
	ret = gpu_fill(g->a, amax, 0, DT_BF16, 11, 0, 64, g->gpu->compute);
	if (!ret)
		ret = gpu_fill(g->b, bmax, 0, DT_BF16, 11, 1, 64, g->gpu->compute);
	if (!ret)
		ret = gpu_memset_async(g->sa, 0, g->stream_max * 4, g->gpu->compute);
	if (!ret)
		ret = gpu_memset_async(g->sb, 0, g->stream_max * 4, g->gpu->compute);
	/* the tables (the warm-up's GEMM comes from them), again at the sustained clocks,
	 * then each op's size */
	if (!ret)
		ret = time_tables(g, fmax_flops);
	if (!ret)
		ret = warm_up(g);
	if (!ret)
		ret = time_tables(g, fmax_flops);
	if (!ret)
		ret = size_ops(g);
	if (!ret)
		log_info(LOG_WORKLOAD, "compute = gemm: our GEMM %.3g FLOP in %.1f us .. %.3g in %.1f us; stream %.3g f32 in %.1f us .. %.3g in %.1f us",
			 g->gemm.x[0], g->gemm.t[0] * 1e6, g->gemm.x[g->gemm.n - 1],
			 g->gemm.t[g->gemm.n - 1] * 1e6, g->stream.x[0], g->stream.t[0] * 1e6,
			 g->stream.x[g->stream.n - 1], g->stream.t[g->stream.n - 1] * 1e6);
	return ret;
}

int wl_gpu_init(struct wl_gpu *g, struct gpu_ctx *gpu, int mode, const struct tensor_list *tl,
		const struct compute_timeline *ct, double tflops)
{
	int ret = 0;

	memset(g, 0, sizeof(*g));
	if (!gpu)
		return -ENODEV;
	g->gpu = gpu;
	g->mode = mode;
	g->tflops = tflops;
	g->tl = tl;
	g->ct = ct;
	g->done = gpu_event_create(false);
	if (!g->done)
		return -ENOMEM;
	if (mode == COMPUTE_GEMM)
		ret = gemm_init(g);
	if (!ret)
		ret = gpu_stream_sync(gpu->compute, WL_WAIT_MS);
	if (ret)
		wl_gpu_fini(g);
	return ret;
}

/* Hold the calling thread until CLOCK_MONOTONIC reaches t (ns): the modelled host. */
static void wait_until(uint64_t t)
{
	uint64_t now = time_now_ns();

	if (t > now + WL_SLEEP_SLACK_NS) {
		uint64_t s = t - WL_SLEEP_SLACK_NS;
		struct timespec ts = { .tv_sec = s / 1000000000ull, .tv_nsec = s % 1000000000ull };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	while (time_now_ns() < t)
		;
}

/* Op k for its modelled GPU time s. */
static int play_op(struct wl_gpu *g, uint32_t k, double s)
{
	const struct op *o = &g->tl->ops[k];
	double x = g->op_work[k];

	if (!(s > 0))
		return 0;
	g->kernels++;
	if (!(x > 0) || o->fixed_s > 0)
		return gpu_spin((uint64_t)(s * 1e9), g->gpu->props.sm_count, g->gpu->compute);
	return op_is_matrix(o) ? play_gemm(g, x) : play_stream(g, x);
}

int wl_gpu_compute(struct wl_gpu *g, uint32_t layer, int backward, double seconds)
{
	const struct layer *ly;
	int ret = 0;

	if (g->mode == COMPUTE_SPIN) {
		if (seconds <= 0)
			return 0;
		g->kernels++;
		return gpu_spin((uint64_t)(seconds * 1e9), g->gpu->props.sm_count,
				g->gpu->compute);
	}
	if (layer >= g->tl->nlayers)
		return -EINVAL;
	/* a pass starts with its first layer: forward's first, backward's last */
	if (layer == (backward ? g->tl->nlayers - 1 : 0))
		g->pass_start = time_now_ns();
	ly = &g->tl->layers[layer];
	for (uint32_t k = ly->op_first; k < ly->op_first + ly->nops && !ret; k++) {
		const struct op *o = &g->tl->ops[k];
		double issue = g->ct->op_issue_s[k];

		if (o->bwd != backward)
			continue;
		if (issue > 0)
			wait_until(g->pass_start + (uint64_t)(issue * 1e9));
		ret = play_op(g, k, g->ct->op_gpu_s[k]);
	}
	return ret;
}

int wl_gpu_wait(struct wl_gpu *g)
{
	int ret = gpu_event_record(g->done, g->gpu->compute);

	return ret ? ret : gpu_event_sync(g->done, WL_WAIT_MS);
}

void wl_gpu_fini(struct wl_gpu *g)
{
	if (!g->gpu)
		return;
	if (g->done) {
		wl_gpu_wait(g);
		gpu_event_destroy(g->done);
	}
	free(g->op_work);
	gpu_free(g->sd);
	gpu_free(g->sb);
	gpu_free(g->sa);
	gpu_free(g->c);
	gpu_free(g->b);
	gpu_free(g->a);
	memset(g, 0, sizeof(*g));
}
