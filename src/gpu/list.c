/*
 * The devices CUDA shows and their properties, as one bounded group of calls
 * (util/callbound.h): the one place a command asks a driver that may be wedged (doctor,
 * `gradsync gpu`). Built with or without CUDA: it calls the GPU layer's own API.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "util/callbound.h"

static void list_call(void *arg)
{
	struct gpu_list *l = arg;
	char obj[32];

	callbound_note(GPU_CALL_INIT, "CUDA driver");
	if (gpu_device_count(&l->count)) /* no driver: said once, nothing to list */
		l->count = 0;
	for (int d = 0; d < l->count && d < GPU_LIST_MAX; d++) {
		snprintf(obj, sizeof(obj), "CUDA device %d", d);
		/* its properties and the driver attributes (dma-buf, GDR) */
		callbound_note("cudaGetDeviceProperties", obj);
		l->rc[d] = gpu_get_props(d, &l->props[d]);
	}
}

void gpu_list_group(struct callbound_group *g)
{
	*g = (struct callbound_group){
		.fn = list_call, .arg = calloc(1, sizeof(struct gpu_list)), .drop = free,
		.what = "CUDA driver", .hint = "driver wedged?",
	};
}

int gpu_list_within(struct gpu_list **out, uint64_t timeout_ns, struct callbound_at *at,
		    char *why, size_t whylen)
{
	struct callbound_group g;
	int ret;

	gpu_list_group(&g);
	ret = callbound_run_group(&g, timeout_ns, at, why, whylen);
	*out = ret ? NULL : g.arg;
	return ret;
}
