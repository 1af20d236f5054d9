/*
 * The devices CUDA shows and their properties, as one bounded group of calls
 * (util/callbound.h): the one place a command asks a driver that may be wedged (doctor,
 * `gradsync gpu`). Built with or without CUDA: it calls the GPU layer's own API.
 */
#include <errno.h>
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

int gpu_list_within(struct gpu_list **out, uint64_t timeout_ns, struct callbound_at *at,
		    char *why, size_t whylen)
{
	struct gpu_list *l = calloc(1, sizeof(*l));
	size_t n;
	int ret;

	*out = NULL;
	if (!l) {
		snprintf(at->obj, sizeof(at->obj), "CUDA driver");
		at->op = "start";
		snprintf(why, whylen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	ret = callbound_run(list_call, l, free, "CUDA driver", timeout_ns, at, why, whylen);
	if (ret == -ETIMEDOUT) { /* l is the group's */
		n = strlen(why);
		snprintf(why + n, whylen - n, " (driver wedged?)");
	}
	if (!ret)
		*out = l;
	return ret;
}
