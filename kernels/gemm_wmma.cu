/*
 * Our tensor-core GEMM for the synthetic backward pass: C = A * B, bf16 in, fp32
 * accumulate, bf16 out, all row-major (A m x k, B k x n). 128x128x32 block tiles,
 * 8 warps of 64x32 each (WMMA 16x16x16), a 4-stage cp.async shared-memory pipeline,
 * zero-filled edges (n and k multiples of 8), grouped block order for L2 reuse.
 * The simple reference kernel; gemm_mma.cu is the fast one.
 */
#include <mma.h>

#include "gemm_common.cuh"

extern "C" {
#include "gpu/kernels.h"
}

using namespace nvcuda;

#define BM 128
#define BN 128
#define BK 32
#define STAGES 4
#define THREADS 256
#define A_LD (BK + 8)                   /* padded rows: conflict-free, 32-byte aligned */
#define B_LD (BN + 8)
#define A_STAGE (BM * A_LD)             /* elements */
#define B_STAGE (BK * B_LD)
#define SMEM_BYTES (STAGES * (A_STAGE + B_STAGE) * 2)

static __device__ __forceinline__ void load_tile(bf16 *sa, bf16 *sb, const bf16 *a,
						 const bf16 *b, int m, int n, int k, int bm,
						 int bn, int k0)
{
	int tid = threadIdx.x;

#pragma unroll
	for (int i = 0; i < 2; i++) {
		int c = tid + i * THREADS;     /* A: 128 rows x 4 chunks of 8 */
		int row = c >> 2, col = (c & 3) * 8;
		int gr = bm + row, gk = k0 + col;
		bool ok = gr < m && gk < k;

		cp_async16(sa + row * A_LD + col, ok ? a + (size_t)gr * k + gk : a, ok);
	}
#pragma unroll
	for (int i = 0; i < 2; i++) {
		int c = tid + i * THREADS;     /* B: 32 rows x 16 chunks of 8 */
		int row = c >> 4, col = (c & 15) * 8;
		int gk = k0 + row, gn = bn + col;
		bool ok = gk < k && gn < n;

		cp_async16(sb + row * B_LD + col, ok ? b + (size_t)gk * n + gn : b, ok);
	}
}

__global__ void __launch_bounds__(THREADS, 2)
k_gemm_wmma(bf16 *c, const bf16 *a, const bf16 *b, int m, int n, int k)
{
	extern __shared__ __align__(128) unsigned char smem[];
	bf16 *sa = (bf16 *)smem;
	bf16 *sb = sa + STAGES * A_STAGE;
	int tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
	int tile_m, tile_n;

	gemm_block_tile(blockIdx.x, tiles_m, tiles_n, &tile_m, &tile_n);
	int bm = tile_m * BM, bn = tile_n * BN;
	int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	int wm = warp >> 2, wn = warp & 3;  /* 2 x 4 warps: 64 rows x 32 columns each */
	int ktiles = (k + BK - 1) / BK;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];

#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 2; j++)
			wmma::fill_fragment(acc[i][j], 0.0f);

#pragma unroll
	for (int s = 0; s < STAGES - 1; s++) {
		if (s < ktiles)
			load_tile(sa + s * A_STAGE, sb + s * B_STAGE, a, b, m, n, k, bm, bn,
				  s * BK);
		cp_async_commit();
	}

	for (int kt = 0; kt < ktiles; kt++) {
		/* tile kt has landed; every warp is done with the stage refilled below */
		cp_async_wait<STAGES - 2>();
		__syncthreads();
		int nk = kt + STAGES - 1;
		if (nk < ktiles)
			load_tile(sa + (nk % STAGES) * A_STAGE, sb + (nk % STAGES) * B_STAGE, a, b,
				  m, n, k, bm, bn, nk * BK);
		cp_async_commit();

		const bf16 *ta = sa + (kt % STAGES) * A_STAGE + (wm * 64) * A_LD;
		const bf16 *tb = sb + (kt % STAGES) * B_STAGE + wn * 32;
#pragma unroll
		for (int kk = 0; kk < BK; kk += 16) {
			wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> fa[4];
			wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major> fb[2];

#pragma unroll
			for (int i = 0; i < 4; i++)
				wmma::load_matrix_sync(fa[i], ta + i * 16 * A_LD + kk, A_LD);
#pragma unroll
			for (int j = 0; j < 2; j++)
				wmma::load_matrix_sync(fb[j], tb + kk * B_LD + j * 16, B_LD);
#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int j = 0; j < 2; j++)
					wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
		}
	}
	cp_async_wait<0>();
	__syncthreads();

	/* epilogue: each warp stages one 16x16 fp32 tile at a time, then 16-byte bf16 stores */
	float *scratch = (float *)smem + warp * 256;
	int r = lane >> 1, cc = (lane & 1) * 8;
#pragma unroll
	for (int i = 0; i < 4; i++) {
#pragma unroll
		for (int j = 0; j < 2; j++) {
			wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
			__syncwarp();
			int gr = bm + wm * 64 + i * 16 + r;
			int gc = bn + wn * 32 + j * 16 + cc;
			if (gr < m && gc < n) {
				__align__(16) bf16 out[8];
#pragma unroll
				for (int e = 0; e < 8; e++)
					out[e] = __float2bfloat16_rn(scratch[r * 16 + cc + e]);
				*(uint4 *)(c + (size_t)gr * n + gc) = *(const uint4 *)out;
			}
			__syncwarp();
		}
	}
}

extern "C" int gsk_gemm_bf16_wmma(void *c, const void *a, const void *b, int m, int n, int k,
			     void *stream)
{
	static int attr_set[64];
	long long tiles;
	cudaError_t e = gemm_grid(m, n, k, BM, BN, &tiles);

	if (e == cudaSuccess)
		e = gemm_smem_opt_in(k_gemm_wmma, SMEM_BYTES, attr_set);
	if (e != cudaSuccess)
		return (int)e;
	k_gemm_wmma<<<(unsigned int)tiles, THREADS, SMEM_BYTES, (cudaStream_t)stream>>>(
		(bf16 *)c, (const bf16 *)a, (const bf16 *)b, m, n, k);
	return (int)cudaGetLastError();
}
