/*
 * GPU layer benchmarks: reduce-kernel bandwidth against a D2D copy of the same bytes,
 * the staged copy pipeline (D2H chunks into pinned memory, then H2D, two streams)
 * against one plain pinned copy, and our GEMM's TFLOP/s. Prints a table last.
 * Exit 0, 1 on an error, 77 without a GPU. Targets: reduce >= 0.9x copy (and >= torch.add, run beside it), staged >= 0.9x.
 *   gpu_bench [reduce] [staged] [gemm]     (no argument: all three groups)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "util/common.h"
#include "util/pattern.h"

#define TIMEOUT_MS 60000
#define ROWS_MAX 64

struct row {
	char what[64];
	double value;
	char unit[16];
	char note[64];
};

static struct row rows[ROWS_MAX];
static int nrows;

static void add_row(const char *what, double value, const char *unit, const char *note)
{
	if (nrows == ROWS_MAX) {
		fprintf(stderr, "gpu_bench: table full, row '%s' dropped\n", what);
		return;
	}
	snprintf(rows[nrows].what, sizeof(rows[nrows].what), "%s", what);
	rows[nrows].value = value;
	snprintf(rows[nrows].unit, sizeof(rows[nrows].unit), "%s", unit);
	snprintf(rows[nrows].note, sizeof(rows[nrows].note), "%s", note);
	nrows++;
}

struct timer {
	struct gpu_event *e0, *e1;
	struct gpu_stream *s;
};

static int timer_start(struct timer *t)
{
	return gpu_event_record(t->e0, t->s);
}

/* Milliseconds since timer_start, or a negative value on error. */
static double timer_stop(struct timer *t)
{
	double ms;

	if (gpu_event_record(t->e1, t->s) || gpu_event_sync(t->e1, TIMEOUT_MS) ||
	    gpu_event_elapsed_ms(t->e0, t->e1, &ms))
		return -1;
	return ms;
}

static int bench_reduce(struct timer *tm, enum dtype t, size_t bytes, int iters)
{
	size_t n = bytes / dtype_size(t);
	void *a = gpu_alloc(bytes), *b = gpu_alloc(bytes), *d = gpu_alloc(bytes);
	double ms_copy, ms_red, ms_inpl, copy_gbs, red_gbs, inpl_gbs;
	char what[64], note[64];
	int rc = -ENOMEM;

	if (!a || !b || !d)
		goto out;
	rc = gpu_fill(a, n, 0, t, 1, 0, 2, tm->s);
	rc = rc ? rc : gpu_fill(b, n, 0, t, 1, 1, 2, tm->s);
	for (int i = 0; i < 3 && !rc; i++) {
		rc = gpu_memcpy_async(d, a, bytes, GPU_COPY_D2D, tm->s);
		rc = rc ? rc : gpu_reduce(d, a, b, n, t, 1.0, tm->s);
	}
	rc = rc ? rc : timer_start(tm);
	for (int i = 0; i < iters && !rc; i++)
		rc = gpu_memcpy_async(d, a, bytes, GPU_COPY_D2D, tm->s);
	ms_copy = rc ? -1 : timer_stop(tm);
	rc = rc ? rc : timer_start(tm);
	for (int i = 0; i < iters && !rc; i++)
		rc = gpu_reduce(d, a, b, n, t, 1.0, tm->s);
	ms_red = rc ? -1 : timer_stop(tm);
	rc = rc ? rc : timer_start(tm);
	for (int i = 0; i < iters && !rc; i++)
		rc = gpu_reduce(d, d, b, n, t, 1.0, tm->s);
	ms_inpl = rc ? -1 : timer_stop(tm);
	if (rc || ms_copy <= 0 || ms_red <= 0 || ms_inpl <= 0) {
		rc = rc ? rc : -EIO;
		goto out;
	}
	/* bytes moved through memory: copy reads and writes once, reduce reads twice */
	copy_gbs = 2.0 * bytes * iters / (ms_copy * 1e-3) / 1e9;
	red_gbs = 3.0 * bytes * iters / (ms_red * 1e-3) / 1e9;
	inpl_gbs = 3.0 * bytes * iters / (ms_inpl * 1e-3) / 1e9;
	snprintf(what, sizeof(what), "D2D copy %zu MiB", bytes >> 20);
	add_row(what, copy_gbs, "GB/s", "read+write bytes");
	snprintf(what, sizeof(what), "reduce %s %zuMiB dst=a+b", dtype_name(t), bytes >> 20);
	snprintf(note, sizeof(note), "%.2fx copy (target >= 0.90)", red_gbs / copy_gbs);
	add_row(what, red_gbs, "GB/s", note);
	snprintf(what, sizeof(what), "reduce %s %zuMiB in place", dtype_name(t), bytes >> 20);
	snprintf(note, sizeof(note), "%.2fx copy (target >= 0.90)", inpl_gbs / copy_gbs);
	add_row(what, inpl_gbs, "GB/s", note);
out:
	gpu_free(d);
	gpu_free(b);
	gpu_free(a);
	return rc;
}

/*
 * src (device) -> pinned slots -> dst (device), chunk by chunk: stream d2h fills slots
 * once stream h2d has drained them, stream h2d empties them once filled. The streams
 * hand over `group` consecutive chunks at a time (one event each way per group): every
 * chunk is still its own copy, but each hand-over costs the copy engines a few µs.
 */
static int staged(struct timer *tm, void *dst, const void *src, size_t bytes, char *host,
		  size_t chunk, int slots, int group, struct gpu_stream *h2d,
		  struct gpu_event **filled, struct gpu_event **drained, double *ms)
{
	size_t nchunks = (bytes + chunk - 1) / chunk;
	int ngroups = slots / group;
	int rc = timer_start(tm);

	for (size_t g0 = 0; g0 < nchunks && !rc; g0 += (size_t)group) {
		size_t g = g0 / (size_t)group, end = g0 + (size_t)group;
		int gs = (int)(g % (size_t)ngroups);

		end = end < nchunks ? end : nchunks;
		if (g >= (size_t)ngroups)
			rc = gpu_stream_wait_event(tm->s, drained[gs]);
		for (size_t i = g0; i < end && !rc; i++) {
			size_t off = i * chunk, len = bytes - off < chunk ? bytes - off : chunk;

			rc = gpu_memcpy_async(host + (i % (size_t)slots) * chunk,
					      (const char *)src + off, len, GPU_COPY_D2H, tm->s);
		}
		rc = rc ? rc : gpu_event_record(filled[gs], tm->s);
		rc = rc ? rc : gpu_stream_wait_event(h2d, filled[gs]);
		for (size_t i = g0; i < end && !rc; i++) {
			size_t off = i * chunk, len = bytes - off < chunk ? bytes - off : chunk;

			rc = gpu_memcpy_async((char *)dst + off, host + (i % (size_t)slots) * chunk,
					      len, GPU_COPY_H2D, h2d);
		}
		rc = rc ? rc : gpu_event_record(drained[gs], h2d);
	}
	/* the timer's stream waits for the last H2D before its end event */
	rc = rc ? rc : gpu_stream_wait_event(tm->s, drained[((nchunks - 1) / (size_t)group) %
							     (size_t)ngroups]);
	*ms = rc ? -1 : timer_stop(tm);
	return rc ? rc : (*ms > 0 ? 0 : -EIO);
}

static int bench_staged(struct timer *tm, size_t bytes, size_t chunk, int slots, int group)
{
	void *src = gpu_alloc(bytes), *dst = gpu_alloc(bytes);
	char *pinned = gpu_host_alloc(bytes), *ring = gpu_host_alloc(chunk * (size_t)slots);
	struct gpu_stream *h2d = gpu_stream_create(true);
	struct gpu_event *filled[16] = { 0 }, *drained[16] = { 0 };
	double ms_d2h = -1, ms_h2d = -1, ms_st = -1, best = 1e30, d2h_gbs, h2d_gbs, st_gbs;
	uint64_t bad = 1, first;
	char what[64], note[64];
	int rc = -ENOMEM;

	if (!src || !dst || !pinned || !ring || !h2d || slots > 16 || group < 1 ||
	    slots % group || slots / group < 2)
		goto out;
	for (int i = 0; i < slots; i++) {
		filled[i] = gpu_event_create(false);
		drained[i] = gpu_event_create(false);
		if (!filled[i] || !drained[i])
			goto out;
	}
	/* one rank's input is that rank's AllReduce result: gpu_verify checks the copy */
	rc = gpu_fill(src, bytes / 4, 0, DT_F32, 7, 0, 1, tm->s);
	/* plain pinned copies, each way, best of 3 */
	for (int i = 0; i < 3 && !rc; i++) {
		double ms;

		rc = timer_start(tm);
		rc = rc ? rc : gpu_memcpy_async(pinned, src, bytes, GPU_COPY_D2H, tm->s);
		ms = rc ? -1 : timer_stop(tm);
		ms_d2h = ms_d2h < 0 || (ms > 0 && ms < ms_d2h) ? ms : ms_d2h;
		rc = rc ? rc : timer_start(tm);
		rc = rc ? rc : gpu_memcpy_async(dst, pinned, bytes, GPU_COPY_H2D, tm->s);
		ms = rc ? -1 : timer_stop(tm);
		ms_h2d = ms_h2d < 0 || (ms > 0 && ms < ms_h2d) ? ms : ms_h2d;
	}
	rc = rc ? rc : gpu_memset_async(dst, 0, bytes, tm->s);
	for (int i = 0; i < 3 && !rc; i++) {
		rc = staged(tm, dst, src, bytes, ring, chunk, slots, group, h2d, filled, drained,
			    &ms_st);
		best = ms_st < best ? ms_st : best;
	}
	rc = rc ? rc : gpu_verify(dst, bytes / 4, 0, DT_F32, REDOP_SUM, 7, 1, tm->s, TIMEOUT_MS,
				     &bad, &first);
	if (!rc && bad)
		fprintf(stderr, "staged copy: %llu wrong elements\n", (unsigned long long)bad);
	if (rc || bad || ms_d2h <= 0 || ms_h2d <= 0) {
		rc = rc ? rc : -EIO;
		goto out;
	}
	d2h_gbs = bytes / (ms_d2h * 1e-3) / 1e9;
	h2d_gbs = bytes / (ms_h2d * 1e-3) / 1e9;
	st_gbs = bytes / (best * 1e-3) / 1e9;
	snprintf(what, sizeof(what), "pinned D2H %zu MiB", bytes >> 20);
	add_row(what, d2h_gbs, "GB/s", "one cudaMemcpyAsync");
	snprintf(what, sizeof(what), "pinned H2D %zu MiB", bytes >> 20);
	add_row(what, h2d_gbs, "GB/s", "one cudaMemcpyAsync");
	snprintf(what, sizeof(what), "staged D2H+H2D %zuKiB x%d by %d", chunk >> 10, slots, group);
	snprintf(note, sizeof(note), "%.2fx pinned D2H (target >= 0.90)", st_gbs / d2h_gbs);
	add_row(what, st_gbs, "GB/s", note);
out:
	for (int i = 0; i < slots && i < 16; i++) {
		gpu_event_destroy(filled[i]);
		gpu_event_destroy(drained[i]);
	}
	gpu_stream_destroy(h2d);
	gpu_host_free(ring);
	gpu_host_free(pinned);
	gpu_free(dst);
	gpu_free(src);
	return rc;
}

static int bench_gemm(struct timer *tm, enum gpu_gemm_kind kind, int m, int n, int k, int iters)
{
	static const char *const names[] = { "default", "mma", "mma_k64", "wmma" };
	void *a = gpu_alloc((size_t)m * k * 2), *b = gpu_alloc((size_t)k * n * 2);
	void *c = gpu_alloc((size_t)m * n * 2);
	char what[64];
	double ms;
	int rc = -ENOMEM;

	if (!a || !b || !c)
		goto out;
	/* random-looking small integers: realistic bit patterns, exact products */
	rc = gpu_fill(a, (size_t)m * k, 0, DT_BF16, 3, 0, 32, tm->s);
	rc = rc ? rc : gpu_fill(b, (size_t)k * n, 0, DT_BF16, 3, 1, 32, tm->s);
	for (int i = 0; i < 2 && !rc; i++)
		rc = gpu_gemm_with(kind, c, a, b, m, n, k, tm->s);
	rc = rc ? rc : timer_start(tm);
	for (int i = 0; i < iters && !rc; i++)
		rc = gpu_gemm_with(kind, c, a, b, m, n, k, tm->s);
	ms = rc ? -1 : timer_stop(tm);
	if (rc || ms <= 0) {
		rc = rc ? rc : -EIO;
		goto out;
	}
	snprintf(what, sizeof(what), "gemm %s bf16 %dx%dx%d", names[kind], m, n, k);
	add_row(what, 2.0 * m * n * (double)k * iters / (ms * 1e-3) / 1e12, "TFLOP/s",
		"fp32 accumulate");
out:
	gpu_free(c);
	gpu_free(b);
	gpu_free(a);
	return rc;
}

/* No arguments: every group; else only the groups named (reduce, staged, gemm). */
static bool want(int argc, char **argv, const char *group)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], group))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct gpu_opts o = { .device = "auto" };
	struct gpu_ctx *ctx;
	struct timer tm;
	double tflops = 0;
	int rc, failed = 0;

	if (!gpu_available()) {
		printf("SKIP: no usable GPU (see the line above)\n");
		return 77;
	}
	rc = gpu_open(&o, 0, &ctx);
	if (rc) {
		printf("gpu_open: %d\n", rc);
		return 1;
	}
	tm.s = ctx->comm;
	tm.e0 = gpu_event_create(true);
	tm.e1 = gpu_event_create(true);
	if (!tm.e0 || !tm.e1)
		return 1;
	printf("GPU %d: %s (%s), %d SMs\n", ctx->dev, ctx->props.name, ctx->props.pci_bus_id,
	       ctx->props.sm_count);
	/* the sizes torch.add is held against (tests/gpu/torch_add.py, same call) */
	for (size_t mib = 64; mib <= 1024 && want(argc, argv, "reduce"); mib *= 4) {
		failed |= bench_reduce(&tm, DT_F32, mib << 20, 20) != 0;
		failed |= bench_reduce(&tm, DT_BF16, mib << 20, 20) != 0;
	}
	if (want(argc, argv, "reduce")) {
		failed |= bench_reduce(&tm, DT_F16, 512ull << 20, 20) != 0;
		failed |= bench_reduce(&tm, DT_F64, 512ull << 20, 20) != 0;
		/* a DDP bucket's size: launch overhead starts to show */
		failed |= bench_reduce(&tm, DT_BF16, 25ull << 20, 100) != 0;
	}
	if (want(argc, argv, "staged")) {
		failed |= bench_staged(&tm, 1ull << 30, 4ull << 20, 4, 1) != 0;
		failed |= bench_staged(&tm, 1ull << 30, 2ull << 20, 8, 1) != 0;
		failed |= bench_staged(&tm, 1ull << 30, 1ull << 20, 8, 1) != 0;
		failed |= bench_staged(&tm, 1ull << 30, 1ull << 20, 16, 2) != 0;
		failed |= bench_staged(&tm, 1ull << 30, 1ull << 20, 16, 4) != 0;
		failed |= bench_staged(&tm, 1ull << 30, 1ull << 20, 16, 8) != 0;
	}
	for (int kind = GPU_GEMM_MMA; kind < GPU_GEMM_KIND_COUNT && want(argc, argv, "gemm");
	     kind++) {
		failed |= bench_gemm(&tm, kind, 4096, 4096, 4096, 20) != 0;
		failed |= bench_gemm(&tm, kind, 8192, 8192, 8192, 10) != 0;
	}
	/* layer-like shapes: a GPT MLP (tokens x 4h x h) and its transpose */
	if (want(argc, argv, "gemm")) {
		failed |= bench_gemm(&tm, GPU_GEMM_DEFAULT, 8192, 16384, 4096, 10) != 0;
		failed |= bench_gemm(&tm, GPU_GEMM_DEFAULT, 8192, 4096, 16384, 10) != 0;
		rc = gpu_calibrate(ctx->compute, TIMEOUT_MS, &tflops);
		failed |= rc != 0;
		if (!rc)
			add_row("gpu_calibrate (best)", tflops, "TFLOP/s", "4096^3 and 8192^3");
	}
	printf("\n%-36s %12s %-8s %s\n", "benchmark", "value", "unit", "note");
	for (int i = 0; i < nrows; i++)
		printf("%-36s %12.1f %-8s %s\n", rows[i].what, rows[i].value, rows[i].unit,
		       rows[i].note);
	gpu_event_destroy(tm.e1);
	gpu_event_destroy(tm.e0);
	gpu_close(ctx);
	return failed ? 1 : 0;
}
