/*
 * `gradsync gpu [--calibrate [--write FILE]]`: the GPUs this node shows (name, PCI bus id
 * for topology matching, SMs, memory, dma-buf and GPUDirect RDMA support) and, with
 * --calibrate, the TFLOP/s our GEMM reaches on each (compute = gemm sizes its work with
 * it); --write FILE also measures GPU 0's streaming bandwidth and writes the cost model's
 * profile of this node ([gpu] profile = FILE). --profile NAME --write FILE writes a
 * built-in row as a file to edit. --host-pace US (with --write) gives the eager host's
 * pace, us per tiny PyTorch op, to which the profile's host values are scaled: our own
 * kernels' launch pace does not follow Python's (gpu_profile.c, H200_HOST_PACE_US).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "gpu/gpu.h"
#include "util/common.h"
#include "util/fsbound.h"
#include "workload/gpu_profile.h"

#define CALIBRATE_TIMEOUT_MS 60000

/*
 * Profile g (after a comment line head, if any) into path, "-" for stdout; 0 or -errno,
 * said in one line naming the file (stdout's own failure is said once, by main). The
 * file is written within the bound of an input (util/fsbound.h), as the user named it:
 * it may be a device or a FIFO.
 */
static int profile_save(const char *path, const struct gpu_profile *g, const char *head)
{
	struct fsb_write w = { .path = path, .direct = true };
	char why[PATH_MAX + 200], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int ret;

	if (!f) {
		fprintf(stderr, "gradsync gpu: write %s: %s\n", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	if (head)
		fputs(head, f);
	ret = gpu_profile_write(f, g);
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (!ret && !strcmp(path, "-")) {
		if (fwrite(text, 1, len, stdout) != len)
			ret = -EIO;
	} else if (!ret) {
		w.data = text;
		w.len = len;
		ret = fsb_write(&w, fsb_timeout_default_ns(), why, sizeof(why));
		if (ret)
			fprintf(stderr, "gradsync gpu: write %s: %s\n", path, why);
	} else {
		fprintf(stderr, "gradsync gpu: write %s: %s\n", path, strerror(-ret));
	}
	free(text);
	return ret;
}

/* One GPU's line; with calibrate, our kernels' rates, and with write, GPU 0's profile
 * (its host values at pace_us where that is > 0). */
static int show_device(int dev, bool calibrate, const char *write, double pace_us)
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
		if (!rc)
			printf(", gemm bf16 %.0f TFLOP/s", tflops);
		if (!rc && write && !dev) {
			struct gpu_mem_rates mr;
			struct profile_measure m;
			struct gpu_profile g;
			char head[320];

			rc = gpu_calibrate_memory(s, CALIBRATE_TIMEOUT_MS, &mr);
			if (!rc) {
				printf(", stream %.0f GB/s, kernel pace %.2f us, batchnorm-like %.0f GB/s, layernorm-like %.0f GB/s, softmax-like %.0f GB/s",
				       mr.stream_gbps, mr.floor_us, mr.bn_gbps, mr.layernorm_gbps,
				       mr.softmax_gbps);
				m = (struct profile_measure){
					.gemm_tflops = tflops, .stream_gbps = mr.stream_gbps,
					.floor_us = mr.floor_us, .bn_gbps = mr.bn_gbps,
					.layernorm_gbps = mr.layernorm_gbps,
					.softmax_gbps = mr.softmax_gbps,
					.sm_count = p.sm_count,
				};
				gpu_profile_calibrated(&m, p.name, &g);
				if (pace_us > 0)
					gpu_profile_set_host_pace(&g, gpu_profile_find("h200"),
								  pace_us);
				snprintf(head, sizeof(head), "# our kernels here: gemm %.1f TFLOP/s, stream %.0f GB/s, pace %.2f us, batchnorm-like %.0f GB/s, layernorm-like %.0f GB/s, softmax-like %.0f GB/s\n",
					 tflops, mr.stream_gbps, mr.floor_us, mr.bn_gbps,
					 mr.layernorm_gbps, mr.softmax_gbps);
				rc = profile_save(write, &g, head);
			}
		}
		gpu_stream_destroy(s);
	}
out_line:
	printf("\n");
	return rc;
}

/* `gradsync gpu --profile NAME --write FILE`: a cost-model profile as a file to edit, its
 * host values at pace_us where that is > 0. */
static int write_profile(const char *name, const char *path, double pace_us)
{
	struct gpu_profile g, base;
	char err[256];

	if (gpu_profile_load(name, &g, err, sizeof(err))) {
		fprintf(stderr, "gradsync gpu: %s\n", err);
		return GS_EXIT_USAGE;
	}
	base = g;
	if (pace_us > 0 && gpu_profile_set_host_pace(&g, &base, pace_us)) {
		fprintf(stderr, "gradsync gpu: --host-pace: profile %s has no host_pace_us to scale from\n",
			name);
		return GS_EXIT_USAGE;
	}
	return profile_save(path, &g, NULL) ? GS_EXIT_FAIL : GS_EXIT_OK;
}

int cmd_gpu(int argc, char **argv)
{
	const char *profile = NULL, *write = NULL, *pace = NULL;
	double pace_us = 0;
	struct cmd_once once = { .n = 0 };
	bool calibrate = false;
	int n = 0, failed = 0;
	char *end;

	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && !strncmp(argv[i], "--", 2) && strcmp(argv[i], "--calibrate") &&
		    cmd_once("gpu", &once, argv[i] + 2))
			return GS_EXIT_USAGE;
		if (strcmp(argv[i], "--calibrate") == 0) {
			calibrate = true;
		} else if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc) {
			profile = argv[++i];
		} else if (strcmp(argv[i], "--write") == 0 && i + 1 < argc) {
			write = argv[++i];
		} else if (strcmp(argv[i], "--host-pace") == 0 && i + 1 < argc) {
			pace = argv[++i];
		} else {
			if (strcmp(argv[i], "-h") && strcmp(argv[i], "--help")) {
				fprintf(stderr, "gradsync gpu: '%s': unknown option or missing value "
					"(see --help)\n", argv[i]);
				return GS_EXIT_USAGE;
			}
			printf("usage: gradsync gpu [--calibrate [--write FILE|- [--host-pace US]]]\n"
			       "       gradsync gpu --profile NAME|FILE --write FILE|- [--host-pace US]\n"
				"The GPUs of this node (name, PCI bus, SMs, memory, dma-buf / GDR);\n"
				"--calibrate times our kernels, --write FILE writes the cost model's\n"
				"profile of this GPU ([gpu] profile = FILE); --profile NAME --write FILE\n"
				"writes a built-in row to edit; --host-pace US (either form) its host values\n"
				"at that pace.\n");
			return GS_EXIT_OK;
		}
	}
	if (pace) {
		errno = 0;
		pace_us = strtod(pace, &end);
		if (errno || end == pace || *end || !isfinite(pace_us) || pace_us <= 0 ||
		    pace_us > 1e4) {
			fprintf(stderr, "gradsync gpu: --host-pace '%s': want microseconds per tiny eager PyTorch op, > 0 and <= 10000 (the h200 row's host: %.3f)\n",
				pace, gpu_profile_find("h200")->host_pace_us);
			return GS_EXIT_USAGE;
		}
		if (!write) {
			fprintf(stderr, "gradsync gpu: --host-pace goes with --write FILE\n");
			return GS_EXIT_USAGE;
		}
	}
	if (write && !calibrate)
		return write_profile(profile ? profile : "h200", write, pace_us);
	if (profile) {
		fprintf(stderr, "gradsync gpu: --profile goes with --write FILE (without --calibrate)\n");
		return GS_EXIT_USAGE;
	}
	/* without a driver or a CUDA build the GPU layer has already said why, once */
	if (!gpu_available() || gpu_device_count(&n) || n < 1) {
		printf("no GPUs on this node\n");
		return GS_EXIT_FAIL;
	}
	for (int dev = 0; dev < n; dev++)
		failed |= show_device(dev, calibrate, write, pace_us) != 0;
	return failed ? GS_EXIT_FAIL : GS_EXIT_OK;
}
