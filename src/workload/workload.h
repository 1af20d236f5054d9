/* [workload] options: the synthetic DDP job (model, buckets, compute model). */
#ifndef GS_WORKLOAD_WORKLOAD_H
#define GS_WORKLOAD_WORKLOAD_H

#include <stdint.h>
#include <stdbool.h>
#include <string.h>

enum compute_mode {
	COMPUTE_NONE = 0,  /* communication alone */
	COMPUTE_SLEEP,     /* replay the modelled compute timeline by sleeping (CPU-only nodes) */
	COMPUTE_GEMM,      /* our tensor-core GEMM sized to each layer (GPU) */
	COMPUTE_SPIN,      /* a kernel that occupies the SMs for the modelled time (GPU) */
	COMPUTE_COUNT,
};

/* The compute modes' one table: name ([workload] compute, report.json) and help. */
struct compute_mode_row {
	const char *name;
	const char *help;
};

static inline const struct compute_mode_row *compute_mode_row(int m)
{
	static const struct compute_mode_row rows[COMPUTE_COUNT] = {
		[COMPUTE_NONE] = { "none", "no compute: communication alone" },
		[COMPUTE_SLEEP] = { "sleep", "replay the modelled compute timeline by sleeping (CPU-only nodes)" },
		[COMPUTE_GEMM] = { "gemm", "our tensor-core GEMM sized to each layer (GPU)" },
		[COMPUTE_SPIN] = { "spin", "a kernel occupying the SMs for the modelled time (GPU)" },
	};
	return m >= 0 && m < COMPUTE_COUNT ? &rows[m] : &rows[COMPUTE_SPIN];
}

static inline const char *compute_mode_name(int m)
{
	return compute_mode_row(m)->name;
}

#define WORKLOAD_LAYERS_MAX 4096
#define GRAD_DTYPE_AUTO (-1) /* the parameters' own dtype, as DDP reduces them */

/* [workload] section, resolved by config/. model "none" = collective benchmark. */
struct workload_opts {
	char model[32];
	int batch;                 /* per-rank batch size */
	bool batch_set;            /* batch was given (model = trace: the trace's own otherwise) */
	int seq_len;               /* transformers: tokens per sample */
	int image_size;            /* vision models: pixels per side */
	uint64_t bucket_cap;       /* bytes, DDP's bucket_cap_mb */
	bool bucket_cap_set;       /* bucket_cap was given (file, sweep or flag) */
	/* bytes, 0 = auto: DDP's rebuilt buckets start with a 1 MiB bucket when bucket_cap_mb
	 * is left unset, and with no special first bucket (recent PyTorch) when it is set;
	 * bucket_first_cap() resolves it. */
	uint64_t first_bucket_cap;
	int grad_dtype;            /* enum dtype, or GRAD_DTYPE_AUTO: model_grad_dtype() */
	int compute;               /* enum compute_mode */
	double gpu_tflops;         /* > 0: GEMM TFLOP/s replacing the profile's matrix rate */
	int precision;             /* enum precision (workload/costmodel.h) */
	uint64_t launch_gap_ns;    /* host time per eager kernel; UINT64_MAX = the profile's */
	char gpu_profile[256];     /* [gpu] profile: a built-in row or a profile FILE */
	char op_trace[256];        /* model = trace: the recorded step to replay */
	bool overlap;              /* launch each bucket when ready (DDP) vs after backward */
	int iterations;
	int warmup;
	/* Llama-style decoder shape; 0 = the preset's value. */
	int hidden_size;
	int num_layers;
	int num_heads;
	int num_kv_heads;
	int ffn_size;
	int vocab_size;
	char layers[WORKLOAD_LAYERS_MAX]; /* model = custom: "name:params[:gflops], ..." */
};

/* Does the case run a DDP workload (any model but "none", the [collective] benchmark)? */
static inline bool workload_has_model(const struct workload_opts *w)
{
	return strcmp(w->model, "none") != 0;
}

#endif
