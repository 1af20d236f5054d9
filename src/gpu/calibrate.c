/*
 * `gradsync gpu --calibrate`'s measurements of one GPU as one bounded group of CUDA calls
 * (util/callbound.h), so that a GPU wedged mid-calibration (a kernel that never ends, a
 * driver stuck in cudaFree) fails the command naming the call rather than hanging it.
 * Built with or without CUDA: it calls the GPU layer's own API.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "util/callbound.h"
#include "util/common.h"

/* The group's own copy: the caller's only once it returned. */
struct cal_job {
	int dev;
	bool memory;
	int timeout_ms;              /* the GPU layer's own waits: never past the group's bound */
	struct gpu_calibration out;
};

static void cal_call(void *arg)
{
	struct cal_job *c = arg;
	struct gpu_stream *s;
	char obj[32];

	snprintf(obj, sizeof(obj), "CUDA device %d", c->dev);
	/* the calls deeper down (gpu_calibrate's) note theirs on this object */
	callbound_note(GPU_CALL_SET_DEVICE, obj);
	c->out.rc = gpu_set_device(c->dev);
	if (c->out.rc)
		return;
	callbound_note("cudaStreamCreate", obj);
	s = gpu_stream_create(false);
	if (!s) { /* the GPU layer said why */
		c->out.rc = -ENOMEM;
		return;
	}
	c->out.rc = gpu_calibrate(s, c->timeout_ms, &c->out.tflops);
	if (!c->out.rc && c->memory)
		c->out.rc = gpu_calibrate_memory(s, c->timeout_ms, &c->out.mem);
	callbound_note("cudaStreamDestroy", obj);
	gpu_stream_destroy(s);
}

int gpu_calibrate_within(int dev, bool memory, uint64_t timeout_ns, struct gpu_calibration *out,
			 struct callbound_at *at, char *why, size_t whylen)
{
	struct cal_job *c = calloc(1, sizeof(*c));
	char what[32];
	struct callbound_group g = {
		.fn = cal_call, .arg = c, .drop = free, .what = what, .hint = "driver wedged?",
	};
	int ret;

	memset(out, 0, sizeof(*out));
	snprintf(what, sizeof(what), "CUDA device %d", dev);
	if (c) {
		c->dev = dev;
		c->memory = memory;
		c->timeout_ms = (int)GS_MIN(timeout_ns / 1000000, (uint64_t)INT_MAX);
	}
	ret = callbound_run_group(&g, timeout_ns, at, why, whylen);
	if (ret) /* c is the group's */
		return ret;
	*out = c->out;
	free(c);
	return 0;
}
