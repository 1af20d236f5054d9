/* gpu_mem_range with CUDA: cuMemGetAddressRange through a run-time entry point. */
#include <errno.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "gpu/gpu.h"
#include "gpu/cuda_priv.h"
#include "util/log.h"

int gpu_mem_range(const void *p, void **base, size_t *bytes)
{
	PFN_cuMemGetAddressRange_v3020 get_range;
	enum cudaDriverEntryPointQueryResult q;
	CUdeviceptr b = 0;
	size_t n = 0;
	CUresult cr;
	cudaError_t e;
	int rc = gpu_probe();

	if (rc)
		return rc;
	e = cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", (void **)&get_range, 3020,
					     cudaEnableDefault, &q);
	if (e != cudaSuccess)
		return gpu_err(e, "cudaGetDriverEntryPointByVersion",
			       "symbol=cuMemGetAddressRange");
	if (q != cudaDriverEntryPointSuccess) {
		log_err(LOG_GPU, "cudaGetDriverEntryPointByVersion symbol=cuMemGetAddressRange: %s",
			"not found");
		return -ENOTSUP;
	}
	cr = get_range(&b, &n, (CUdeviceptr)(uintptr_t)p);
	if (cr != CUDA_SUCCESS) {
		log_err(LOG_GPU, "cuMemGetAddressRange ptr=%p: error %d (not device memory?)", p,
			(int)cr);
		return -EINVAL;
	}
	*base = (void *)(uintptr_t)b;
	*bytes = n;
	return 0;
}
