/* CUDA devices: the once-per-process driver probe, error conversion, properties, gpu_open. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "gpu/gpu.h"
#include "gpu/cuda_priv.h"
#include "util/log.h"

/* Process-wide by nature: whether libcuda.so.1 loaded and how many devices it shows. */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_rc;
static int probe_count;

int gpu_errno(cudaError_t e)
{
	switch (e) {
	case cudaSuccess:
		return 0;
	case cudaErrorNotReady:
		return EBUSY;
	case cudaErrorMemoryAllocation:
		return ENOMEM;
	case cudaErrorInvalidValue:
	case cudaErrorInvalidDevicePointer:
	case cudaErrorInvalidDevice:
	case cudaErrorInvalidResourceHandle:
	case cudaErrorInvalidConfiguration:
		return EINVAL;
	case cudaErrorNoDevice:
	case cudaErrorInsufficientDriver:
	case cudaErrorDevicesUnavailable:
	case cudaErrorSystemDriverMismatch:
		return ENODEV;
	case cudaErrorNotSupported:
	case cudaErrorNoKernelImageForDevice:
		return ENOTSUP;
	case cudaErrorLaunchTimeout:
		return ETIMEDOUT;
	case cudaErrorHostMemoryAlreadyRegistered:
		return EEXIST;
	case cudaErrorHostMemoryNotRegistered:
		return ENOENT;
	default:
		return EIO;
	}
}

int gpu_err(cudaError_t e, const char *call, const char *obj_fmt, ...)
{
	char obj[160];
	va_list ap;

	va_start(ap, obj_fmt);
	vsnprintf(obj, sizeof(obj), obj_fmt, ap);
	va_end(ap);
	log_err(LOG_GPU, "%s %s: %s (%s)", call, obj, cudaGetErrorString(e), cudaGetErrorName(e));
	return -gpu_errno(e);
}

static void probe_run(void)
{
	cudaError_t e = cudaGetDeviceCount(&probe_count);

	if (e == cudaSuccess && probe_count > 0) {
		probe_rc = 0;
		return;
	}
	probe_rc = -ENODEV;
	probe_count = 0;
	if (e == cudaSuccess || e == cudaErrorNoDevice)
		log_warn(LOG_GPU, "no CUDA device: GPUs unavailable");
	else if (e == cudaErrorInsufficientDriver || e == cudaErrorSystemDriverMismatch)
		log_warn(LOG_GPU, "no CUDA driver: GPUs unavailable");
	else
		log_warn(LOG_GPU, "cudaGetDeviceCount: %s: GPUs unavailable",
			 cudaGetErrorString(e));
}

int gpu_probe(void)
{
	pthread_once(&probe_once, probe_run);
	return probe_rc;
}

bool gpu_available(void)
{
	return gpu_probe() == 0;
}

int gpu_device_count(int *count)
{
	int rc = gpu_probe();

	*count = probe_count;
	return rc;
}

int gpu_set_device(int dev)
{
	cudaError_t e;
	int rc = gpu_probe();

	if (rc)
		return rc;
	e = cudaSetDevice(dev);
	if (e != cudaSuccess)
		return gpu_err(e, "cudaSetDevice", "dev=%d", dev);
	return 0;
}

/* Driver attribute through an entry point fetched at run time: we never link libcuda. */
static int drv_attr(int dev, CUdevice_attribute attr, int *val)
{
	PFN_cuDeviceGet_v2000 dev_get;
	PFN_cuDeviceGetAttribute_v2000 get_attr;
	enum cudaDriverEntryPointQueryResult q;
	CUdevice cudev;
	cudaError_t e;

	*val = 0;
	e = cudaGetDriverEntryPointByVersion("cuDeviceGet", (void **)&dev_get, 2000,
					     cudaEnableDefault, &q);
	if (e != cudaSuccess || q != cudaDriverEntryPointSuccess)
		return -ENOTSUP;
	e = cudaGetDriverEntryPointByVersion("cuDeviceGetAttribute", (void **)&get_attr, 2000,
					     cudaEnableDefault, &q);
	if (e != cudaSuccess || q != cudaDriverEntryPointSuccess)
		return -ENOTSUP;
	if (dev_get(&cudev, dev) != CUDA_SUCCESS || get_attr(val, attr, cudev) != CUDA_SUCCESS)
		return -ENOTSUP;
	return 0;
}

int gpu_get_props(int dev, struct gpu_props *p)
{
	struct cudaDeviceProp dp;
	cudaError_t e;
	int rc = gpu_probe();
	int v;

	if (rc)
		return rc;
	memset(p, 0, sizeof(*p));
	e = cudaGetDeviceProperties(&dp, dev);
	if (e != cudaSuccess)
		return gpu_err(e, "cudaGetDeviceProperties", "dev=%d", dev);
	p->index = dev;
	snprintf(p->name, sizeof(p->name), "%.95s", dp.name);
	snprintf(p->pci_bus_id, sizeof(p->pci_bus_id), "%04x:%02x:%02x.0",
		 (unsigned int)dp.pciDomainID, (unsigned int)dp.pciBusID,
		 (unsigned int)dp.pciDeviceID);
	p->sm_count = dp.multiProcessorCount;
	p->cc_major = dp.major;
	p->cc_minor = dp.minor;
	p->mem_total = dp.totalGlobalMem;
	p->l2_bytes = (uint64_t)dp.l2CacheSize;
	p->dmabuf_supported = drv_attr(dev, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, &v) == 0 && v;
	p->gdr_supported =
		drv_attr(dev, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, &v) == 0 && v;
	return 0;
}

int gpu_open(const struct gpu_opts *o, int local_rank, struct gpu_ctx **out)
{
	struct gpu_ctx *ctx;
	int ndev, dev, rc;

	if (!gpu_opts_wanted(o))
		return -ENODEV;
	rc = gpu_device_count(&ndev);
	if (rc)
		return rc;
	dev = gpu_pick_device(o->device, local_rank, ndev);
	if (dev < 0)
		return dev == GPU_DEVICE_NONE ? -ENODEV : dev;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->dev = dev;
	rc = gpu_set_device(dev);
	if (rc)
		goto out_free;
	rc = gpu_get_props(dev, &ctx->props);
	if (rc)
		goto out_free;
	rc = -ENOMEM;
	ctx->comm = gpu_stream_create(true);
	if (!ctx->comm)
		goto out_free;
	ctx->compute = gpu_stream_create(false);
	if (!ctx->compute)
		goto out_comm;
	log_dbg(LOG_GPU, "local rank %d: GPU %d %s (%s), %d SMs, %.1f GiB", local_rank, dev,
		ctx->props.name, ctx->props.pci_bus_id, ctx->props.sm_count,
		(double)ctx->props.mem_total / (1ull << 30));
	*out = ctx;
	return 0;

out_comm:
	gpu_stream_destroy(ctx->comm);
out_free:
	free(ctx);
	return rc;
}

void gpu_close(struct gpu_ctx *ctx)
{
	if (!ctx)
		return;
	gpu_stream_destroy(ctx->compute);
	gpu_stream_destroy(ctx->comm);
	free(ctx);
}
