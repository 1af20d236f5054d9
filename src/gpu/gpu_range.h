/*
 * The allocation that holds a device pointer (cuMemGetAddressRange): CUDA IPC exports
 * whole allocations, so a transport sending into a buffer in the middle of one needs its
 * base. Kept beside gpu.h until the GPU layer's header takes it in.
 */
#ifndef GS_GPU_GPU_RANGE_H
#define GS_GPU_GPU_RANGE_H

#include <stddef.h>

/*
 * *base and *bytes of the cudaMalloc allocation containing p. -EINVAL (logged) when p is
 * not device memory, -ENODEV / -ENOTSUP without a driver / without CUDA.
 */
int gpu_mem_range(const void *p, void **base, size_t *bytes);

#endif
