/*
 * `gradsync gpu [--calibrate [--write FILE]] [--timeout DURATION]`: the GPUs this node
 * shows (name, PCI bus id for topology matching, SMs, memory, dma-buf and GPUDirect RDMA
 * support), asked within --timeout (a wedged driver fails the command), and, with
 * --calibrate, the TFLOP/s our GEMM reaches on each (compute = gemm sizes its work with
 * it), each GPU's calibration within --timeout as a whole (gpu/calibrate.c); --write FILE
 * also measures GPU 0's streaming bandwidth and writes the cost model's profile of this
 * node ([gpu] profile = FILE). --profile NAME --write FILE writes a built-in row as a
 * file to edit. --host-pace US (with --write) gives the eager host's pace, us per tiny
 * PyTorch op, to which the profile's host values are scaled: our own kernels' launch pace
 * does not follow Python's (gpu_profile.c, H200_HOST_PACE_US).
 * --timeout also bounds the read of --profile FILE and the write of --write FILE.
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

/*
 * Profile g (after a comment line head, if any) into path, "-" for stdout; 0 or -errno,
 * said in one line naming the file (stdout's own failure is said once, by main). The
 * file is written within timeout_ns (util/fsbound.h), as the user named it: it may be a
 * device or a FIFO.
 */
static int profile_save(const char *path, const struct gpu_profile *g, const char *head,
			uint64_t timeout_ns)
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
		ret = fsb_write(&w, timeout_ns, why, sizeof(why));
		if (ret)
			fprintf(stderr, "gradsync gpu: write %s: %s\n", path, why);
	} else {
		fprintf(stderr, "gradsync gpu: write %s: %s\n", path, strerror(-ret));
	}
	free(text);
	return ret;
}

/* What the command does with each GPU. */
struct gpu_args {
	bool calibrate;
	const char *write;   /* --write FILE: GPU 0's profile */
	double pace_us;      /* --host-pace: the profile's host values at it, where > 0 */
	uint64_t timeout_ns; /* --timeout */
};

/* A calibration given up on: its call holds the driver, no further GPU may be asked. */
struct gave_up {
	bool held;
	struct callbound_at at;
	char why[160];
};

/*
 * Our kernels' rates on GPU dev (p: its properties), measured within the bound: printed on
 * its line, and with write, GPU 0's profile written. 0, or -errno: the GPU layer or the
 * profile's write said why, or the calibration was given up on (gu filled, for the caller
 * to say once the line is ended).
 */
static int calibrate_device(int dev, const struct gpu_props *p, const struct gpu_args *a,
			    struct gave_up *gu)
{
	bool profile = a->write && !dev;
	struct gpu_calibration cal;
	struct gpu_mem_rates mr;
	struct profile_measure m;
	struct gpu_profile g;
	char head[320];
	int rc;

	rc = gpu_calibrate_within(dev, profile, a->timeout_ns, &cal, &gu->at, gu->why,
				  sizeof(gu->why));
	if (rc) {
		gu->held = true;
		return rc;
	}
	if (cal.rc)
		return cal.rc;
	printf(", gemm bf16 %.0f TFLOP/s", cal.tflops);
	if (!profile)
		return 0;
	mr = cal.mem;
	printf(", stream %.0f GB/s, kernel pace %.2f us, batchnorm-like %.0f GB/s, layernorm-like %.0f GB/s, softmax-like %.0f GB/s",
	       mr.stream_gbps, mr.floor_us, mr.bn_gbps, mr.layernorm_gbps, mr.softmax_gbps);
	m = (struct profile_measure){
		.gemm_tflops = cal.tflops, .stream_gbps = mr.stream_gbps,
		.floor_us = mr.floor_us, .bn_gbps = mr.bn_gbps,
		.layernorm_gbps = mr.layernorm_gbps, .softmax_gbps = mr.softmax_gbps,
		.sm_count = p->sm_count,
	};
	gpu_profile_calibrated(&m, p->name, &g);
	if (a->pace_us > 0)
		gpu_profile_set_host_pace(&g, gpu_profile_find("h200"), a->pace_us);
	snprintf(head, sizeof(head), "# our kernels here: gemm %.1f TFLOP/s, stream %.0f GB/s, pace %.2f us, batchnorm-like %.0f GB/s, layernorm-like %.0f GB/s, softmax-like %.0f GB/s\n",
		 cal.tflops, mr.stream_gbps, mr.floor_us, mr.bn_gbps, mr.layernorm_gbps,
		 mr.softmax_gbps);
	return profile_save(a->write, &g, head, a->timeout_ns);
}

/* One GPU's line (p: its properties, from gpu_list_within); with calibrate, our kernels'
 * rates (calibrate_device). */
static int show_device(int dev, const struct gpu_props *p, const struct gpu_args *a,
		       struct gave_up *gu)
{
	int rc = 0;

	printf("gpu %d: %s, bus %s, %d SMs, cc %d.%d, %.1f GiB, L2 %llu MiB, dma-buf %s, gdr %s",
	       dev, p->name, p->pci_bus_id, p->sm_count, p->cc_major, p->cc_minor,
	       (double)p->mem_total / (1ull << 30), (unsigned long long)(p->l2_bytes >> 20),
	       p->dmabuf_supported ? "yes" : "no", p->gdr_supported ? "yes" : "no");
	if (a->calibrate)
		rc = calibrate_device(dev, p, a, gu);
	printf("\n");
	return rc;
}

/* `gradsync gpu --profile NAME --write FILE`: a cost-model profile as a file to edit, its
 * host values at a->pace_us where that is > 0. */
static int write_profile(const char *name, const struct gpu_args *a)
{
	struct gpu_profile g, base;
	double pace_us = a->pace_us;
	char err[PATH_MAX + 320];

	if (gpu_profile_load_within(name, &g, a->timeout_ns, err, sizeof(err))) {
		fprintf(stderr, "gradsync gpu: %s\n", err);
		return GS_EXIT_USAGE;
	}
	base = g;
	if (pace_us > 0 && gpu_profile_set_host_pace(&g, &base, pace_us)) {
		fprintf(stderr, "gradsync gpu: --host-pace: profile %s has no host_pace_us to scale from\n",
			name);
		return GS_EXIT_USAGE;
	}
	return profile_save(a->write, &g, NULL, a->timeout_ns) ? GS_EXIT_FAIL : GS_EXIT_OK;
}

/* The GPUs CUDA shows, asked within the bound: each one's line (and calibration). */
static int show_devices(const struct gpu_args *a)
{
	struct callbound_at at;
	struct gpu_list *l;
	struct gave_up gu = { .held = false };
	char why[160];
	bool standin;
	int failed = 0;

	if (gpu_list_within(&l, a->timeout_ns, &at, why, sizeof(why))) {
		fprintf(stderr, "gradsync gpu: %s: %s\n", at.obj, why);
		return GS_EXIT_FAIL;
	}
	/* the test hook's wedged GPU stands in for one on a node without (as doctor's cuInit
	 * does): device 0's calibration is made, to be given up on */
	standin = l->count < 1 && a->calibrate && callbound_test_hang(GPU_CALL_SET_DEVICE);
	if (standin) {
		struct gpu_props none = { .name = "(test hook)" };

		calibrate_device(0, &none, a, &gu);
		failed = 1;
	} else if (l->count < 1) {
		/* without a driver or a CUDA build the GPU layer has already said why, once */
		printf("no GPUs on this node\n");
		failed = 1;
	}
	/* a device whose properties CUDA refused: the GPU layer said why */
	for (int dev = 0; dev < l->count && dev < GPU_LIST_MAX && !gu.held; dev++)
		if (l->rc[dev] || show_device(dev, &l->props[dev], a, &gu))
			failed = 1;
	if (gu.held)
		fprintf(stderr, "gradsync gpu: %s: %s\n", gu.at.obj, gu.why);
	free(l);
	return failed ? GS_EXIT_FAIL : GS_EXIT_OK;
}

int cmd_gpu(int argc, char **argv)
{
	const char *profile = NULL, *pace = NULL, *timeout = NULL;
	struct gpu_args a = { .timeout_ns = fsb_timeout_default_ns() };
	struct cmd_once once = { .n = 0 };
	char *end;

	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && !strncmp(argv[i], "--", 2) && strcmp(argv[i], "--calibrate") &&
		    cmd_once("gpu", &once, argv[i] + 2))
			return GS_EXIT_USAGE;
		if (strcmp(argv[i], "--calibrate") == 0) {
			a.calibrate = true;
		} else if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc) {
			profile = argv[++i];
		} else if (strcmp(argv[i], "--write") == 0 && i + 1 < argc) {
			a.write = argv[++i];
		} else if (strcmp(argv[i], "--host-pace") == 0 && i + 1 < argc) {
			pace = argv[++i];
		} else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
			timeout = argv[++i];
		} else {
			if (strcmp(argv[i], "-h") && strcmp(argv[i], "--help")) {
				fprintf(stderr, "gradsync gpu: '%s': unknown option or missing value "
					"(see --help)\n", argv[i]);
				return GS_EXIT_USAGE;
			}
			printf("usage: gradsync gpu [--calibrate [--write FILE|- [--host-pace US]]]\n"
			       "                    [--timeout DURATION]\n"
			       "       gradsync gpu --profile NAME|FILE --write FILE|- [--host-pace US]\n"
			       "                    [--timeout DURATION]\n"
				"The GPUs of this node (name, PCI bus, SMs, memory, dma-buf / GDR);\n"
				"--calibrate times our kernels, --write FILE writes the cost model's\n"
				"profile of this GPU ([gpu] profile = FILE); --profile NAME --write FILE\n"
				"writes a built-in row to edit; --host-pace US (either form) its host values\n"
				"at that pace. --timeout DURATION (default %s) bounds the CUDA probe,\n"
				"each GPU's --calibrate as a whole (a few seconds on a GPU), the read of\n"
				"--profile FILE and the write of --write FILE; a CUDA call that does not\n"
				"return within it (a wedged driver or GPU) fails the command, named.\n",
			       FSB_TIMEOUT_DEFAULT);
			return GS_EXIT_OK;
		}
	}
	if (timeout && cmd_timeout_arg("gpu", timeout, &a.timeout_ns))
		return GS_EXIT_USAGE;
	if (pace) {
		errno = 0;
		a.pace_us = strtod(pace, &end);
		if (errno || end == pace || *end || !isfinite(a.pace_us) || a.pace_us <= 0 ||
		    a.pace_us > 1e4) {
			fprintf(stderr, "gradsync gpu: --host-pace '%s': want microseconds per tiny eager PyTorch op, > 0 and <= 10000 (the h200 row's host: %.3f)\n",
				pace, gpu_profile_find("h200")->host_pace_us);
			return GS_EXIT_USAGE;
		}
		if (!a.write) {
			fprintf(stderr, "gradsync gpu: --host-pace goes with --write FILE\n");
			return GS_EXIT_USAGE;
		}
	}
	if (a.write && !a.calibrate)
		return write_profile(profile ? profile : "h200", &a);
	if (profile) {
		fprintf(stderr, "gradsync gpu: --profile goes with --write FILE (without --calibrate)\n");
		return GS_EXIT_USAGE;
	}
	return show_devices(&a);
}
