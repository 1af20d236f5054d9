/*
 * What the two bf16 GEMM kernels share (gemm_wmma.cu, gemm_mma.cu): cp.async copies into
 * shared memory, the grouped block order and the launch's checks. Their tile loaders,
 * main loops and epilogues differ (tiles per thread, WMMA fragments against mma.sync) and
 * stay in each file.
 */
#ifndef GS_KERNELS_GEMM_COMMON_CUH
#define GS_KERNELS_GEMM_COMMON_CUH

#include "common.cuh"

typedef __nv_bfloat16 bf16;

#define GEMM_GROUP_M 8 /* block rows that sweep the columns together */

static __device__ __forceinline__ unsigned int smem_addr(const void *p)
{
	return (unsigned int)__cvta_generic_to_shared(p);
}

static __device__ __forceinline__ void cp_async16(void *smem, const void *gmem, bool valid)
{
	int n = valid ? 16 : 0; /* 0 source bytes: the 16 destination bytes are zeroed */

	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)),
		     "l"(gmem), "r"(n));
}

static __device__ __forceinline__ void cp_async_commit(void)
{
	asm volatile("cp.async.commit_group;\n" ::);
}

template <int N> static __device__ __forceinline__ void cp_async_wait(void)
{
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* Block pid's output tile: GEMM_GROUP_M block rows sweep the columns together, sharing B
 * in L2. */
static __device__ __forceinline__ void gemm_block_tile(int pid, int tiles_m, int tiles_n,
						       int *tile_m, int *tile_n)
{
	int group = pid / (GEMM_GROUP_M * tiles_n);
	int first_m = group * GEMM_GROUP_M;
	int group_rows = min(tiles_m - first_m, GEMM_GROUP_M);

	*tile_m = first_m + (pid % (GEMM_GROUP_M * tiles_n)) % group_rows;
	*tile_n = (pid % (GEMM_GROUP_M * tiles_n)) / group_rows;
}

/* The grid of bm x bn tiles in *tiles, and cudaErrorInvalidValue for a shape the kernels
 * refuse (n, k multiples of 8, at most 2^31 - 1 blocks). */
static inline cudaError_t gemm_grid(int m, int n, int k, int bm, int bn, long long *tiles)
{
	*tiles = (long long)((m + bm - 1) / bm) * ((n + bn - 1) / bn);
	if (m < 1 || n < 1 || k < 1 || n % 8 || k % 8 || *tiles > 0x7fffffffLL)
		return cudaErrorInvalidValue;
	return cudaSuccess;
}

/* More than 48 KiB of dynamic shared memory must be asked for, per device: ask once for
 * smem bytes; attr_set is the kernel's own record of the devices asked. */
template <typename K>
static inline cudaError_t gemm_smem_opt_in(K *kernel, int smem, int attr_set[64])
{
	int dev = 0;
	cudaError_t e = cudaGetDevice(&dev);

	if (e != cudaSuccess)
		return e;
	if (dev >= 0 && dev < 64 && attr_set[dev])
		return cudaSuccess;
	e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
	if (e != cudaSuccess)
		return e;
	if (dev >= 0 && dev < 64)
		attr_set[dev] = 1;
	return cudaSuccess;
}

#endif
