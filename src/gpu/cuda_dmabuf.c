/*
 * dma-buf export of device memory, so a NIC can register GPU memory through
 * ibv_reg_dmabuf_mr without nvidia-peermem. Driver calls come from entry points fetched
 * at run time (cudaGetDriverEntryPointByVersion): the binary never links libcuda.
 */
#include <errno.h>
#include <unistd.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "gpu/gpu.h"
#include "gpu/cuda_priv.h"
#include "util/log.h"

static int entry(const char *sym, unsigned int ver, void **fn)
{
	enum cudaDriverEntryPointQueryResult q;
	cudaError_t e;

	e = cudaGetDriverEntryPointByVersion(sym, fn, ver, cudaEnableDefault, &q);
	if (e != cudaSuccess)
		return gpu_err(e, "cudaGetDriverEntryPointByVersion", "symbol=%s", sym);
	if (q != cudaDriverEntryPointSuccess) {
		log_err(LOG_GPU, "cudaGetDriverEntryPointByVersion symbol=%s: %s", sym,
			q == cudaDriverEntryPointVersionNotSufficent ? "driver too old"
								   : "symbol not found");
		return -ENOTSUP;
	}
	return 0;
}

int gpu_dmabuf_export(const void *ptr, size_t bytes, struct gpu_dmabuf *out)
{
	PFN_cuMemGetHandleForAddressRange_v11070 get_handle;
	PFN_cuDeviceGet_v2000 dev_get;
	PFN_cuDeviceGetAttribute_v2000 get_attr;
	struct cudaPointerAttributes pa;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t addr = (uintptr_t)ptr;
	CUdevice cudev;
	CUresult cr;
	cudaError_t e;
	int fd = -1, supported = 0, rc;

	out->fd = -1;
	rc = gpu_probe();
	if (rc)
		return rc;
	e = cudaPointerGetAttributes(&pa, ptr);
	if (e != cudaSuccess)
		return gpu_err(e, "cudaPointerGetAttributes", "ptr=%p", ptr);
	if (pa.type != cudaMemoryTypeDevice) {
		log_err(LOG_GPU, "gpu_dmabuf_export ptr=%p: not device memory", ptr);
		return -EINVAL;
	}
	rc = entry("cuDeviceGet", 2000, (void **)&dev_get);
	if (!rc)
		rc = entry("cuDeviceGetAttribute", 2000, (void **)&get_attr);
	if (!rc)
		rc = entry("cuMemGetHandleForAddressRange", 11070, (void **)&get_handle);
	if (rc)
		return rc;
	cr = dev_get(&cudev, pa.device);
	if (cr == CUDA_SUCCESS)
		cr = get_attr(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, cudev);
	if (cr != CUDA_SUCCESS || !supported) {
		log_err(LOG_GPU, "cuDeviceGetAttribute dev=%d DMA_BUF_SUPPORTED: %s", pa.device,
			cr != CUDA_SUCCESS ? "query failed"
					   : "no (kernel or driver lacks dma-buf)");
		return -ENOTSUP;
	}
	/* NCCL's rule: both ends on host pages; cudaMalloc ranges are 2 MiB-granular. */
	gpu_dmabuf_range(addr, bytes, page, out);
	cr = get_handle(&fd, (CUdeviceptr)(uintptr_t)out->base, out->len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (cr != CUDA_SUCCESS) {
		log_err(LOG_GPU, "cuMemGetHandleForAddressRange base=%p len=%llu: CUresult %d",
			out->base, (unsigned long long)out->len, (int)cr);
		return cr == CUDA_ERROR_NOT_SUPPORTED ? -ENOTSUP : -EIO;
	}
	out->fd = fd;
	return 0;
}

void gpu_dmabuf_close(struct gpu_dmabuf *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}
