/*
 * gpu_mem_range in a build without CUDA. configure builds every file of src/gpu except
 * cuda*.c when CUDA is off and cuda_stub.c when it is on, so this one guards itself;
 * it belongs in cuda_stub.c once the GPU layer's owner takes gpu_range.h into gpu.h.
 */
#include <errno.h>

#include "config.h"
#include "gpu/gpu_range.h"
#include "util/common.h"
#include "util/log.h"

#if !GS_HAVE_CUDA
int gpu_mem_range(const void *p GS_UNUSED, void **base GS_UNUSED, size_t *bytes GS_UNUSED)
{
	log_err(LOG_GPU, "gpu_mem_range: built without CUDA");
	return -ENOTSUP;
}
#else
/* ISO C wants a declaration in every translation unit */
typedef int gs_range_stub_unused;
#endif
