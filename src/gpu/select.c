/* [gpu] device resolution: which device index a local rank uses (pure; no CUDA needed). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "util/log.h"

#define GPU_LIST_MAX 64 /* [gpu] device is 64 characters: at most 32 entries */

/* Parse "0, 1,2,3" into idx[]; returns the number of entries or -EINVAL. */
static int parse_list(const char *spec, int *idx, int max)
{
	const char *p = spec;
	int n = 0;

	for (;;) {
		char *end;
		long v;

		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9' || n == max)
			return -EINVAL;
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || v > 4096)
			return -EINVAL;
		idx[n++] = (int)v;
		p = end;
		while (*p == ' ')
			p++;
		if (*p == '\0')
			return n;
		if (*p != ',')
			return -EINVAL;
		p++;
	}
}

int gpu_pick_device(const char *spec, int local_rank, int ndev)
{
	int idx[GPU_LIST_MAX];
	int n, dev;

	if (local_rank < 0)
		return -EINVAL;
	if (strcmp(spec, "none") == 0)
		return GPU_DEVICE_NONE;
	if (strcmp(spec, "auto") == 0) {
		if (ndev < 1) {
			log_err(LOG_GPU, "gpu device=auto local_rank=%d: no visible device",
				local_rank);
			return -ENODEV;
		}
		return local_rank % ndev;
	}
	n = parse_list(spec, idx, GPU_LIST_MAX);
	if (n < 0) {
		log_err(LOG_GPU, "gpu device=\"%s\": expected auto, none or a list like 0,1,2,3",
			spec);
		return -EINVAL;
	}
	if (local_rank >= n) {
		log_err(LOG_GPU, "gpu device=\"%s\": no entry for local rank %d", spec, local_rank);
		return -ERANGE;
	}
	dev = idx[local_rank];
	if (ndev >= 0 && dev >= ndev) {
		log_err(LOG_GPU, "gpu device=\"%s\" local_rank=%d: device %d of %d visible", spec,
			local_rank, dev, ndev);
		return -ERANGE;
	}
	return dev;
}
