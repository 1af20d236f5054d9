/*
 * The synthetic compute "spin": every block busy-waits on the global nanosecond timer
 * until its own start plus ns, so the SMs stay occupied for a modelled duration.
 */
#include "common.cuh"

extern "C" {
#include "gpu/kernels.h"
}

#define SPIN_THREADS 1024

static __device__ __forceinline__ uint64_t globaltimer(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__global__ void __launch_bounds__(SPIN_THREADS) k_spin(uint64_t ns)
{
	__shared__ uint64_t t0;

	/* one clock per block: all its warps stop together */
	if (threadIdx.x == 0)
		t0 = globaltimer();
	__syncthreads();
	while (globaltimer() - t0 < ns)
		;
}

extern "C" int gsk_spin(uint64_t ns, int blocks, void *stream)
{
	if (blocks < 1)
		blocks = gsk_sm_count();
	k_spin<<<blocks, SPIN_THREADS, 0, (cudaStream_t)stream>>>(ns);
	return (int)cudaGetLastError();
}
