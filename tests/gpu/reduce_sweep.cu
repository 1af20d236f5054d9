/*
 * Experiment (not a test): variants of the reduce kernel's launch shape (threads, blocks
 * per SM, unroll, cache hints) and of the staged D2H+H2D pipeline (streams per direction,
 * slots), each timed with CUDA events, median of 7, so one device call picks the shapes
 * kernels/reduce.cu and gpu_bench.c use. torch.add runs beside it in the same call
 * (tests/gpu/torch_add.py). Every variant's output is checked bit for bit against the
 * first one. Prints "variant value" lines; the best per group last.
 *   nvcc -O3 -std=c++17 -arch=sm_90 tests/gpu/reduce_sweep.cu -o reduce_sweep
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <stdint.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sweep_check.h"

enum { LD_CS = 0, LD_DEF = 1, LD_NC = 2 };
enum { ST_CS = 0, ST_DEF = 1 };

template <int LD> static __device__ __forceinline__ uint4 ld(const uint4 *p)
{
	if (LD == LD_CS)
		return __ldcs(p);
	if (LD == LD_NC)
		return __ldg(p);
	return *p;
}

template <int ST> static __device__ __forceinline__ void st(uint4 *p, uint4 v)
{
	if (ST == ST_CS)
		__stcs(p, v);
	else
		*p = v;
}

template <typename T> static __device__ __forceinline__ uint4 add(uint4 x, uint4 y);

template <> __device__ __forceinline__ uint4 add<float>(uint4 x, uint4 y)
{
	uint4 r;
	r.x = __float_as_uint(__fadd_rn(__uint_as_float(x.x), __uint_as_float(y.x)));
	r.y = __float_as_uint(__fadd_rn(__uint_as_float(x.y), __uint_as_float(y.y)));
	r.z = __float_as_uint(__fadd_rn(__uint_as_float(x.z), __uint_as_float(y.z)));
	r.w = __float_as_uint(__fadd_rn(__uint_as_float(x.w), __uint_as_float(y.w)));
	return r;
}

template <> __device__ __forceinline__ uint4 add<__nv_bfloat16>(uint4 x, uint4 y)
{
	union {
		uint4 v;
		__nv_bfloat16 e[8];
	} a, b;
	a.v = x;
	b.v = y;
#pragma unroll
	for (int k = 0; k < 8; k++)
		a.e[k] = __float2bfloat16_rn(
			__fadd_rn(__bfloat162float(a.e[k]), __bfloat162float(b.e[k])));
	return a.v;
}

/* grid-stride, UNROLL independent vectors per thread per pass (the shape reduce.cu uses) */
template <typename T, int UNROLL, int LD, int ST>
__global__ void k_red(uint4 *d, const uint4 *a, const uint4 *b, size_t nvec)
{
	size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t i;

	for (i = tid; i + (UNROLL - 1) * stride < nvec; i += UNROLL * stride) {
		uint4 x[UNROLL], y[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			x[u] = ld<LD>(a + i + u * stride);
			y[u] = ld<LD>(b + i + u * stride);
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			st<ST>(d + i + u * stride, add<T>(x[u], y[u]));
	}
	for (; i < nvec; i += stride)
		st<ST>(d + i, add<T>(ld<LD>(a + i), ld<LD>(b + i)));
}

static int sms;

__global__ void k_diff(const uint4 *x, const uint4 *y, size_t n, unsigned long long *nd)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		if (x[i].x != y[i].x || x[i].y != y[i].y || x[i].z != y[i].z || x[i].w != y[i].w)
			atomicAdd(nd, 1ull);
}

struct var {
	const char *name;
	void (*launch)(uint4 *, const uint4 *, const uint4 *, size_t, int, int);
};

/* blocks_per_sm 0: one pass (as many blocks as the data needs, no grid-stride loop) */
template <typename T, int UNROLL, int LD, int ST>
static void launch(uint4 *d, const uint4 *a, const uint4 *b, size_t nvec, int threads,
		   int blocks_per_sm)
{
	size_t blocks = blocks_per_sm ? (size_t)sms * blocks_per_sm
				      : (nvec + (size_t)threads * UNROLL - 1) / ((size_t)threads * UNROLL);
	k_red<T, UNROLL, LD, ST><<<(unsigned)blocks, threads>>>(d, a, b, nvec);
}

static float median(std::vector<float> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

template <typename T> static void sweep(const char *tname, size_t bytes)
{
	size_t nvec = bytes / 16;
	uint4 *a, *b, *d, *ref;
	unsigned long long *ndiff;
	cudaEvent_t e0, e1;
	std::vector<unsigned char> h(bytes);
	CK(cudaMalloc(&a, bytes));
	CK(cudaMalloc(&b, bytes));
	CK(cudaMalloc(&d, bytes));
	CK(cudaMalloc(&ref, bytes));
	CK(cudaMalloc(&ndiff, sizeof(*ndiff)));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	/* random-looking finite values: small integers times 2^-k in both types */
	for (size_t i = 0; i < bytes; i += sizeof(T)) {
		unsigned r = (unsigned)(i * 2654435761u >> 7);
		if (sizeof(T) == 4) {
			float f = (float)((int)(r % 2001) - 1000) / 64.0f;
			memcpy(&h[i], &f, 4);
		} else {
			__nv_bfloat16 f = __float2bfloat16((float)((int)(r % 201) - 100) / 8.0f);
			memcpy(&h[i], &f, 2);
		}
	}
	CK(cudaMemcpy(a, h.data(), bytes, cudaMemcpyHostToDevice));
	for (size_t i = 0; i + 2 * sizeof(T) <= bytes; i += sizeof(T))
		std::swap(h[i], h[bytes - 1 - i]);
	CK(cudaMemcpy(b, h.data(), bytes, cudaMemcpyHostToDevice));

	struct var vars[] = {
		{ "u4_cs_cs", launch<T, 4, LD_CS, ST_CS> },
		{ "u1_cs_cs", launch<T, 1, LD_CS, ST_CS> },
		{ "u2_cs_cs", launch<T, 2, LD_CS, ST_CS> },
		{ "u8_cs_cs", launch<T, 8, LD_CS, ST_CS> },
		{ "u4_def_def", launch<T, 4, LD_DEF, ST_DEF> },
		{ "u4_nc_cs", launch<T, 4, LD_NC, ST_CS> },
		{ "u4_cs_def", launch<T, 4, LD_CS, ST_DEF> },
		{ "u2_def_def", launch<T, 2, LD_DEF, ST_DEF> },
		{ "u2_nc_def", launch<T, 2, LD_NC, ST_DEF> },
		{ "u1_def_def", launch<T, 1, LD_DEF, ST_DEF> },
	};
	int shapes[][2] = { { 256, 8 }, { 256, 4 }, { 512, 4 }, { 128, 16 }, { 256, 16 },
			    { 256, 0 }, { 128, 0 }, { 512, 0 } };
	bool first = true;
	float best = 1e30f;
	char bestname[96] = "";

	for (auto &v : vars) {
		for (auto &s : shapes) {
			std::vector<float> t;
			CK(cudaMemset(d, 0xff, bytes));
			for (int w = 0; w < 2; w++)
				v.launch(d, a, b, nvec, s[0], s[1]);
			CK(cudaGetLastError());
			for (int r = 0; r < 7; r++) {
				float ms;
				CK(cudaEventRecord(e0));
				v.launch(d, a, b, nvec, s[0], s[1]);
				CK(cudaEventRecord(e1));
				CK(cudaEventSynchronize(e1));
				CK(cudaEventElapsedTime(&ms, e0, e1));
				t.push_back(ms);
			}
			CK(cudaGetLastError());
			if (first)
				CK(cudaMemcpy(ref, d, bytes, cudaMemcpyDeviceToDevice));
			else {
				CK(cudaMemset(ndiff, 0, sizeof(*ndiff)));
				k_diff<<<sms * 4, 256>>>(d, ref, nvec, ndiff);
				unsigned long long nd = 0;
				CK(cudaMemcpy(&nd, ndiff, sizeof(nd), cudaMemcpyDeviceToHost));
				if (nd)
					printf("MISMATCH %s t%d b%d: %llu vectors\n", v.name, s[0], s[1], nd);
			}
			first = false;
			float ms = median(t);
			double tbs = 3.0 * bytes / (ms * 1e-3) / 1e12;
			printf("reduce %s %zuMiB %s t%d bpsm%d %.3f TB/s\n", tname, bytes >> 20,
			       v.name, s[0], s[1], tbs);
			if (ms < best) {
				best = ms;
				snprintf(bestname, sizeof(bestname), "%s t%d bpsm%d", v.name, s[0], s[1]);
			}
		}
	}
	printf("BEST reduce %s %zuMiB %s %.3f TB/s\n", tname, bytes >> 20, bestname,
	       3.0 * bytes / (best * 1e-3) / 1e12);
	/* the D2D copy ceiling: read + write */
	{
		std::vector<float> t;
		for (int r = 0; r < 7; r++) {
			float ms;
			CK(cudaEventRecord(e0));
			CK(cudaMemcpyAsync(d, a, bytes, cudaMemcpyDeviceToDevice));
			CK(cudaEventRecord(e1));
			CK(cudaEventSynchronize(e1));
			CK(cudaEventElapsedTime(&ms, e0, e1));
			t.push_back(ms);
		}
		printf("BEST d2dcopy %zuMiB %.3f TB/s\n", bytes >> 20,
		       2.0 * bytes / (median(t) * 1e-3) / 1e12);
	}
	cudaFree(a);
	cudaFree(b);
	cudaFree(d);
	cudaFree(ref);
	cudaFree(ndiff);
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
}

/* src -> pinned ring of `slots` chunks -> dst; D2H piece i on stream d2h[i % ns], H2D on h2d[i % ns] */
static float staged(char *dst, const char *src, char *ring, size_t bytes, size_t chunk, int slots,
		    int ns, cudaStream_t *d2h, cudaStream_t *h2d, cudaEvent_t *filled,
		    cudaEvent_t *drained, cudaEvent_t e0, cudaEvent_t e1)
{
	size_t n = (bytes + chunk - 1) / chunk;
	float ms;

	CK(cudaEventRecord(e0, d2h[0]));
	for (int k = 1; k < ns; k++)
		CK(cudaStreamWaitEvent(d2h[k], e0, 0));
	for (size_t i = 0; i < n; i++) {
		int sl = (int)(i % slots), q = (int)(i % ns);
		size_t off = i * chunk, len = std::min(chunk, bytes - off);
		if (i >= (size_t)slots)
			CK(cudaStreamWaitEvent(d2h[q], drained[sl], 0));
		CK(cudaMemcpyAsync(ring + sl * chunk, src + off, len, cudaMemcpyDeviceToHost, d2h[q]));
		CK(cudaEventRecord(filled[sl], d2h[q]));
		CK(cudaStreamWaitEvent(h2d[q], filled[sl], 0));
		CK(cudaMemcpyAsync(dst + off, ring + sl * chunk, len, cudaMemcpyHostToDevice, h2d[q]));
		CK(cudaEventRecord(drained[sl], h2d[q]));
	}
	for (int k = 0; k < ns; k++) {
		cudaEvent_t e;
		CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
		CK(cudaEventRecord(e, h2d[k]));
		CK(cudaStreamWaitEvent(d2h[0], e, 0));
		CK(cudaEventDestroy(e));
	}
	CK(cudaEventRecord(e1, d2h[0]));
	CK(cudaEventSynchronize(e1));
	CK(cudaEventElapsedTime(&ms, e0, e1));
	return ms;
}

static void sweep_staged(size_t bytes)
{
	char *src, *dst, *pinned, *ring;
	cudaStream_t d2h[4], h2d[4];
	cudaEvent_t filled[64], drained[64], e0, e1;
	std::vector<float> t;
	size_t chunks[] = { 1 << 20, 2 << 20, 4 << 20 };
	int cfg[][2] = { { 8, 1 }, { 16, 1 }, { 8, 2 }, { 16, 2 }, { 32, 2 }, { 16, 4 }, { 32, 4 } };

	CK(cudaMalloc(&src, bytes));
	CK(cudaMalloc(&dst, bytes));
	CK(cudaMallocHost(&pinned, bytes));
	CK(cudaMallocHost(&ring, (size_t)64 << 20 << 2));
	CK(cudaMemset(src, 0x5a, bytes));
	for (int k = 0; k < 4; k++) {
		CK(cudaStreamCreateWithFlags(&d2h[k], cudaStreamNonBlocking));
		CK(cudaStreamCreateWithFlags(&h2d[k], cudaStreamNonBlocking));
	}
	for (int k = 0; k < 64; k++) {
		CK(cudaEventCreateWithFlags(&filled[k], cudaEventDisableTiming));
		CK(cudaEventCreateWithFlags(&drained[k], cudaEventDisableTiming));
	}
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	for (int r = 0; r < 5; r++) {
		float ms;
		CK(cudaEventRecord(e0, d2h[0]));
		CK(cudaMemcpyAsync(pinned, src, bytes, cudaMemcpyDeviceToHost, d2h[0]));
		CK(cudaEventRecord(e1, d2h[0]));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms, e0, e1));
		t.push_back(ms);
	}
	double pin = bytes / (median(t) * 1e-3) / 1e9;
	printf("BEST pinned_d2h %zuMiB %.2f GB/s\n", bytes >> 20, pin);
	t.clear();
	for (int r = 0; r < 5; r++) {
		float ms;
		CK(cudaEventRecord(e0, d2h[0]));
		CK(cudaMemcpyAsync(dst, pinned, bytes, cudaMemcpyHostToDevice, d2h[0]));
		CK(cudaEventRecord(e1, d2h[0]));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms, e0, e1));
		t.push_back(ms);
	}
	printf("BEST pinned_h2d %zuMiB %.2f GB/s\n", bytes >> 20, bytes / (median(t) * 1e-3) / 1e9);
	for (size_t chunk : chunks)
		for (auto &c : cfg) {
			t.clear();
			CK(cudaMemset(dst, 0, bytes));
			for (int r = 0; r < 5; r++)
				t.push_back(staged(dst, src, ring, bytes, chunk, c[0], c[1], d2h, h2d,
						   filled, drained, e0, e1));
			std::vector<unsigned char> x(1 << 20);
			CK(cudaMemcpy(x.data(), dst + bytes - (1 << 20), 1 << 20, cudaMemcpyDeviceToHost));
			bool ok = std::all_of(x.begin(), x.end(), [](unsigned char v) { return v == 0x5a; });
			double gbs = bytes / (median(t) * 1e-3) / 1e9;
			printf("staged chunk%zuKiB slots%d streams%d %.2f GB/s %.3fx pinned%s\n",
			       chunk >> 10, c[0], c[1], gbs, gbs / pin, ok ? "" : " WRONG");
		}
}


/* SM-driven copy (either side may be pinned host memory, reached through UVA) */
__global__ void k_copy(uint4 *d, const uint4 *s, size_t n)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		d[i] = s[i];
}

enum { CP_CE = 0, CP_SM = 1 };

static void copy(int how, int grid, void *d, const void *s, size_t len, cudaMemcpyKind k,
		 cudaStream_t st)
{
	if (how == CP_CE)
		CK(cudaMemcpyAsync(d, s, len, k, st));
	else
		k_copy<<<grid, 512, 0, st>>>((uint4 *)d, (const uint4 *)s, len / 16);
}

/* the staged pipeline with each direction's copies by the copy engine or by SMs, the
 * streams handing over `group` chunks per event */
static float staged2(char *dst, const char *src, char *ring, size_t bytes, size_t chunk, int slots,
		     int down, int up, int grid, int group, cudaStream_t d2h, cudaStream_t h2d,
		     cudaEvent_t *filled, cudaEvent_t *drained, cudaEvent_t e0, cudaEvent_t e1)
{
	size_t n = (bytes + chunk - 1) / chunk;
	int ng = slots / group;
	float ms;

	CK(cudaEventRecord(e0, d2h));
	for (size_t g0 = 0; g0 < n; g0 += group) {
		size_t g = g0 / group, end = std::min(n, g0 + group);
		int gs = (int)(g % ng);
		if (g >= (size_t)ng)
			CK(cudaStreamWaitEvent(d2h, drained[gs], 0));
		for (size_t i = g0; i < end; i++)
			copy(down, grid, ring + (i % slots) * chunk, src + i * chunk, chunk,
			     cudaMemcpyDeviceToHost, d2h);
		CK(cudaEventRecord(filled[gs], d2h));
		CK(cudaStreamWaitEvent(h2d, filled[gs], 0));
		for (size_t i = g0; i < end; i++)
			copy(up, grid, dst + i * chunk, ring + (i % slots) * chunk, chunk,
			     cudaMemcpyHostToDevice, h2d);
		CK(cudaEventRecord(drained[gs], h2d));
	}
	CK(cudaGetLastError());
	CK(cudaStreamWaitEvent(d2h, drained[((n - 1) / group) % ng], 0));
	CK(cudaEventRecord(e1, d2h));
	CK(cudaEventSynchronize(e1));
	CK(cudaEventElapsedTime(&ms, e0, e1));
	return ms;
}

static void sweep_staged2(size_t bytes)
{
	char *src, *dst, *ring;
	cudaStream_t d2h, h2d;
	cudaEvent_t filled[64], drained[64], e0, e1;
	unsigned long long *ndiff;
	int grids[] = { 16, 32, 64, 132 };

	CK(cudaMalloc(&src, bytes));
	CK(cudaMalloc(&dst, bytes));
	CK(cudaMalloc(&ndiff, sizeof(*ndiff)));
	CK(cudaMallocHost(&ring, (size_t)64 << 20));
	{
		std::vector<uint32_t> h(bytes / 4);
		for (size_t i = 0; i < h.size(); i++)
			h[i] = (uint32_t)(i * 2654435761u);
		CK(cudaMemcpy(src, h.data(), bytes, cudaMemcpyHostToDevice));
	}
	CK(cudaStreamCreateWithFlags(&d2h, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&h2d, cudaStreamNonBlocking));
	for (int k = 0; k < 64; k++) {
		CK(cudaEventCreateWithFlags(&filled[k], cudaEventDisableTiming));
		CK(cudaEventCreateWithFlags(&drained[k], cudaEventDisableTiming));
	}
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	/* back to back 1 MiB D2H copies, no events: the copy engine's own cost per copy */
	for (size_t chunk : { (size_t)1 << 20, (size_t)4 << 20 }) {
		std::vector<float> t;
		for (int r = 0; r < 5; r++) {
			float ms;
			CK(cudaEventRecord(e0, d2h));
			for (size_t off = 0; off < bytes; off += chunk)
				CK(cudaMemcpyAsync(ring + (off % (32 << 20)), src + off, chunk,
						   cudaMemcpyDeviceToHost, d2h));
			CK(cudaEventRecord(e1, d2h));
			CK(cudaEventSynchronize(e1));
			CK(cudaEventElapsedTime(&ms, e0, e1));
			t.push_back(ms);
		}
		printf("d2h_only chunk%zuKiB CE %.2f GB/s\n", chunk >> 10, bytes / (median(t) * 1e-3) / 1e9);
		for (int g : grids) {
			t.clear();
			for (int r = 0; r < 5; r++) {
				float ms;
				CK(cudaEventRecord(e0, d2h));
				for (size_t off = 0; off < bytes; off += chunk)
					copy(CP_SM, g, ring + (off % (32 << 20)), src + off, chunk,
					     cudaMemcpyDeviceToHost, d2h);
				CK(cudaEventRecord(e1, d2h));
				CK(cudaEventSynchronize(e1));
				CK(cudaEventElapsedTime(&ms, e0, e1));
				t.push_back(ms);
			}
			printf("d2h_only chunk%zuKiB SM grid%d %.2f GB/s\n", chunk >> 10, g,
			       bytes / (median(t) * 1e-3) / 1e9);
			t.clear();
			for (int r = 0; r < 5; r++) {
				float ms;
				CK(cudaEventRecord(e0, d2h));
				for (size_t off = 0; off < bytes; off += chunk)
					copy(CP_SM, g, dst + off, ring + (off % (32 << 20)), chunk,
					     cudaMemcpyHostToDevice, d2h);
				CK(cudaEventRecord(e1, d2h));
				CK(cudaEventSynchronize(e1));
				CK(cudaEventElapsedTime(&ms, e0, e1));
				t.push_back(ms);
			}
			printf("h2d_only chunk%zuKiB SM grid%d %.2f GB/s\n", chunk >> 10, g,
			       bytes / (median(t) * 1e-3) / 1e9);
		}
	}
	/* down by copy engine or SMs (32 blocks), up by the copy engine; slots x group */
	int sg[][2] = { { 8, 1 }, { 16, 2 }, { 16, 4 }, { 32, 4 }, { 32, 8 }, { 32, 16 } };
	for (int down : { CP_CE, CP_SM })
		for (auto &c : sg) {
			std::vector<float> t;
			CK(cudaMemset(dst, 0, bytes));
			for (int r = 0; r < 5; r++)
				t.push_back(staged2(dst, src, ring, bytes, 1 << 20, c[0], down, CP_CE, 32,
						    c[1], d2h, h2d, filled, drained, e0, e1));
			CK(cudaMemset(ndiff, 0, sizeof(*ndiff)));
			k_diff<<<sms * 4, 256>>>((const uint4 *)dst, (const uint4 *)src, bytes / 16,
						ndiff);
			unsigned long long nd = 0;
			CK(cudaMemcpy(&nd, ndiff, sizeof(nd), cudaMemcpyDeviceToHost));
			printf("staged2 chunk1024KiB slots%d group%d down%s upCE %.2f GB/s%s\n", c[0],
			       c[1], down ? "SM" : "CE", bytes / (median(t) * 1e-3) / 1e9,
			       nd ? " WRONG" : "");
		}
}

int main(int argc, char **argv)
{
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	printf("SMs %d\n", sms);
	bool red = argc < 2 || !strcmp(argv[1], "reduce");
	bool stg = argc < 2 || !strcmp(argv[1], "staged");
	if (red) {
		for (size_t mib : { 64, 256, 1024 }) {
			sweep<float>("f32", mib << 20);
			sweep<__nv_bfloat16>("bf16", mib << 20);
		}
	}
	if (stg)
		sweep_staged((size_t)1 << 30);
	if (argc > 1 && !strcmp(argv[1], "staged2"))
		sweep_staged2((size_t)1 << 30);
	return 0;
}
