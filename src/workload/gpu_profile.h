/*
 * GPU profiles of the cost model: built-in rows (h200 measured on the device with
 * PyTorch's own kernels, the others scaled from datasheets) and profile files.
 *
 * File format (what `gradsync gpu --calibrate --write FILE` writes, what
 * `[gpu] profile = FILE` and `plan --gpu-profile FILE` read): one `key = value...` a line,
 * '#' comments; keys are the field names of gpu_profile_fields (matrix values in the
 * order fp32 tf32 bf16 fp16, class values as `mem_eff.CLASS = share32 share16`, convolutions
 * by shape as `conv_shape.PREC.PASS = share x7 inner_half x7 gflop_half pixels_half`: costmodel.h).
 * Keys left out keep the h200 row's values; an unknown key or a bad number is an error
 * naming file:line.
 */
#ifndef GS_WORKLOAD_GPU_PROFILE_H
#define GS_WORKLOAD_GPU_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "workload/costmodel.h"

size_t gpu_profile_count(void);
const struct gpu_profile *gpu_profile_at(size_t i);
/* A built-in row by name, or NULL. */
const struct gpu_profile *gpu_profile_find(const char *name);

/*
 * name: a built-in row or a file path (contains '/' or ends in .ini/.profile, or is
 * not a row name). Fills *out; 0, -ENOENT (no such row or file) or -EINVAL (bad file),
 * err saying why in one line (file:line). Nothing is logged: `check` names the
 * experiment and case, `run` and `plan` log it.
 */
int gpu_profile_load(const char *name, struct gpu_profile *out, char *err, size_t errlen);
/* gpu_profile_load, a file read within timeout_ns (gpu_profile_load's: FSB_TIMEOUT_DEFAULT). */
int gpu_profile_load_within(const char *name, struct gpu_profile *out, uint64_t timeout_ns,
			    char *err, size_t errlen);
/* What our own kernels reached on a node (`gradsync gpu --calibrate`, gpu/gpu.h). */
struct profile_measure {
	double gemm_tflops;    /* our bf16 GEMM at 4096^3 .. 8192^3 */
	double stream_gbps;    /* our streaming reduce */
	double floor_us;       /* the pace of back-to-back tiny kernels */
	double bn_gbps;        /* the BatchNorm-like two-pass (0: not measured) */
	double layernorm_gbps; /* the LayerNorm-like row kernel (0: not measured) */
	double softmax_gbps;   /* the softmax-like row kernel (0: not measured) */
	int sm_count;          /* this GPU's SMs (0: unknown, the h200's) */
};

/* Our kernels' figures on the lent H200: what a calibration is scaled against. */
extern const struct profile_measure gpu_profile_h200_ours;

/*
 * The profile of a node measured with our own kernels: the h200 row scaled by how this
 * GPU's figures compare with the same kernels' figures on the H200: GEMM TFLOP/s for the
 * matrix rates, streaming GB/s for HBM, the tiny-kernel pace for the floor, and each
 * normalisation kernel's share of streaming for its class's share (batchnorm; norm;
 * softmax). Other shares and the host gap stay the h200's (our kernels imitate neither
 * cuBLAS's shape choices nor Python).
 */
void gpu_profile_calibrated(const struct profile_measure *m, const char *gpu_name,
			    struct gpu_profile *out);

/*
 * Tell *g the host's pace (us per tiny eager PyTorch op): its four host values
 * (launch_gap_us, launch_us, sublaunch_us, bwd_start_us) become base's times
 * pace / base->host_pace_us, as a host that many times slower runs eager PyTorch.
 * 0, or -EINVAL where pace is not positive or base does not say its own pace.
 */
int gpu_profile_set_host_pace(struct gpu_profile *g, const struct gpu_profile *base,
			      double pace_us);

/* Write *g in the file format. 0 or -EIO. */
int gpu_profile_write(FILE *f, const struct gpu_profile *g);

#endif
