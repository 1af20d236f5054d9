/*
 * Experiment (not a test): the staged D2H + H2D pipeline (device buffer -> pinned slots ->
 * device buffer, 1 MiB pieces) in the variants not tried before (tests/gpu/RESULTS.md),
 * each against one pinned cudaMemcpyAsync of the same 1 GiB in the same call:
 *   - ceilings: one 1 GiB copy each way alone; both at once on two streams (what any
 *     pipeline that moves every byte both ways can reach); 1 MiB pieces back to back one
 *     way, and both ways at once with no dependency between the directions;
 *   - the pipeline: slots from cudaHostAlloc, cudaHostAlloc write-combined, or malloc +
 *     cudaHostRegister; 8..32 slots; an event per piece or per batch of pieces; batches
 *     issued with cudaMemcpyBatchAsync; the H2D stream at high priority; the whole
 *     pipeline captured once into a CUDA graph and replayed.
 *   - `staged_sweep thp`: host memory on 2 MiB pages (transparent huge pages, madvise, then
 *     cudaHostRegister) for the ceilings and the batched pipeline beside cudaHostAlloc's:
 *     whether the loss with both directions at once is the IOMMU's page walks (one
 *     translation per 4 KiB page) rather than the link.
 * Timed with CUDA events, median of 5 after a warm-up; every pipeline's output compared
 * with its input on the GPU. Prints "variant GB/s ratio" lines, a table last.
 *   nvcc -O3 -std=c++17 -arch=sm_90 tests/gpu/staged_sweep.cu -o staged_sweep
 */
#include <cuda_runtime.h>

#include <stdint.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "huge_pages.h"
#include "sweep_check.h"

static const size_t TOTAL = 1ull << 30, PIECE = 1ull << 20;
static const int NPIECES = (int)(TOTAL / PIECE), REPS = 5, MAX_SLOTS = 64;

enum ring_kind { RING_HOSTALLOC, RING_WC, RING_REGISTER, RING_THP };
static const char *const ring_names[] = { "hostalloc", "hostalloc-wc", "register", "thp" };

__global__ void fill(uint32_t *p, size_t n, uint32_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = (uint32_t)(i * 2654435761u) ^ seed;
}

__global__ void differ(const uint4 *a, const uint4 *b, size_t n, unsigned long long *bad)
{
	unsigned long long mine = 0;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint4 x = a[i], y = b[i];
		mine += x.x != y.x || x.y != y.y || x.z != y.z || x.w != y.w;
	}
	if (mine)
		atomicAdd(bad, mine);
}

struct ctx {
	char *src, *dst;      /* device, TOTAL */
	char *pa, *pb;	      /* pinned, TOTAL: the plain copies' host ends */
	cudaStream_t s[4];    /* s[0] D2H (and timing), s[1] H2D, s[2..3] spares */
	cudaStream_t hi;      /* H2D at the highest priority */
	cudaEvent_t t0, t1;
	cudaEvent_t filled[MAX_SLOTS], drained[MAX_SLOTS];
	unsigned long long *bad;
};

struct result {
	char name[96];
	double gbs;
};
static std::vector<result> results;
static double base_gbs;

static double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

/* Time fn() REPS times (after one warm-up) between events on s[0]; GB/s of TOTAL. */
template <typename F> static double timed(ctx &c, F fn)
{
	std::vector<double> ms;

	fn();
	CK(cudaStreamSynchronize(c.s[0]));
	for (int r = 0; r < REPS; r++) {
		float m;

		CK(cudaEventRecord(c.t0, c.s[0]));
		fn();
		CK(cudaEventRecord(c.t1, c.s[0]));
		CK(cudaEventSynchronize(c.t1));
		CK(cudaEventElapsedTime(&m, c.t0, c.t1));
		ms.push_back(m);
	}
	return TOTAL / (median(ms) * 1e-3) / 1e9;
}

static void report(const char *name, double gbs)
{
	result r;

	snprintf(r.name, sizeof(r.name), "%s", name);
	r.gbs = gbs;
	results.push_back(r);
	printf("%-60s %7.1f GB/s %5.2fx\n", name, gbs, base_gbs > 0 ? gbs / base_gbs : 1.0);
	fflush(stdout);
}

/* dst == src after a pipeline; poison dst first so an unwritten piece shows. */
static void check(ctx &c, const char *name)
{
	unsigned long long bad = 0;

	CK(cudaDeviceSynchronize());
	CK(cudaMemset(c.bad, 0, sizeof(*c.bad)));
	differ<<<1024, 256>>>((const uint4 *)c.src, (const uint4 *)c.dst, TOTAL / 16, c.bad);
	CK(cudaGetLastError());
	CK(cudaMemcpy(&bad, c.bad, sizeof(bad), cudaMemcpyDeviceToHost));
	if (bad) {
		fprintf(stderr, "%s: %llu wrong 16-byte words\n", name, bad);
		exit(1);
	}
	CK(cudaMemset(c.dst, 0xa5, TOTAL));
}

static void wait_both(ctx &c, cudaStream_t other)
{
	cudaEvent_t e;

	CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
	CK(cudaEventRecord(e, other));
	CK(cudaStreamWaitEvent(c.s[0], e, 0));
	CK(cudaEventDestroy(e));
}

/*
 * The pipeline: piece i goes D2H into slot i % slots on s[0], then H2D out of it on h2d.
 * Hand-overs every `batch` pieces: the H2D side waits for the batch's filled event, the
 * D2H side for the drained event of the batch that last used those slots. use_batch:
 * each side's batch is one cudaMemcpyBatchAsync instead of `batch` cudaMemcpyAsync.
 */
static void pipeline(ctx &c, char *ring, int slots, int batch, bool use_batch, cudaStream_t h2d)
{
	int ngroups = slots / batch;
	void *dsts[MAX_SLOTS];
	const void *srcs[MAX_SLOTS];
	size_t sizes[MAX_SLOTS], idx = 0;
	cudaMemcpyAttributes attr = {};

	attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
	for (int g0 = 0, g = 0; g0 < NPIECES; g0 += batch, g++) {
		int gs = g % ngroups;

		if (g >= ngroups)
			CK(cudaStreamWaitEvent(c.s[0], c.drained[gs], 0));
		for (int k = 0; k < batch; k++) {
			int i = g0 + k;

			dsts[k] = ring + (size_t)(i % slots) * PIECE;
			srcs[k] = c.src + (size_t)i * PIECE;
			sizes[k] = PIECE;
			if (!use_batch)
				CK(cudaMemcpyAsync(dsts[k], srcs[k], PIECE, cudaMemcpyDeviceToHost,
						   c.s[0]));
		}
		if (use_batch)
			CK(cudaMemcpyBatchAsync(dsts, srcs, sizes, (size_t)batch, &attr, &idx, 1,
						c.s[0]));
		CK(cudaEventRecord(c.filled[gs], c.s[0]));
		CK(cudaStreamWaitEvent(h2d, c.filled[gs], 0));
		for (int k = 0; k < batch; k++) {
			int i = g0 + k;

			dsts[k] = c.dst + (size_t)i * PIECE;
			srcs[k] = ring + (size_t)(i % slots) * PIECE;
			if (!use_batch)
				CK(cudaMemcpyAsync(dsts[k], srcs[k], PIECE, cudaMemcpyHostToDevice,
						   h2d));
		}
		if (use_batch)
			CK(cudaMemcpyBatchAsync(dsts, srcs, sizes, (size_t)batch, &attr, &idx, 1,
						h2d));
		CK(cudaEventRecord(c.drained[gs], h2d));
	}
	CK(cudaStreamWaitEvent(c.s[0], c.drained[((NPIECES - 1) / batch) % ngroups], 0));
}

static char *ring_alloc(ring_kind k, size_t bytes)
{
	void *p = nullptr;

	if (k == RING_REGISTER || k == RING_THP) {
		p = huge_alloc(bytes, k == RING_THP);
		if (!p)
			exit(1);
		CK(cudaHostRegister(p, bytes, cudaHostRegisterDefault));
	} else {
		CK(cudaHostAlloc(&p, bytes,
				 k == RING_WC ? cudaHostAllocWriteCombined : cudaHostAllocDefault));
		memset(p, 0, bytes);
	}
	return (char *)p;
}

static void ring_free(ring_kind k, char *p)
{
	if (k == RING_REGISTER || k == RING_THP) {
		CK(cudaHostUnregister(p));
		free(p);
	} else {
		CK(cudaFreeHost(p));
	}
}

static void run_pipeline(ctx &c, ring_kind rk, int slots, int batch, bool use_batch, bool hi)
{
	char name[96], *ring = ring_alloc(rk, (size_t)slots * PIECE);
	cudaStream_t h2d = hi ? c.hi : c.s[1];
	double gbs;

	gbs = timed(c, [&] { pipeline(c, ring, slots, batch, use_batch, h2d); });
	snprintf(name, sizeof(name), "staged %s x%d, hand-over per %d%s%s", ring_names[rk], slots,
		 batch, use_batch ? ", cudaMemcpyBatchAsync" : "", hi ? ", H2D high prio" : "");
	check(c, name);
	report(name, gbs);
	ring_free(rk, ring);
}

/* The per-piece pipeline captured once into a graph (s[0] forks s[1]), then replayed. */
static void run_graph(ctx &c, int slots)
{
	char name[96], *ring = ring_alloc(RING_HOSTALLOC, (size_t)slots * PIECE);
	cudaGraph_t g;
	cudaGraphExec_t ge;
	cudaEvent_t fork;
	double gbs;

	CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
	CK(cudaStreamBeginCapture(c.s[0], cudaStreamCaptureModeThreadLocal));
	CK(cudaEventRecord(fork, c.s[0]));
	CK(cudaStreamWaitEvent(c.s[1], fork, 0));
	pipeline(c, ring, slots, 1, false, c.s[1]);
	CK(cudaStreamEndCapture(c.s[0], &g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	CK(cudaGraphUpload(ge, c.s[0]));
	gbs = timed(c, [&] { CK(cudaGraphLaunch(ge, c.s[0])); });
	snprintf(name, sizeof(name), "staged hostalloc x%d, per piece, one CUDA graph", slots);
	check(c, name);
	report(name, gbs);
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
	CK(cudaEventDestroy(fork));
	ring_free(RING_HOSTALLOC, ring);
}

int main(int argc, char **argv)
{
	bool thp = argc > 1 && !strcmp(argv[1], "thp");
	ctx c;
	cudaDeviceProp p;
	int lo, hi;

	CK(cudaGetDeviceProperties(&p, 0));
	printf("GPU: %s, %d copy engines (asyncEngineCount), PCIe %x:%x\n", p.name,
	       p.asyncEngineCount, p.pciBusID, p.pciDeviceID);
	CK(cudaMalloc(&c.src, TOTAL));
	CK(cudaMalloc(&c.dst, TOTAL));
	CK(cudaMalloc(&c.bad, sizeof(*c.bad)));
	printf("AnonHugePages before: %ld kB\n", anon_huge_kib());
	c.pa = ring_alloc(thp ? RING_THP : RING_HOSTALLOC, TOTAL);
	c.pb = ring_alloc(thp ? RING_THP : RING_HOSTALLOC, TOTAL);
	printf("host ends of the plain copies: %s; AnonHugePages now: %ld kB\n",
	       thp ? "thp" : "hostalloc", anon_huge_kib());
	for (int i = 0; i < 4; i++)
		CK(cudaStreamCreateWithFlags(&c.s[i], cudaStreamNonBlocking));
	CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
	CK(cudaStreamCreateWithPriority(&c.hi, cudaStreamNonBlocking, hi));
	CK(cudaEventCreate(&c.t0));
	CK(cudaEventCreate(&c.t1));
	for (int i = 0; i < MAX_SLOTS; i++) {
		CK(cudaEventCreateWithFlags(&c.filled[i], cudaEventDisableTiming));
		CK(cudaEventCreateWithFlags(&c.drained[i], cudaEventDisableTiming));
	}
	fill<<<1024, 256>>>((uint32_t *)c.src, TOTAL / 4, 0x5eed);
	CK(cudaGetLastError());
	CK(cudaMemset(c.dst, 0xa5, TOTAL));
	CK(cudaDeviceSynchronize());

	/* ceilings */
	base_gbs = timed(c, [&] {
		CK(cudaMemcpyAsync(c.pa, c.src, TOTAL, cudaMemcpyDeviceToHost, c.s[0]));
	});
	report("pinned D2H 1 GiB, one cudaMemcpyAsync (the baseline)", base_gbs);
	report("pinned H2D 1 GiB, one cudaMemcpyAsync", timed(c, [&] {
		       CK(cudaMemcpyAsync(c.dst, c.pb, TOTAL, cudaMemcpyHostToDevice, c.s[0]));
	       }));
	report("pinned D2H + H2D 1 GiB at once, two streams (per direction)", timed(c, [&] {
		       cudaEvent_t e;
		       CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
		       CK(cudaEventRecord(e, c.s[0]));
		       CK(cudaStreamWaitEvent(c.s[1], e, 0));
		       CK(cudaMemcpyAsync(c.dst, c.pb, TOTAL, cudaMemcpyHostToDevice, c.s[1]));
		       CK(cudaMemcpyAsync(c.pa, c.src, TOTAL, cudaMemcpyDeviceToHost, c.s[0]));
		       wait_both(c, c.s[1]);
		       CK(cudaEventDestroy(e));
	       }));
	report("1 MiB D2H pieces back to back, one way", timed(c, [&] {
		       for (int i = 0; i < NPIECES; i++)
			       CK(cudaMemcpyAsync(c.pa + (size_t)i * PIECE, c.src + (size_t)i * PIECE,
						  PIECE, cudaMemcpyDeviceToHost, c.s[0]));
	       }));
	report("1 MiB pieces both ways at once, no dependency (per direction)", timed(c, [&] {
		       cudaEvent_t e;
		       CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
		       CK(cudaEventRecord(e, c.s[0]));
		       CK(cudaStreamWaitEvent(c.s[1], e, 0));
		       for (int i = 0; i < NPIECES; i++) {
			       CK(cudaMemcpyAsync(c.pa + (size_t)i * PIECE, c.src + (size_t)i * PIECE,
						  PIECE, cudaMemcpyDeviceToHost, c.s[0]));
			       CK(cudaMemcpyAsync(c.dst + (size_t)i * PIECE, c.pb + (size_t)i * PIECE,
						  PIECE, cudaMemcpyHostToDevice, c.s[1]));
		       }
		       wait_both(c, c.s[1]);
		       CK(cudaEventDestroy(e));
	       }));

	/* the pipeline */
	if (thp) {
		for (int k = 0; k < 2; k++) {
			run_pipeline(c, RING_THP, 8, 1, false, false);
			run_pipeline(c, RING_HOSTALLOC, 8, 1, false, false);
			run_pipeline(c, RING_THP, 32, 8, true, false);
			run_pipeline(c, RING_HOSTALLOC, 32, 8, true, false);
			run_pipeline(c, RING_THP, 64, 16, true, false);
		}
		goto table;
	}
	run_pipeline(c, RING_HOSTALLOC, 8, 1, false, false); /* today's gpu_bench shape */
	run_pipeline(c, RING_HOSTALLOC, 16, 1, false, false);
	run_pipeline(c, RING_HOSTALLOC, 32, 1, false, false);
	run_pipeline(c, RING_WC, 16, 1, false, false);
	run_pipeline(c, RING_REGISTER, 16, 1, false, false);
	run_pipeline(c, RING_HOSTALLOC, 16, 1, false, true);
	run_pipeline(c, RING_HOSTALLOC, 16, 4, false, false);
	run_pipeline(c, RING_HOSTALLOC, 16, 4, true, false);
	run_pipeline(c, RING_HOSTALLOC, 32, 8, true, false);
	run_pipeline(c, RING_HOSTALLOC, 64, 16, true, false);
	run_pipeline(c, RING_WC, 32, 8, true, true);
	run_graph(c, 16);
	run_graph(c, 32);

table:
	printf("\n%-60s %9s %6s\n", "variant (1 GiB, 1 MiB pieces)", "GB/s", "ratio");
	for (const result &r : results)
		printf("%-60s %9.1f %5.2fx\n", r.name, r.gbs, r.gbs / base_gbs);
	return 0;
}
