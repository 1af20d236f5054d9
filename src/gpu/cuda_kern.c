/*
 * Public entry points of our kernels: argument checks, error conversion, calibration. The
 * calibration notes each CUDA call it makes (callbound_note: nothing outside a bounded
 * group), on the object its group named, so that `gradsync gpu --calibrate` given up on
 * names the call a wedged GPU did not return from.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "gpu/gpu.h"
#include "gpu/cuda_priv.h"
#include "gpu/kernels.h"
#include "util/callbound.h"
#include "util/log.h"

static bool elem_aligned(const void *p, enum dtype t)
{
	return ((uintptr_t)p % dtype_size(t)) == 0;
}

static int kcheck(int cuda_rc, const char *call, const char *what, size_t count, enum dtype t)
{
	if (cuda_rc == 0)
		return 0;
	return gpu_err((cudaError_t)cuda_rc, call, "%s count=%zu dtype=%s", what, count,
		       (unsigned int)t < DT_COUNT ? dtype_name(t) : "?");
}

int gpu_reduce(void *dst, const void *a, const void *b, size_t count, enum dtype t, double scale,
	       struct gpu_stream *s)
{
	int rc = gpu_probe();

	if (rc)
		return rc;
	if ((unsigned int)t >= DT_COUNT || !elem_aligned(dst, t) || !elem_aligned(a, t) ||
	    !elem_aligned(b, t)) {
		log_err(LOG_GPU, "gpu_reduce dst=%p a=%p b=%p: bad dtype or misaligned element",
			dst, a, b);
		return -EINVAL;
	}
	return kcheck(gsk_reduce(dst, a, b, count, t, scale, s), "gsk_reduce", "launch", count, t);
}

int gpu_scale(void *buf, size_t count, enum dtype t, double scale, struct gpu_stream *s)
{
	int rc = gpu_probe();

	if (rc)
		return rc;
	if ((unsigned int)t >= DT_COUNT || !elem_aligned(buf, t))
		return -EINVAL;
	return kcheck(gsk_scale(buf, count, t, scale, s), "gsk_scale", "launch", count, t);
}

int gpu_div(void *buf, size_t count, enum dtype t, uint32_t divisor, struct gpu_stream *s)
{
	int rc = gpu_probe();

	if (rc)
		return rc;
	if ((unsigned int)t >= DT_COUNT || !elem_aligned(buf, t) || divisor < 1)
		return -EINVAL;
	return kcheck(gsk_div(buf, count, t, divisor, s), "gsk_div", "launch", count, t);
}

int gpu_fill(void *buf, size_t count, uint64_t base, enum dtype t, uint64_t seed, int rank,
	     int nranks, struct gpu_stream *s)
{
	int rc = gpu_probe();

	if (rc)
		return rc;
	if ((unsigned int)t >= DT_COUNT || !elem_aligned(buf, t) || nranks < 1 || rank < 0 ||
	    rank >= nranks)
		return -EINVAL;
	return kcheck(gsk_fill(buf, count, base, t, seed, rank, nranks, s), "gsk_fill", "launch",
		      count, t);
}

int gpu_verify(const void *buf, size_t count, uint64_t base, enum dtype t, enum redop op,
	       uint64_t seed, int nranks, struct gpu_stream *s, int timeout_ms,
	       uint64_t *mismatches, uint64_t *first_bad)
{
	static const unsigned long long init[2] = { 0, ~0ull };
	unsigned long long res[2];
	unsigned long long *dres;
	int rc = gpu_probe();

	if (rc)
		return rc;
	if ((unsigned int)t >= DT_COUNT || !elem_aligned(buf, t) || nranks < 1)
		return -EINVAL;
	dres = gpu_alloc(sizeof(res));
	if (!dres)
		return -ENOMEM;
	rc = gpu_memcpy_async(dres, init, sizeof(init), GPU_COPY_H2D, s);
	if (rc)
		goto out_free;
	rc = kcheck(gsk_verify(buf, count, base, t, op == REDOP_AVG, seed, nranks, dres, s),
		    "gsk_verify", "launch", count, t);
	if (rc)
		goto out_free;
	rc = gpu_memcpy_async(res, dres, sizeof(res), GPU_COPY_D2H, s);
	if (rc)
		goto out_free;
	rc = gpu_stream_sync(s, timeout_ms);
	if (rc)
		goto out_free;
	*mismatches = res[0];
	*first_bad = res[0] ? res[1] : count;
out_free:
	gpu_free(dres);
	return rc;
}

int gpu_gemm_with(enum gpu_gemm_kind kind, void *c, const void *a, const void *b, int m, int n,
		  int k, struct gpu_stream *s)
{
	int rc = gpu_probe();

	if (rc)
		return rc;
	if ((unsigned int)kind >= GPU_GEMM_KIND_COUNT || m < 1 || n < 1 || k < 1 || n % 8 ||
	    k % 8 || ((uintptr_t)a | (uintptr_t)b | (uintptr_t)c) % 16) {
		log_err(LOG_GPU, "gpu_gemm kind=%d m=%d n=%d k=%d: n and k must be multiples of 8, "
			"pointers 16-byte aligned", kind, m, n, k);
		return -EINVAL;
	}
	if (kind == GPU_GEMM_WMMA)
		rc = gsk_gemm_bf16_wmma(c, a, b, m, n, k, s);
	else
		rc = gsk_gemm_bf16_mma(c, a, b, m, n, k, kind == GPU_GEMM_MMA ? 32 : 64, s);
	if (rc)
		return gpu_err((cudaError_t)rc, "gsk_gemm_bf16", "kind=%d m=%d n=%d k=%d", kind,
			       m, n, k);
	return 0;
}

int gpu_gemm(void *c, const void *a, const void *b, int m, int n, int k, struct gpu_stream *s)
{
	return gpu_gemm_with(GPU_GEMM_DEFAULT, c, a, b, m, n, k, s);
}

int gpu_spin(uint64_t ns, int sm_count, struct gpu_stream *s)
{
	int rc = gpu_probe();

	if (rc)
		return rc;
	rc = gsk_spin(ns, sm_count, s);
	if (rc)
		return gpu_err((cudaError_t)rc, "gsk_spin", "ns=%llu blocks=%d",
			       (unsigned long long)ns, sm_count);
	return 0;
}

/* A launch to time: one GEMM of size^3, or n launches of a memory-bound kernel. */
enum timed_kind { TK_GEMM, TK_REDUCE, TK_BN, TK_LAYERNORM, TK_SOFTMAX };

struct timed {
	enum timed_kind kind;
	void *c;
	const void *a, *b;
	void *scratch; /* TK_BN: the channel statistics */
	int size;      /* TK_GEMM: the side; TK_BN: channels; rows: the row length */
	size_t count;  /* reduce elements; TK_BN: images x spatial; rows: the rows */
	size_t hw;     /* TK_BN: spatial positions per channel image */
	int n;         /* launches per timed batch (memory-bound kinds) */
};

static int timed_launch(const struct timed *t, struct gpu_stream *s)
{
	int rc = 0;

	if (t->kind == TK_GEMM)
		return gpu_gemm(t->c, t->a, t->b, t->size, t->size, t->size, s);
	for (int i = 0; i < t->n && !rc; i++) {
		switch (t->kind) {
		case TK_BN:
			rc = kcheck(gsk_batchnorm(t->a, t->c, t->scratch, (int)(t->count / t->hw),
						  t->size, t->hw, s),
				    "gsk_batchnorm", "launch", t->count * t->size, DT_F32);
			break;
		case TK_LAYERNORM:
		case TK_SOFTMAX:
			rc = kcheck(gsk_rownorm(t->a, t->c, t->count, t->size,
						t->kind == TK_SOFTMAX, s),
				    "gsk_rownorm", "launch", t->count * t->size, DT_F32);
			break;
		default:
			rc = gpu_reduce(t->c, t->a, t->b, t->count, DT_F32, 1.0, s);
		}
	}
	return rc;
}

/* Shortest of reps timed batches of t after one warm-up, in ms. */
static int time_best(const struct timed *t, int reps, struct gpu_stream *s, int timeout_ms,
		     double *best_ms)
{
	struct gpu_event *e0, *e1;
	double ms, best = 0;
	int rc = -ENOMEM;

	callbound_note("cudaEventCreate", NULL);
	e0 = gpu_event_create(true);
	e1 = gpu_event_create(true);

	if (!e0 || !e1)
		goto out_events;
	callbound_note("cudaLaunchKernel", NULL);
	rc = timed_launch(t, s);
	for (int i = 0; i < reps && !rc; i++) {
		callbound_note("cudaEventRecord", NULL);
		rc = gpu_event_record(e0, s);
		callbound_note("cudaLaunchKernel", NULL);
		if (!rc)
			rc = timed_launch(t, s);
		callbound_note("cudaEventRecord", NULL);
		if (!rc)
			rc = gpu_event_record(e1, s);
		/* gpu_event_sync polls cudaEventQuery: a wait for the event all the same */
		callbound_note("cudaEventSynchronize", NULL);
		if (!rc)
			rc = gpu_event_sync(e1, timeout_ms);
		callbound_note("cudaEventElapsedTime", NULL);
		if (!rc)
			rc = gpu_event_elapsed_ms(e0, e1, &ms);
		if (!rc && ms > 0 && (!best || ms < best))
			best = ms;
	}
	*best_ms = best;
out_events:
	callbound_note("cudaEventDestroy", NULL);
	gpu_event_destroy(e1);
	gpu_event_destroy(e0);
	return rc;
}

/* Best TFLOP/s of reps products of size^3 after one warm-up. */
static int time_gemm(void *c, const void *a, const void *b, int size, int reps,
		     struct gpu_stream *s, int timeout_ms, double *tflops)
{
	struct timed t = { .kind = TK_GEMM, .c = c, .a = a, .b = b, .size = size };
	double ms = 0;
	int rc = time_best(&t, reps, s, timeout_ms, &ms);

	*tflops = !rc && ms > 0 ? 2.0 * size * size * (double)size / (ms * 1e-3) / 1e12 : 0;
	return rc;
}

int gpu_calibrate(struct gpu_stream *s, int timeout_ms, double *tflops)
{
	static const int sizes[] = { 4096, 8192 };
	const int max = 8192;
	size_t elems = (size_t)max * max;
	void *a, *b, *c;
	double best = 0, t = 0;
	int rc = -ENOMEM;

	callbound_note("cudaMalloc", NULL);
	a = gpu_alloc(elems * 2);
	b = gpu_alloc(elems * 2);
	c = gpu_alloc(elems * 2);
	if (!a || !b || !c)
		goto out_free;
	/* the engine pattern: small integers times 2^e, no NaN, inf or denormal slow paths */
	callbound_note("cudaLaunchKernel", NULL);
	rc = gpu_fill(a, elems, 0, DT_BF16, 1, 0, 64, s);
	if (!rc)
		rc = gpu_fill(b, elems, 0, DT_BF16, 1, 1, 64, s);
	for (size_t i = 0; i < ARRAY_SIZE(sizes) && !rc; i++) {
		rc = time_gemm(c, a, b, sizes[i], 3, s, timeout_ms, &t);
		best = t > best ? t : best;
	}
	if (!rc)
		*tflops = best;
out_free:
	callbound_note("cudaFree", NULL);
	gpu_free(c);
	gpu_free(b);
	gpu_free(a);
	return rc;
}

/* GB/s of t moving `bytes` per launch: the best batch of t->n launches. */
static int time_rate(const struct timed *t, double bytes, struct gpu_stream *s, int timeout_ms,
		     double *gbps)
{
	double ms = 0;
	int rc = time_best(t, 3, s, timeout_ms, &ms);

	*gbps = !rc && ms > 0 ? bytes * t->n / (ms * 1e-3) / 1e9 : 0;
	return rc;
}

/* BatchNorm-like shape: ResNet's first stage at batch 32 (411 MB of f32) */
#define CAL_BN_IMAGES 32
#define CAL_BN_CHANNELS 256
#define CAL_BN_HW (56 * 56)
/* LayerNorm / softmax rows: BERT-large's width over 32768 tokens (134 MB of f32) */
#define CAL_ROWS 32768
#define CAL_ROW_DIM 1024

int gpu_calibrate_memory(struct gpu_stream *s, int timeout_ms, struct gpu_mem_rates *out)
{
	const size_t count = (size_t)64 << 20; /* 256 MiB per operand: far past the L2 */
	const size_t bn = (size_t)CAL_BN_IMAGES * CAL_BN_CHANNELS * CAL_BN_HW;
	const size_t big = bn > count ? bn : count;
	void *a, *b, *d, *stats;
	struct timed t;
	double tiny = 0;
	int rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	callbound_note("cudaMalloc", NULL);
	a = gpu_alloc(big * 4);
	b = gpu_alloc(count * 4);
	d = gpu_alloc(big * 4);
	stats = gpu_alloc(2 * sizeof(float) * CAL_BN_CHANNELS);
	t = (struct timed){ .kind = TK_REDUCE, .c = d, .a = a, .b = b, .count = count, .n = 5 };
	if (!a || !b || !d || !stats)
		goto out_free;
	callbound_note("cudaMemsetAsync", NULL);
	rc = gpu_memset_async(a, 0, big * 4, s);
	if (!rc)
		rc = gpu_memset_async(b, 0, count * 4, s);
	if (!rc)
		rc = time_rate(&t, 3.0 * count * 4, s, timeout_ms, &out->stream_gbps);
	/* back-to-back launches of a 256-element reduce: the shortest kernel's pace */
	t.count = 256;
	t.n = 200;
	if (!rc)
		rc = time_rate(&t, 1, s, timeout_ms, &tiny);
	if (!rc && tiny > 0)
		out->floor_us = 1e6 / (tiny * 1e9);
	t = (struct timed){ .kind = TK_BN, .c = d, .a = a, .scratch = stats,
			    .size = CAL_BN_CHANNELS, .count = (size_t)CAL_BN_IMAGES * CAL_BN_HW,
			    .hw = CAL_BN_HW, .n = 3 };
	if (!rc)
		rc = time_rate(&t, 3.0 * bn * 4, s, timeout_ms, &out->bn_gbps);
	t = (struct timed){ .kind = TK_LAYERNORM, .c = d, .a = a, .size = CAL_ROW_DIM,
			    .count = CAL_ROWS, .n = 5 };
	if (!rc)
		rc = time_rate(&t, 2.0 * CAL_ROWS * CAL_ROW_DIM * 4, s, timeout_ms,
			       &out->layernorm_gbps);
	t.kind = TK_SOFTMAX;
	if (!rc)
		rc = time_rate(&t, 2.0 * CAL_ROWS * CAL_ROW_DIM * 4, s, timeout_ms,
			       &out->softmax_gbps);
out_free:
	callbound_note("cudaFree", NULL);
	gpu_free(stats);
	gpu_free(d);
	gpu_free(b);
	gpu_free(a);
	return rc;
}
