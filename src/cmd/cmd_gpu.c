/*
 * `gradsync gpu [--calibrate]`: the GPUs this node shows (name, PCI bus id for topology
 * matching, SMs, memory, dma-buf and GPUDirect RDMA support) and, with --calibrate, the
 * TFLOP/s our GEMM reaches on each: the figure [workload] gpu_tflops = 0 would use.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "gpu/gpu.h"
#include "util/common.h"

#define CALIBRATE_TIMEOUT_MS 60000

static int show_device(int dev, bool calibrate)
{
	struct gpu_stream *s;
	struct gpu_props p;
	double tflops = 0;
	int rc;

	rc = gpu_get_props(dev, &p);
	if (rc)
		return rc;
	printf("gpu %d: %s, bus %s, %d SMs, cc %d.%d, %.1f GiB, L2 %llu MiB, dma-buf %s, gdr %s",
	       dev, p.name, p.pci_bus_id, p.sm_count, p.cc_major, p.cc_minor,
	       (double)p.mem_total / (1ull << 30), (unsigned long long)(p.l2_bytes >> 20),
	       p.dmabuf_supported ? "yes" : "no", p.gdr_supported ? "yes" : "no");
	if (calibrate) {
		rc = gpu_set_device(dev);
		if (rc)
			goto out_line;
		s = gpu_stream_create(false);
		if (!s) {
			rc = -1;
			goto out_line;
		}
		rc = gpu_calibrate(s, CALIBRATE_TIMEOUT_MS, &tflops);
		gpu_stream_destroy(s);
		if (!rc)
			printf(", gemm bf16 %.0f TFLOP/s", tflops);
	}
out_line:
	printf("\n");
	return rc;
}

int cmd_gpu(int argc, char **argv)
{
	bool calibrate = false;
	int n = 0, failed = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--calibrate") == 0) {
			calibrate = true;
		} else {
			fprintf(stderr, "usage: gradsync gpu [--calibrate]\n");
			return GS_EXIT_USAGE;
		}
	}
	/* without a driver or a CUDA build the GPU layer has already said why, once */
	if (!gpu_available() || gpu_device_count(&n) || n < 1) {
		printf("no GPUs on this node\n");
		return GS_EXIT_FAIL;
	}
	for (int dev = 0; dev < n; dev++)
		failed |= show_device(dev, calibrate) != 0;
	return failed ? GS_EXIT_FAIL : GS_EXIT_OK;
}
