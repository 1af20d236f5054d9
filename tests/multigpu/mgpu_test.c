/*
 * Two ranks sharing one GPU (or two GPUs: device "auto" takes local_rank % ndev): the
 * cudaipc transport point to point, our AllReduce over it (GPU reduce kernels as the
 * executor's memops), and the NCCL reference. "check" verifies bit for bit (exit 0 pass,
 * 1 fail, 77 no GPU); "bench" prints bandwidths, sizes 1 MiB .. 1 GiB.
 * Usage: mgpu_test check|bench
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/exec.h"
#include "coll/nccl_ref.h"
#include "gpu/gpu.h"
#include "transport/tp_test_util.h"
#include "util/common.h"

#define TMO_MS	     20000
#define MAX_CHANNELS 8

extern const struct transport_ops cudaipc_ops;

static bool bench_mode;

struct gmem {
	struct gpu_stream *s[MAX_CHANNELS];
};

static int gm_reduce(void *ctx, int chan, void *dst, const void *src, uint64_t count, enum dtype dt)
{
	struct gmem *g = ctx;

	return gpu_reduce(dst, dst, src, count, dt, 1.0, g->s[chan]);
}

static int gm_scale(void *ctx, int chan, void *buf, uint64_t count, enum dtype dt, uint32_t divisor)
{
	struct gmem *g = ctx;

	return gpu_div(buf, count, dt, divisor, g->s[chan]);
}

static int gm_query(void *ctx, int chan)
{
	struct gmem *g = ctx;
	int rc = gpu_stream_query(g->s[chan]);

	return rc == 0 ? 1 : rc == -EBUSY ? 0 : rc;
}

static double now_s(void)
{
	return time_now_ns() / 1e9;
}

static int iters_for(size_t bytes)
{
	size_t it = (size_t)(2ull << 30) / bytes;

	return (int)(it < 3 ? 3 : it > 200 ? 200 : it);
}

/* Both ranks: send `bytes` to the peer and receive as much, in one tag; wait both. */
static int xchg(struct tpt_rank *r, struct tp_mr *smr, size_t soff, struct tp_mr *rmr, size_t roff,
		size_t bytes, uint64_t tag, bool send, bool recv)
{
	struct tp_completion c;
	int peer = 1 - r->rank, want = send + recv;

	if (recv && r->t.ops->post_recv(&r->t, peer, tag, rmr, roff, bytes, 1))
		return -EIO;
	if (send && r->t.ops->post_send(&r->t, peer, tag, smr, soff, bytes, 2))
		return -EIO;
	for (int i = 0; i < want; i++)
		if (tpt_wait1(r, &c, TMO_MS) != 1 || c.status)
			return -EIO;
	return 0;
}

/* cudaipc point to point: correctness of several sizes at offsets, then bandwidth. */
static int body_p2p(struct tpt_rank *r, void *arg)
{
	static const size_t counts[] = {1, 1023, 262147, 16u << 20}; /* f32 elements */
	const size_t cap = 256u << 20, pad = 4096;
	struct gpu_opts go = {.device = "auto"};
	struct gpu_ctx *gc;
	struct tp_mr *smr, *rmr;
	char *sbuf, *rbuf;
	int peer = 1 - r->rank, fails = 0;

	(void)arg;
	TP_CHECK(gpu_open(&go, r->rank, &gc) == 0);
	sbuf = gpu_alloc(cap + pad);
	rbuf = gpu_alloc(cap + pad);
	TP_CHECK(sbuf && rbuf);
	TP_CHECK(r->t.ops->mr_reg(&r->t, sbuf, cap + pad, MEM_CUDA, &smr) == 0);
	/* receive region starts inside its allocation: the handle's offset must carry */
	TP_CHECK(r->t.ops->mr_reg(&r->t, rbuf + pad, cap, MEM_CUDA, &rmr) == 0);
	for (size_t k = 0; !bench_mode && k < ARRAY_SIZE(counts); k++) {
		uint64_t bad = 0, first = 0;

		/* a one-rank pattern is its own AllReduce result: gpu_verify checks the copy */
		TP_CHECK(gpu_fill(sbuf + 64, counts[k], 0, DT_F32, 77 + k + 10 * peer, 0, 1,
				  gc->comm) == 0);
		TP_CHECK(gpu_memset_async(rbuf + pad, 0, counts[k] * 4, gc->comm) == 0);
		TP_CHECK(gpu_stream_sync(gc->comm, TMO_MS) == 0);
		TP_CHECK(xchg(r, smr, 64, rmr, 0, counts[k] * 4, 100 + k, true, true) == 0);
		TP_CHECK(gpu_verify(rbuf + pad, counts[k], 0, DT_F32, REDOP_SUM, 77 + k + 10 * r->rank,
				    1, gc->comm, TMO_MS, &bad, &first) == 0);
		printf("rank %d cudaipc p2p %zu floats from rank %d: %s (%llu wrong)\n", r->rank,
		       counts[k], peer, bad ? "FAIL" : "ok", (unsigned long long)bad);
		fails += bad != 0;
	}
	for (size_t bytes = 1u << 20; bench_mode && bytes <= cap; bytes *= 4) {
		int it = iters_for(bytes);
		double t0, uni, bi;

		TP_CHECK(tpt_barrier(r) == 0);
		t0 = now_s();
		for (int i = 0; i < it; i++)
			TP_CHECK(xchg(r, smr, 0, rmr, 0, bytes, 1000 + i, r->rank == 0,
				      r->rank == 1) == 0);
		/* the receiver's completion is the end of the copy: close with a tiny ack */
		TP_CHECK(xchg(r, smr, 0, rmr, 0, 4, 999, r->rank == 1, r->rank == 0) == 0);
		uni = now_s() - t0;
		TP_CHECK(tpt_barrier(r) == 0);
		t0 = now_s();
		for (int i = 0; i < it; i++)
			TP_CHECK(xchg(r, smr, 0, rmr, 0, bytes, 5000 + i, true, true) == 0);
		bi = now_s() - t0;
		if (r->rank == 0)
			printf("cudaipc p2p %5zu MiB: one way %7.1f GB/s, both ways %7.1f GB/s per "
			       "direction (%d iters)\n",
			       bytes >> 20, bytes * (double)it / uni / 1e9,
			       bytes * (double)it / bi / 1e9, it);
	}
	fflush(stdout);
	r->t.ops->mr_dereg(&r->t, smr);
	r->t.ops->mr_dereg(&r->t, rmr);
	gpu_free(sbuf);
	gpu_free(rbuf);
	gpu_close(gc);
	return tpt_barrier(r) == 0 && !fails ? 0 : 1;
}

/* Our AllReduce over cudaipc with GPU memops: sum f32 and avg bf16 checked; busbw. */
static int body_allreduce(struct tpt_rank *r, void *arg)
{
	static const struct {
		enum dtype dt;
		enum redop op;
		uint64_t count;
	} cases[] = {{DT_F32, REDOP_SUM, 1},
		     {DT_F32, REDOP_SUM, 100003},
		     {DT_BF16, REDOP_AVG, 1000},
		     {DT_BF16, REDOP_AVG, (8u << 20) + 5},
		     {DT_F32, REDOP_SUM, 32u << 20}};
	const uint64_t chunk = 4u << 20, cap = 1ull << 30;
	struct gpu_opts go = {.device = "auto"};
	struct transport *peers[2] = {&r->t, &r->t};
	struct gmem gm;
	struct coll_memops mo = {
	    .name = "gpu", .ctx = &gm, .reduce = gm_reduce, .scale = gm_scale, .query = gm_query};
	struct coll_comm_cfg cfg = {.rank = r->rank,
				    .nranks = 2,
				    .peer_tp = peers,
				    .timeout_ns = TMO_MS * 1000000ull,
				    .mem = &mo,
				    .max_channels = 4};
	struct coll_buf buf, scr;
	struct coll_comm *c;
	struct gpu_ctx *gc;
	void *d, *s;
	int fails = 0;

	(void)arg;
	TP_CHECK(gpu_open(&go, r->rank, &gc) == 0);
	for (int i = 0; i < MAX_CHANNELS; i++)
		TP_CHECK((gm.s[i] = gpu_stream_create(true)) != NULL);
	d = gpu_alloc(cap);
	s = gpu_alloc(coll_scratch_bytes(chunk, 4));
	TP_CHECK(d && s);
	TP_CHECK((c = coll_comm_create(&cfg)) != NULL);
	TP_CHECK(coll_buf_register(c, &buf, d, cap, MEM_CUDA) == 0);
	TP_CHECK(coll_buf_register(c, &scr, s, coll_scratch_bytes(chunk, 4), MEM_CUDA) == 0);
	for (size_t k = 0; !bench_mode && k < ARRAY_SIZE(cases); k++) {
		uint64_t bad = 0, first = 0;
		int rc;

		TP_CHECK(gpu_fill(d, cases[k].count, 0, cases[k].dt, 5 + k, r->rank, 2, gc->comm) ==
			 0);
		TP_CHECK(gpu_stream_sync(gc->comm, TMO_MS) == 0);
		rc = coll_allreduce(c, &buf, 0, &scr, cases[k].count, cases[k].dt, cases[k].op,
				    ALGO_RING, chunk, 4, NULL);
		for (int i = 0; i < 4; i++)
			TP_CHECK(gpu_stream_sync(gm.s[i], TMO_MS) == 0);
		TP_CHECK(rc == 0);
		TP_CHECK(gpu_verify(d, cases[k].count, 0, cases[k].dt, cases[k].op, 5 + k, 2, gc->comm,
				    TMO_MS, &bad, &first) == 0);
		printf("rank %d allreduce cudaipc %s %s count=%llu: %s (%llu wrong)\n", r->rank,
		       dtype_name(cases[k].dt), redop_name(cases[k].op),
		       (unsigned long long)cases[k].count, bad ? "FAIL" : "ok",
		       (unsigned long long)bad);
		fails += bad != 0;
	}
	for (uint64_t bytes = 1u << 20; bench_mode && bytes <= cap; bytes *= 4) {
		int it = iters_for(bytes) / 4 + 2;
		double t0, t;

		TP_CHECK(coll_allreduce(c, &buf, 0, &scr, bytes / 4, DT_F32, REDOP_SUM, ALGO_RING,
					chunk, 4, NULL) == 0);
		TP_CHECK(tpt_barrier(r) == 0);
		t0 = now_s();
		for (int i = 0; i < it; i++)
			TP_CHECK(coll_allreduce(c, &buf, 0, &scr, bytes / 4, DT_F32, REDOP_SUM,
						ALGO_RING, chunk, 4, NULL) == 0);
		for (int i = 0; i < 4; i++)
			TP_CHECK(gpu_stream_sync(gm.s[i], TMO_MS) == 0);
		t = (now_s() - t0) / it;
		if (r->rank == 0)
			printf("allreduce cudaipc f32 %5llu MiB: %8.3f ms, algbw %6.1f GB/s, busbw "
			       "%6.1f GB/s\n",
			       (unsigned long long)(bytes >> 20), t * 1e3, bytes / t / 1e9,
			       bytes / t / 1e9 * coll_busbw_factor(COLL_OP_ALLREDUCE, 2));
	}
	fflush(stdout);
	coll_buf_deregister(c, &buf);
	coll_buf_deregister(c, &scr);
	coll_comm_destroy(c);
	gpu_free(d);
	gpu_free(s);
	gpu_close(gc);
	return tpt_barrier(r) == 0 && !fails ? 0 : 1;
}

/* The NCCL reference; rank 0's id travels in its endpoint-sized record. */
static int tpt_bcast(void *ctx, void *buf, size_t len)
{
	struct tpt_rank *r = ctx;
	static char mine[TRANSPORT_EP_MAX], all[TPT_MAX_RANKS * TRANSPORT_EP_MAX];

	if (len > TRANSPORT_EP_MAX)
		return -EINVAL;
	memcpy(mine, buf, len);
	if (tpt_allgather(r, mine, all))
		return -EIO;
	memcpy(buf, all, len);
	return 0;
}

static int body_nccl(struct tpt_rank *r, void *arg)
{
	const uint64_t cap = 1ull << 30;
	struct gpu_opts go = {.device = "auto"};
	struct nccl_ref *n;
	struct gpu_ctx *gc;
	uint64_t bad = 0, first = 0;
	void *d;
	int rc;

	(void)arg;
	TP_CHECK(gpu_open(&go, r->rank, &gc) == 0);
	rc = nccl_ref_open(r->rank, r->nranks, r->rank, tpt_bcast, r, &n);
	if (rc) {
		printf("rank %d nccl %d ranks: open failed (%s)\n", r->rank, r->nranks,
		       strerror(-rc));
		fflush(stdout);
		gpu_close(gc);
		return 3;
	}
	TP_CHECK((d = gpu_alloc(cap)) != NULL);
	TP_CHECK(gpu_fill(d, 1000003, 0, DT_F32, 9, r->rank, r->nranks, gc->comm) == 0);
	TP_CHECK(nccl_ref_allreduce(n, d, 1000003, DT_F32, REDOP_SUM, gc->comm) == 0);
	TP_CHECK(gpu_verify(d, 1000003, 0, DT_F32, REDOP_SUM, 9, r->nranks, gc->comm, TMO_MS, &bad,
			    &first) == 0);
	printf("rank %d nccl %s %d ranks allreduce f32 sum: %s (%llu wrong)\n", r->rank,
	       nccl_ref_version(n), r->nranks, bad ? "FAIL" : "ok", (unsigned long long)bad);
	for (uint64_t bytes = 1u << 20; bench_mode && bytes <= cap; bytes *= 4) {
		int it = iters_for(bytes) / 2 + 2;
		double t0, t;

		TP_CHECK(nccl_ref_allreduce(n, d, bytes / 4, DT_F32, REDOP_SUM, gc->comm) == 0);
		TP_CHECK(gpu_stream_sync(gc->comm, TMO_MS) == 0);
		TP_CHECK(tpt_barrier(r) == 0);
		t0 = now_s();
		for (int i = 0; i < it; i++)
			TP_CHECK(nccl_ref_allreduce(n, d, bytes / 4, DT_F32, REDOP_SUM, gc->comm) ==
				 0);
		TP_CHECK(gpu_stream_sync(gc->comm, TMO_MS) == 0);
		t = (now_s() - t0) / it;
		if (r->rank == 0)
			printf("allreduce nccl %d ranks f32 %5llu MiB: %8.3f ms, algbw %6.1f GB/s, "
			       "busbw %6.1f GB/s\n",
			       r->nranks, (unsigned long long)(bytes >> 20), t * 1e3,
			       bytes / t / 1e9,
			       bytes / t / 1e9 * coll_busbw_factor(COLL_OP_ALLREDUCE, r->nranks));
	}
	fflush(stdout);
	nccl_ref_close(n);
	gpu_free(d);
	gpu_close(gc);
	return tpt_barrier(r) == 0 && !bad ? 0 : 1;
}

/* One process: cudaMemcpyAsync device to device, the ceiling cudaipc is compared with. */
static int bench_d2d(void)
{
	struct gpu_opts go = {.device = "auto"};
	struct gpu_ctx *gc;
	char *a, *b;

	if (gpu_open(&go, 0, &gc))
		return 1;
	a = gpu_alloc(1u << 30);
	b = gpu_alloc(1u << 30);
	if (!a || !b)
		return 1;
	for (size_t bytes = 1u << 20; bytes <= (1u << 30); bytes *= 4) {
		int it = iters_for(bytes);
		double t0;

		gpu_memcpy_async(b, a, bytes, GPU_COPY_D2D, gc->comm);
		gpu_stream_sync(gc->comm, TMO_MS);
		t0 = now_s();
		for (int i = 0; i < it; i++)
			gpu_memcpy_async(b, a, bytes, GPU_COPY_D2D, gc->comm);
		gpu_stream_sync(gc->comm, TMO_MS);
		printf("cudaMemcpy D2D %5zu MiB: %7.1f GB/s (one process)\n", bytes >> 20,
		       bytes * (double)it / (now_s() - t0) / 1e9);
	}
	fflush(stdout);
	gpu_free(a);
	gpu_free(b);
	gpu_close(gc);
	return 0;
}

static int run2(const struct transport_ops *ops, int nranks, tpt_body body, const char *what)
{
	struct transport_opts o = {.kind = TP_CUDAIPC};
	int st[TPT_MAX_RANKS], worst = 0;

	tpt_run(ops, nranks, &o, TMO_MS, body, NULL, st);
	for (int i = 0; i < nranks; i++) {
		int code = WIFEXITED(st[i]) ? WEXITSTATUS(st[i]) : 128 + WTERMSIG(st[i]);

		worst = code > worst ? code : worst;
	}
	printf("== %s: %s\n", what, worst == 0 ? "PASS" : worst == 3 ? "NOT RUN" : "FAIL");
	fflush(stdout);
	return worst;
}

/* NCCL's ranks need no transport: a do-nothing one carries only the tpt harness. */
static int null_open(struct transport *t, const struct transport_env *env)
{
	t->env = env;
	return 0;
}

static int null_endpoint(struct transport *t, void *buf, size_t *len)
{
	(void)t;
	(void)buf;
	*len = 0;
	return 0;
}

static int null_connect(struct transport *t, const void *eps)
{
	(void)t;
	(void)eps;
	return 0;
}

int main(int argc, char **argv)
{
	struct transport_ops null_ops = {
	    .name = "none", .open = null_open, .endpoint = null_endpoint, .connect = null_connect};
	int fails = 0, rc, ngpus;
	void *lib;

	bench_mode = argc > 1 && !strcmp(argv[1], "bench");
	/* no CUDA in the parent before fork (gpu.h): probe in a child */
	if (fork() == 0) {
		int n = 0;

		_exit(gpu_available() && !gpu_device_count(&n) && n > 0 ? (n > 50 ? 50 : n) : 77);
	}
	wait(&rc);
	if (!WIFEXITED(rc) || WEXITSTATUS(rc) == 77) {
		printf("skip: no usable GPU here\n");
		return 77;
	}
	ngpus = WEXITSTATUS(rc);
	printf("%d GPU(s): 2 ranks %s\n", ngpus, ngpus > 1 ? "on two GPUs" : "share GPU 0");
	transport_ops_complete(&null_ops, &null_ops);
	if (bench_mode && fork() == 0)
		_exit(bench_d2d());
	if (bench_mode)
		wait(&rc);
	fails += run2(&cudaipc_ops, 2, body_p2p, "cudaipc p2p, 2 ranks") != 0;
	fails += run2(&cudaipc_ops, 2, body_allreduce, "allreduce over cudaipc, 2 ranks") != 0;
	lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		printf("== nccl: NOT RUN (no libnccl.so.2: %s)\n", dlerror());
	} else {
		dlclose(lib);
		fails += run2(&null_ops, 1, body_nccl, "nccl 1 rank") != 0;
		/* NCCL refuses two ranks on one GPU ("invalid usage"): shown once in check
		 * mode; on two GPUs this must pass */
		if (ngpus > 1 || !bench_mode) {
			rc = run2(&null_ops, 2, body_nccl, "nccl 2 ranks");
			fails += rc != 0 && (rc != 3 || ngpus > 1);
		}
	}
	printf("%s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
