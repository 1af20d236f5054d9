/* The host-page-rounded range a dma-buf export and its MR cover (gpu.h, gpu_dmabuf_range). */
#include "gpu/gpu.h"

void gpu_dmabuf_range(uintptr_t addr, uint64_t bytes, uint64_t page, struct gpu_dmabuf *out)
{
	uintptr_t base = addr & ~(uintptr_t)(page - 1);

	out->base = (void *)base;
	out->offset = addr - base;
	out->len = (out->offset + bytes + page - 1) & ~(page - 1);
}
