/*
 * The fast GEMM: C = A * B, bf16 in, fp32 accumulate, bf16 out, row-major (A m x k,
 * B k x n). 128x128x32 block tiles, 4 warps of 64x64 each issuing mma.sync m16n8k16
 * on fragments read with ldmatrix (B transposed on the fly), a cp.async pipeline
 * (BK 32 x 4 stages, or BK 64 x 3 stages: the default, fastest on H200) in padded
 * (conflict-free) shared memory, zero-filled edges (n, k multiples of 8), grouped
 * block order for L2 reuse. gemm_wmma.cu's WMMA kernel is the simple reference.
 */
#include "gemm_common.cuh"

extern "C" {
#include "gpu/kernels.h"
}

#define BM 128
#define BN 128
#define THREADS 128
#define B_LD (BN + 8)                   /* 272-byte rows: ldmatrix phases hit 8 distinct banks */

/* Per BK: padded A rows (80 or 144 bytes, conflict-free too) and stage sizes in elements. */
template <int BK, int STAGES> struct tiling {
	static const int a_ld = BK + 8;
	static const int a_stage = BM * a_ld;
	static const int b_stage = BK * B_LD;
	static const int smem = STAGES * (a_stage + b_stage) * 2;
};

static __device__ __forceinline__ void ldsm_x4(unsigned int r[4], const bf16 *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(smem_addr(p)));
}

static __device__ __forceinline__ void ldsm_x4_t(unsigned int r[4], const bf16 *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(smem_addr(p)));
}

static __device__ __forceinline__ void mma16816(float c[4], const unsigned int a[4],
						const unsigned int b[2])
{
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
		     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <int BK>
static __device__ __forceinline__ void load_tile(bf16 *sa, bf16 *sb, const bf16 *a,
						 const bf16 *b, int m, int n, int k, int bm,
						 int bn, int k0)
{
	const int a_ld = BK + 8, cpr = BK / 8; /* 16-byte chunks per A row */
	int tid = threadIdx.x;

#pragma unroll
	for (int i = 0; i < BM * cpr / THREADS; i++) {
		int c = tid + i * THREADS;     /* A: 128 rows x BK/8 chunks of 8 */
		int row = c / cpr, col = (c % cpr) * 8;
		int gr = bm + row, gk = k0 + col;
		bool ok = gr < m && gk < k;

		cp_async16(sa + row * a_ld + col, ok ? a + (size_t)gr * k + gk : a, ok);
	}
#pragma unroll
	for (int i = 0; i < BK * 16 / THREADS; i++) {
		int c = tid + i * THREADS;     /* B: BK rows x 16 chunks of 8 */
		int row = c >> 4, col = (c & 15) * 8;
		int gk = k0 + row, gn = bn + col;
		bool ok = gk < k && gn < n;

		cp_async16(sb + row * B_LD + col, ok ? b + (size_t)gk * n + gn : b, ok);
	}
}

template <int BK, int STAGES>
__global__ void __launch_bounds__(THREADS, 2)
k_gemm_mma(bf16 *c, const bf16 *a, const bf16 *b, int m, int n, int k)
{
	typedef tiling<BK, STAGES> tl;
	const int A_LD = tl::a_ld, A_STAGE = tl::a_stage, B_STAGE = tl::b_stage;
	extern __shared__ __align__(128) unsigned char smem[];
	bf16 *sa = (bf16 *)smem;
	bf16 *sb = sa + STAGES * A_STAGE;
	int tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
	int tile_m, tile_n;

	gemm_block_tile(blockIdx.x, tiles_m, tiles_n, &tile_m, &tile_n);
	int bm = tile_m * BM, bn = tile_n * BN;
	int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	int wm = warp >> 1, wn = warp & 1;  /* 2 x 2 warps of 64 x 64 */
	int ktiles = (k + BK - 1) / BK;
	/* ldmatrix row addresses: lanes 0-15 rows 0-15 at column 0, lanes 16-31 at column 8 */
	int lrow = lane & 15, lcol = (lane >> 4) * 8;
	float acc[4][8][4];

#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 8; j++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				acc[i][j][e] = 0.0f;

#pragma unroll
	for (int s = 0; s < STAGES - 1; s++) {
		if (s < ktiles)
			load_tile<BK>(sa + s * A_STAGE, sb + s * B_STAGE, a, b, m, n, k, bm, bn,
				      s * BK);
		cp_async_commit();
	}

	for (int kt = 0; kt < ktiles; kt++) {
		/* tile kt has landed; every warp is done with the stage refilled below */
		cp_async_wait<STAGES - 2>();
		__syncthreads();
		int nk = kt + STAGES - 1;
		if (nk < ktiles)
			load_tile<BK>(sa + (nk % STAGES) * A_STAGE, sb + (nk % STAGES) * B_STAGE, a,
				      b, m, n, k, bm, bn, nk * BK);
		cp_async_commit();

		const bf16 *ta = sa + (kt % STAGES) * A_STAGE + (wm * 64 + lrow) * A_LD + lcol;
		const bf16 *tb = sb + (kt % STAGES) * B_STAGE + lrow * B_LD + wn * 64 + lcol;
#pragma unroll
		for (int kk = 0; kk < BK; kk += 16) {
			unsigned int fa[4][4], fb[8][2];

#pragma unroll
			for (int i = 0; i < 4; i++)
				ldsm_x4(fa[i], ta + i * 16 * A_LD + kk);
#pragma unroll
			for (int jj = 0; jj < 4; jj++) {
				unsigned int r[4];

				/* k 0-7 | k 8-15 of n-tiles 2jj and 2jj+1 */
				ldsm_x4_t(r, tb + kk * B_LD + jj * 16);
				fb[2 * jj][0] = r[0];
				fb[2 * jj][1] = r[1];
				fb[2 * jj + 1][0] = r[2];
				fb[2 * jj + 1][1] = r[3];
			}
#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int j = 0; j < 8; j++)
					mma16816(acc[i][j], fa[i], fb[j]);
		}
	}
	cp_async_wait<0>();

	/* epilogue: thread holds rows g and g+8, columns 2t and 2t+1 of each 16x8 tile */
	int g = lane >> 2, t = lane & 3;
#pragma unroll
	for (int i = 0; i < 4; i++) {
#pragma unroll
		for (int j = 0; j < 8; j++) {
			int col = bn + wn * 64 + j * 8 + 2 * t;
#pragma unroll
			for (int h = 0; h < 2; h++) {
				int row = bm + wm * 64 + i * 16 + g + h * 8;

				if (row < m && col < n)
					*(__nv_bfloat162 *)(c + (size_t)row * n + col) =
						__floats2bfloat162_rn(acc[i][j][2 * h],
								      acc[i][j][2 * h + 1]);
			}
		}
	}
}

template <int BK, int STAGES>
static int launch(void *c, const void *a, const void *b, int m, int n, int k, cudaStream_t st)
{
	static int attr_set[64];
	const int smem = tiling<BK, STAGES>::smem;
	long long tiles;
	cudaError_t e = gemm_grid(m, n, k, BM, BN, &tiles);

	if (e == cudaSuccess)
		e = gemm_smem_opt_in(k_gemm_mma<BK, STAGES>, smem, attr_set);
	if (e != cudaSuccess)
		return (int)e;
	k_gemm_mma<BK, STAGES><<<(unsigned int)tiles, THREADS, smem, st>>>(
		(bf16 *)c, (const bf16 *)a, (const bf16 *)b, m, n, k);
	return (int)cudaGetLastError();
}

extern "C" int gsk_gemm_bf16_mma(void *c, const void *a, const void *b, int m, int n, int k,
				 int bk, void *stream)
{
	if (bk == 64)
		return launch<64, 3>(c, a, b, m, n, k, (cudaStream_t)stream);
	return launch<32, 4>(c, a, b, m, n, k, (cudaStream_t)stream);
}
