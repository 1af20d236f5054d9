/*
 * GPU layer tests on a real device: reduce vs a CPU reference bit for bit (every type,
 * op, odd sizes, misaligned offsets, guards), fill/verify, GEMM vs fp64, spin timing,
 * stream timeouts, dma-buf and IPC export. Exit 0 pass, 1 fail, 77 skip (no GPU).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "util/common.h"
#include "util/half.h"
#include "coll/verify.h"

#define TIMEOUT_MS 20000
#define RED_MAX 1000003
#define GUARD 16

static int failures;
static int checks;

static bool check(bool ok, const char *fmt, ...) GS_PRINTF(2, 3);
static bool check(bool ok, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (ok)
		return true;
	failures++;
	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	return false;
}

/* The gpu_reduce contract on the CPU: add and scale in f32 (f64), round once. */
static void ref_reduce(void *dst, const void *a, const void *b, size_t n, enum dtype t,
		       double scale)
{
	for (size_t i = 0; i < n; i++) {
		if (t == DT_F64) {
			double r = verify_value(a, i, t) + verify_value(b, i, t);

			if (scale != 1.0)
				r = r * scale;
			verify_store(dst, i, t, r);
		} else {
			float r = (float)verify_value(a, i, t) + (float)verify_value(b, i, t);

			if (scale != 1.0)
				r = r * (float)scale;
			verify_store(dst, i, t, r);
		}
	}
}

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static double rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (double)(rng_state >> 11) / (double)(1ull << 53);
}

/* One reduce case: offsets in elements; in place when inplace (dst starts as a copy of a). */
static void reduce_case(char *dd, const char *da, const char *db, const char *ha, const char *hb,
			char *got, char *want, size_t n, enum dtype t, double scale, size_t od,
			size_t oa, size_t ob, bool inplace)
{
	size_t es = dtype_size(t), span = (od + n + GUARD) * es, stray = 0;
	const char *src_a = inplace ? dd + od * es : da + oa * es;
	int rc;

	rc = gpu_memset_async(dd, 0xab, span, NULL);
	if (!rc && inplace)
		rc = gpu_memcpy(dd + od * es, da + oa * es, n * es, GPU_COPY_D2D);
	if (!rc)
		rc = gpu_reduce(dd + od * es, src_a, db + ob * es, n, t, scale, NULL);
	if (!rc)
		rc = gpu_memcpy(got, dd, span, GPU_COPY_D2H);
	if (!check(rc == 0, "reduce %s n=%zu: rc=%d", dtype_name(t), n, rc))
		return;
	ref_reduce(want, ha + oa * es, hb + ob * es, n, t, scale);
	if (memcmp(got + od * es, want, n * es) != 0) {
		size_t i = 0;

		while (memcmp(got + (od + i) * es, want + i * es, es) == 0)
			i++;
		check(false, "reduce %s scale=%g n=%zu od=%zu oa=%zu ob=%zu inplace=%d: "
		      "first diff at %zu: got %g want %g", dtype_name(t), scale, n, od, oa, ob,
		      inplace, i, verify_value(got + od * es, i, t), verify_value(want, i, t));
		return;
	}
	/* the guards around dst keep their 0xab bytes: head and tail stay in bounds */
	for (size_t i = 0; i < span; i++)
		if ((i < od * es || i >= (od + n) * es) && (unsigned char)got[i] != 0xab)
			stray++;
	check(stray == 0, "reduce %s n=%zu od=%zu: %zu bytes written outside dst", dtype_name(t),
	      n, od, stray);
}

static void test_reduce(void)
{
	static const size_t sizes[] = { 1, 3, 1000, RED_MAX };
	size_t bytes = (RED_MAX + 2 * GUARD) * 8;
	char *ha = malloc(bytes), *hb = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
	char *da = gpu_alloc(bytes), *db = gpu_alloc(bytes), *dd = gpu_alloc(bytes);
	int before = failures;

	if (!check(ha && hb && got && want && da && db && dd, "reduce: allocation"))
		goto out;
	for (int t = 0; t < DT_COUNT; t++) {
		for (size_t i = 0; i < RED_MAX + 2 * GUARD; i++) {
			verify_store(ha, i, t, (rnd() - 0.5) * 200.0);
			verify_store(hb, i, t, (rnd() - 0.5) * 200.0);
		}
		if (!check(gpu_memcpy(da, ha, bytes, GPU_COPY_H2D) == 0 &&
				   gpu_memcpy(db, hb, bytes, GPU_COPY_H2D) == 0,
			   "reduce: upload"))
			goto out;
		for (int op = 0; op < REDOP_COUNT; op++) {
			double scale = op == REDOP_AVG ? 1.0 / 3.0 : 1.0;

			for (size_t si = 0; si < ARRAY_SIZE(sizes); si++) {
				for (size_t od = 0; od < 16; od++) {
					size_t n = sizes[si];

					/* shared alignment (vector path) and mixed (scalar path) */
					reduce_case(dd, da, db, ha, hb, got, want, n, t, scale, od,
						    od, od, false);
					reduce_case(dd, da, db, ha, hb, got, want, n, t, scale, od,
						    (od + 5) % 16, (od + 11) % 16, false);
					reduce_case(dd, da, db, ha, hb, got, want, n, t, scale, od,
						    od, od, true);
					reduce_case(dd, da, db, ha, hb, got, want, n, t, scale, od,
						    od, (od + 3) % 16, true);
				}
			}
		}
		/* gpu_scale: avg's final division on its own */
		char *d = dd + 5 * dtype_size(t);

		if (gpu_memcpy(d, ha, 1000 * dtype_size(t), GPU_COPY_H2D) == 0 &&
		    gpu_scale(d, 1000, t, 0.25, NULL) == 0 &&
		    gpu_memcpy(got, d, 1000 * dtype_size(t), GPU_COPY_D2H) == 0) {
			for (size_t i = 0; i < 1000; i++) {
				double x = verify_value(ha, i, t);
				double v = t == DT_F64 ? x * 0.25 : (double)((float)x * 0.25f);

				verify_store(want, i, t, v);
			}
			check(memcmp(got, want, 1000 * dtype_size(t)) == 0, "scale %s",
			      dtype_name(t));
		} else {
			check(false, "scale %s: call failed", dtype_name(t));
		}
	}
	check(gpu_reduce(dd + 1, da, db, 10, DT_F32, 1.0, NULL) == -EINVAL,
	      "reduce: misaligned element accepted");
	printf("reduce: %s\n", failures == before ? "ok" : "FAILED");
out:
	gpu_free(dd);
	gpu_free(db);
	gpu_free(da);
	free(want);
	free(got);
	free(hb);
	free(ha);
}

/*
 * The engine pattern on the GPU equals the CPU's (coll/verify.c) bit for bit, and an
 * AllReduce done with gpu_reduce + gpu_div verifies exactly on both sides, for n = 3 too
 * (where multiplying by 1/n would round differently from avg's one division).
 */
static void test_pattern(struct gpu_stream *s)
{
	enum { RMAX = 5 };
	static const int ns[] = { 3, 5 };
	const size_t n = 1000003, base = 17;
	const uint64_t seed = 42;
	size_t bytes = n * 8;
	void *buf[RMAX] = { 0 }, *acc = gpu_alloc(bytes);
	char *host = malloc(bytes), *cpu = malloc(bytes);
	uint64_t bad, lowest;
	int before = failures, rc;

	for (int r = 0; r < RMAX; r++)
		buf[r] = gpu_alloc(bytes);
	if (!check(acc && host && cpu && buf[RMAX - 1], "pattern: allocation"))
		goto out;
	for (size_t ni = 0; ni < ARRAY_SIZE(ns); ni++) {
		int R = ns[ni];

		for (int t = 0; t < DT_COUNT; t++) {
			size_t es = dtype_size(t);

			for (int r = 0; r < R; r++) {
				rc = gpu_fill(buf[r], n, base, t, seed, r, R, s);
				check(rc == 0, "fill %s rank %d: rc=%d", dtype_name(t), r, rc);
			}
			/* the GPU fill equals the CPU's */
			rc = gpu_stream_sync(s, TIMEOUT_MS);
			if (!rc)
				rc = gpu_memcpy(host, buf[R - 1], n * es, GPU_COPY_D2H);
			verify_fill(cpu, n, base, t, REDOP_SUM, seed, R - 1, R);
			check(rc == 0 && memcmp(host, cpu, n * es) == 0,
			      "fill %s n=%d: GPU and CPU patterns differ", dtype_name(t), R);
			for (int op = 0; op < REDOP_COUNT; op++) {
				rc = gpu_memcpy_async(acc, buf[0], n * es, GPU_COPY_D2D, s);
				for (int r = 1; r < R && !rc; r++)
					rc = gpu_reduce(acc, acc, buf[r], n, t, 1.0, s);
				if (!rc && op == REDOP_AVG)
					rc = gpu_div(acc, n, t, (uint32_t)R, s);
				if (!rc)
					rc = gpu_verify(acc, n, base, t, op, seed, R, s, TIMEOUT_MS,
							&bad, &lowest);
				check(rc == 0 && bad == 0 && lowest == n,
				      "allreduce-like %s %s n=%d: rc=%d bad=%llu first=%llu",
				      dtype_name(t), redop_name(op), R, rc, (unsigned long long)bad,
				      (unsigned long long)lowest);
				/* the CPU check agrees with the GPU result */
				rc = gpu_memcpy(host, acc, n * es, GPU_COPY_D2H);
				check(rc == 0 && verify_check(host, n, base, t, op, seed, R,
							      &lowest) == 0,
				      "GPU result %s %s n=%d fails the CPU check at %llu",
				      dtype_name(t), redop_name(op), R, (unsigned long long)lowest);
				/* plant two errors: both counted, the lower index reported */
				verify_store(host, 0, t, 0.3); /* never a pattern value */
				rc = gpu_memcpy((char *)acc + 12345 * es, host, es, GPU_COPY_H2D);
				if (!rc)
					rc = gpu_memcpy((char *)acc + 777 * es, host, es,
							GPU_COPY_H2D);
				if (!rc)
					rc = gpu_verify(acc, n, base, t, op, seed, R, s, TIMEOUT_MS,
							&bad, &lowest);
				check(rc == 0 && bad == 2 && lowest == 777,
				      "planted errors %s %s: rc=%d bad=%llu first=%llu",
				      dtype_name(t), redop_name(op), rc, (unsigned long long)bad,
				      (unsigned long long)lowest);
			}
		}
	}
	printf("fill/verify: %s\n", failures == before ? "ok" : "FAILED");
out:
	for (int r = 0; r < RMAX; r++)
		gpu_free(buf[r]);
	gpu_free(acc);
	free(host);
	free(cpu);
}

static const char *const gemm_names[] = { "default", "mma", "mma_k64", "wmma" };

static void test_gemm(struct gpu_stream *s, enum gpu_gemm_kind kind)
{
	static const int shapes[][3] = {
		{ 8, 8, 8 }, { 128, 128, 32 }, { 200, 136, 72 }, { 256, 384, 512 },
		{ 1000, 520, 264 }, { 129, 1032, 1000 }, { 1, 8, 4096 }, { 300, 8, 24 },
	};
	int before = failures;

	for (size_t si = 0; si < ARRAY_SIZE(shapes); si++) {
		int m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
		uint16_t *a = malloc((size_t)m * k * 2), *b = malloc((size_t)k * n * 2);
		uint16_t *c = malloc((size_t)m * n * 2);
		void *da = gpu_alloc((size_t)m * k * 2), *db = gpu_alloc((size_t)k * n * 2);
		void *dc = gpu_alloc((size_t)m * n * 2);
		double num = 0, den = 0, maxerr = 0, maxref = 0;
		int rc = -ENOMEM;

		if (a && b && c && da && db && dc) {
			for (size_t i = 0; i < (size_t)m * k; i++)
				a[i] = f32_to_bf16((float)(rnd() * 2 - 1));
			for (size_t i = 0; i < (size_t)k * n; i++)
				b[i] = f32_to_bf16((float)(rnd() * 2 - 1));
			rc = gpu_memcpy(da, a, (size_t)m * k * 2, GPU_COPY_H2D);
			if (!rc)
				rc = gpu_memcpy(db, b, (size_t)k * n * 2, GPU_COPY_H2D);
			if (!rc)
				rc = gpu_gemm_with(kind, dc, da, db, m, n, k, s);
			if (!rc)
				rc = gpu_stream_sync(s, TIMEOUT_MS);
			if (!rc)
				rc = gpu_memcpy(c, dc, (size_t)m * n * 2, GPU_COPY_D2H);
		}
		if (check(rc == 0, "gemm %s %dx%dx%d: rc=%d", gemm_names[kind], m, n, k, rc)) {
			for (int i = 0; i < m; i++) {
				for (int j = 0; j < n; j++) {
					double ref = 0, e;

					for (int l = 0; l < k; l++)
						ref += (double)bf16_to_f32(a[(size_t)i * k + l]) *
						       bf16_to_f32(b[(size_t)l * n + j]);
					e = bf16_to_f32(c[(size_t)i * n + j]) - ref;
					num += e * e;
					den += ref * ref;
					maxerr = fmax(maxerr, fabs(e));
					maxref = fmax(maxref, fabs(ref));
				}
			}
			double rel = sqrt(num / (den > 0 ? den : 1));

			check(rel < 1e-2 && maxerr < 1e-2 * maxref,
			      "gemm %s %dx%dx%d: relative error %.3g, max error %.3g of %.3g",
			      gemm_names[kind], m, n, k, rel, maxerr, maxref);
			printf("gemm %s %dx%dx%d: relative error %.2e\n", gemm_names[kind], m, n, k,
			       rel);
		}
		gpu_free(dc);
		gpu_free(db);
		gpu_free(da);
		free(c);
		free(b);
		free(a);
	}
	check(gpu_gemm(NULL, NULL, NULL, 16, 12, 16, s) == -EINVAL, "gemm: n=12 accepted");
	printf("gemm %s: %s\n", gemm_names[kind], failures == before ? "ok" : "FAILED");
}

static void test_spin_and_waits(struct gpu_stream *s, int sms)
{
	static const uint64_t durations_ns[] = { 5000000, 50000000 };
	struct gpu_event *e0 = gpu_event_create(true), *e1 = gpu_event_create(true);
	double ms = 0;
	int rc;

	if (!check(e0 && e1, "events"))
		goto out;
	for (size_t i = 0; i < ARRAY_SIZE(durations_ns); i++) {
		double want = durations_ns[i] / 1e6;

		rc = gpu_event_record(e0, s);
		if (!rc)
			rc = gpu_spin(durations_ns[i], sms, s);
		if (!rc)
			rc = gpu_event_record(e1, s);
		if (!rc)
			rc = gpu_event_sync(e1, TIMEOUT_MS);
		if (!rc)
			rc = gpu_event_elapsed_ms(e0, e1, &ms);
		check(rc == 0 && fabs(ms - want) <= 0.1 * want,
		      "spin %.1f ms: measured %.3f ms rc=%d", want, ms, rc);
		printf("spin %.1f ms: measured %.3f ms\n", want, ms);
	}
	/* every wait is bounded: a 300 ms spin outlasts a 20 ms wait */
	rc = gpu_spin(300000000ull, sms, s);
	check(rc == 0 && gpu_stream_query(s) == -EBUSY, "stream busy during spin");
	check(gpu_stream_sync(s, 20) == -ETIMEDOUT, "stream sync times out");
	check(gpu_stream_sync(s, TIMEOUT_MS) == 0 && gpu_stream_query(s) == 0, "stream drains");
out:
	gpu_event_destroy(e1);
	gpu_event_destroy(e0);
}

static void test_dmabuf(const struct gpu_props *p)
{
	struct gpu_dmabuf d;
	char *buf = gpu_alloc(8 << 20);
	int rc;

	if (!check(buf != NULL, "dmabuf: allocation"))
		return;
	rc = gpu_dmabuf_export(buf + 3 * 4096 + 256, 1 << 20, &d);
	if (rc == -ENOTSUP) {
		printf("dmabuf: SKIP (not supported: DMA_BUF_SUPPORTED=%d GDR_SUPPORTED=%d)\n",
		       p->dmabuf_supported, p->gdr_supported);
	} else if (check(rc == 0 && d.fd >= 0, "dmabuf export: rc=%d fd=%d", rc, d.fd)) {
		check((char *)d.base + d.offset == buf + 3 * 4096 + 256 &&
			      d.len >= (1 << 20) + d.offset && d.len % 4096 == 0,
		      "dmabuf range: base=%p offset=%llu len=%llu", d.base,
		      (unsigned long long)d.offset, (unsigned long long)d.len);
		printf("dmabuf: ok (fd %d, offset %llu, len %llu)\n", d.fd,
		       (unsigned long long)d.offset, (unsigned long long)d.len);
		gpu_dmabuf_close(&d);
	}
	gpu_free(buf);
}

/* IPC export of a cudaMalloc'd buffer (opening needs a second process: transport tests). */
static void test_ipc(void)
{
	struct gpu_ipc_handle h, zero;
	void *buf = gpu_alloc(1 << 20);
	int rc;

	if (!check(buf != NULL, "ipc: allocation"))
		return;
	memset(&h, 0, sizeof(h));
	memset(&zero, 0, sizeof(zero));
	rc = gpu_ipc_export(buf, &h);
	check(rc == 0 && memcmp(&h, &zero, sizeof(h)) != 0, "ipc export: rc=%d", rc);
	printf("ipc: %s\n", rc == 0 ? "ok (handle exported)" : "FAILED");
	gpu_free(buf);
}

/* Run only the parts named on the command line (all when none). */
static bool want(int argc, char **argv, const char *part)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], part) == 0)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct gpu_opts o = { .device = "auto" };
	struct gpu_ctx *ctx;
	unsigned int dom, bus, dev, fn;
	int rc;

	if (!gpu_available()) {
		printf("SKIP: no usable GPU (see the line above)\n");
		return 77;
	}
	rc = gpu_open(&o, 0, &ctx);
	if (rc) {
		printf("FAIL: gpu_open: %d\n", rc);
		return 1;
	}
	printf("GPU %d: %s, bus %s, %d SMs, cc %d.%d, %.1f GiB, L2 %llu MiB, dmabuf %d, gdr %d\n",
	       ctx->dev, ctx->props.name, ctx->props.pci_bus_id, ctx->props.sm_count,
	       ctx->props.cc_major, ctx->props.cc_minor,
	       (double)ctx->props.mem_total / (1ull << 30),
	       (unsigned long long)ctx->props.l2_bytes >> 20, ctx->props.dmabuf_supported,
	       ctx->props.gdr_supported);
	check(sscanf(ctx->props.pci_bus_id, "%4x:%2x:%2x.%1x", &dom, &bus, &dev, &fn) == 4 &&
		      strlen(ctx->props.pci_bus_id) == 12,
	      "pci bus id format: %s", ctx->props.pci_bus_id);
	check(ctx->props.sm_count > 0 && ctx->props.mem_total > 0, "props");
	strcpy(o.device, "none");
	check(gpu_open(&o, 0, &ctx) == -ENODEV, "device=none opens nothing");
	check(gpu_is_device_ptr(ctx) == false, "host pointer is not device memory");

	if (want(argc, argv, "reduce"))
		test_reduce();
	if (want(argc, argv, "pattern"))
		test_pattern(ctx->comm);
	if (want(argc, argv, "gemm"))
		for (int kind = 0; kind < GPU_GEMM_KIND_COUNT; kind++)
			test_gemm(ctx->compute, kind);
	if (want(argc, argv, "spin"))
		test_spin_and_waits(ctx->compute, ctx->props.sm_count);
	if (want(argc, argv, "dmabuf"))
		test_dmabuf(&ctx->props);
	if (want(argc, argv, "ipc"))
		test_ipc();
	gpu_close(ctx);
	printf("%s: %d checks, %d failed\n", failures ? "FAIL" : "PASS", checks, failures);
	return failures ? 1 : 0;
}
