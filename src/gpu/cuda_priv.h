/*
 * Shared by the cuda*.c files only: the driver probe every entry point passes first and
 * the one place where a cudaError_t becomes -errno plus a log line.
 */
#ifndef GS_GPU_CUDA_PRIV_H
#define GS_GPU_CUDA_PRIV_H

#include <cuda_runtime_api.h>

#include "util/common.h"

/*
 * 0 when a driver is loaded and a device is visible, else -ENODEV. The probe runs
 * once per process; its failure is logged once ("no CUDA driver: GPUs unavailable").
 */
int gpu_probe(void);

/* Convert e (not cudaSuccess) to -errno and log "call obj: message (name)". */
int gpu_err(cudaError_t e, const char *call, const char *obj_fmt, ...) GS_PRINTF(3, 4);

/* The errno for e without logging (cudaErrorNotReady -> EBUSY). */
int gpu_errno(cudaError_t e);

static inline cudaStream_t gpu_cu_stream(struct gpu_stream *s)
{
	return (cudaStream_t)s;
}

#endif
