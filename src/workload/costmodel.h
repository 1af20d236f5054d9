/*
 * The per-operator cost model: how long PyTorch eager takes for each operator a model
 * emits, forward and backward, on a GPU described by a profile (workload/gpu_profile.h).
 *
 * Time of one operator on the GPU:
 *   matrix ops (gemm, conv):
 *       t_mat = t0(precision) + flops / (rate(class, precision) * align)
 *   fused attention: its tiles on the SMs (attn_tiles_s below)
 *   memory-bound ops: t_mem = bytes / (hbm * eff(class, activation width))
 *   t = kernels * floor + max(t_mat, t_mem)   (floor: the shortest kernel's duration) `align` is the penalty cuBLAS pays when an
 * inner dimension is not a multiple of 8 (16-bit) or 4 (tf32) elements: the tensor-core
 * paths need aligned rows (GPT-2's 50257-word head runs at an eighth of the rate).
 * BatchNorm's per-channel reductions run one block per channel: the class's share of
 * HBM is scaled by C / (C + bn_channels_half), so few wide channels (ResNet's first
 * stage) stream far below a copy, and each channel adds bn_channel_ns, so many short
 * channels (ResNet-50's layer4 at small batches) take longer than their bytes; backward
 * has its own share, half and time per channel. Max pooling is bound by its window's
 * element work, not bytes: its ops count 32-bit elements whatever the precision.
 * The host issues the operators: each of its `calls` (Python module and dispatcher
 * calls forward, autograd nodes backward) costs launch_gap of CPU time, and each of its
 * kernels launch_us more, before the GPU may start it, so small kernels run at the
 * host's pace and big ones at the GPU's (the eager pipeline: start = max(GPU free, host
 * issued)). Autocast's casts are issued inside the op they feed (no call of their own
 * forward). launch_gap = 0 imitates CUDA graphs (no host time at all).
 */
#ifndef GS_WORKLOAD_COSTMODEL_H
#define GS_WORKLOAD_COSTMODEL_H

#include <stdbool.h>
#include <stdint.h>

enum precision {
	PREC_FP32 = 0, /* fp32 everywhere, TF32 off (cuBLAS and cuDNN) */
	PREC_TF32,     /* fp32 tensors, TF32 tensor cores for matmul and conv */
	PREC_AMP_BF16, /* autocast(bfloat16) over fp32 parameters */
	PREC_AMP_FP16, /* autocast(float16) over fp32 parameters */
	PREC_BF16,     /* parameters and activations in bf16, no autocast */
	PREC_COUNT,
};

/* The matrix unit a precision runs on: index into the profile's rate tables. */
enum matrix_kind { MX_FP32 = 0, MX_TF32, MX_BF16, MX_FP16, MX_COUNT };

enum op_class {
	OPC_GEMM = 0, /* cuBLAS matmul */
	OPC_CONV,     /* cuDNN convolution (and its layout transforms) */
	OPC_ATTN,     /* fused scaled-dot-product attention */
	OPC_ELEM,     /* element-wise: activations, adds, dropout */
	OPC_NORM,     /* LayerNorm / RMSNorm, row-wise */
	OPC_BN,       /* BatchNorm, two passes over NCHW */
	OPC_SOFTMAX,  /* row softmax / log-softmax of the loss */
	OPC_REDUCE,   /* column sums (bias gradients), pooling */
	OPC_EMBED,    /* embedding gather / scatter-add */
	OPC_CAST,     /* AMP dtype casts */
	OPC_POOL,     /* max / average pooling windows */
	OPC_COPY,     /* layout copies of transposed views (.contiguous()): strided reads */
	OPC_COUNT,
};

struct op {
	uint32_t layer;   /* the layer it belongs to (forward: runs in it; backward: its grads) */
	uint8_t cls;      /* enum op_class */
	uint8_t bwd;      /* 0 forward, 1 backward */
	uint16_t kernels; /* CUDA kernels it launches */
	uint16_t calls;   /* host calls that issue them (see above): 1 unless said */
	uint8_t window;   /* convolutions: the kernel side (3: cuDNN's Winograd paths) */
	uint8_t stride;   /* convolutions: the window's stride */
	uint8_t pass;     /* convolutions, and a linear's gradient GEMMs: enum conv_pass */
	uint16_t side;    /* convolutions: the output's side (conv_kind_of) */
	double inner;     /* convolutions: the GEMM view's size that sets the rate (conv_row) */
	double pixels;    /* convolutions: output pixels, batch x side^2 (conv_row) */
	uint32_t channels; /* BatchNorm: its channels; a column sum (bias gradient): its
			    * columns (0: unknown, no scaling) */
	uint32_t rows;     /* a column sum: the rows it sums (colsum_share) */
	double flops;
	double bytes;     /* read + written once */
	int64_t align_dim; /* matrix ops: the dimension whose alignment decides the path;
			    * attention: the sequence */
	uint32_t attn_bh;  /* attention: batch x heads, the (query or key) tiles' rows of
			    * work (0: unknown, the rate model of attn_eff alone) */
	uint16_t head_dim; /* attention: each head's width */
	uint8_t causal;    /* attention: a causal mask (a tile walks only the keys before it) */
	uint32_t bias_rows; /* forward GEMM of nn.Linear with its bias: the rows M (cuBLAS's
			     * bias-epilogue kernel, bias_gemm_share); 0 for every other op */
	uint32_t bias_cols; /* ... and its output features N */
	uint32_t grad_rows; /* the gradients' GEMMs of a linear: its rows M (grad_gemm_share);
			     * 0 for every other op */
	uint8_t promote;  /* element-wise with a 16-bit operand promoted into an fp32 result
			   * (autocast's residual add: promote_share) */
	uint8_t f32;      /* runs on 32-bit data whatever the precision (the loss over logits
			   * made fp32, nll_loss under autocast): the classes' 32-bit share */
	double fixed_s;   /* > 0: a recorded duration (op_trace), played as is, no host gap */
	const char *what; /* static: "gemm", "gemm.dgrad", "bn.bwd", ... */
};

/*
 * Convolutions by shape and pass. cuDNN picks an algorithm per pass and shape, so one rate
 * per direction is right on average and wrong per layer (fp32 weight gradients of 1x1
 * windows at 8-10 TFLOP/s, of 3x3 at 65-110, on the same H200). A conv_row holds, per pass,
 * for each kind (window and stride):
 *   rate = matrix_tflops * share[kind] * F / (F + gflop_half) * n / (n + inner_half[kind])
 *          * P / (P + pixels_half)
 * F the op's FLOPs (the saturation: a fixed ramp and tail of gflop_half / peak seconds),
 * n the GEMM view's size that bounds the tiles' reuse: Cin k^2 forward (the implicit GEMM's
 * inner dimension), Cout k^2 for the data gradient, Cout Cin k^2 for the weight gradient
 * (its output: too few output tiles for the SMs and cuDNN splits the reduction). A kind
 * whose share is 0 (or another window: ViT's 16x16 patches) takes conv_eff / conv_bwd_eff.
 * A 3x3 window at stride 1 over an output of at most CONV_SMALL_SIDE a side is its own kind
 * (CK_3S1_SMALL): too few of Winograd's tiles, so in fp32 cuDNN runs plain kernels there
 * (ResNet's 512-channel 3x3 at 7 x 7: data gradient at 22-28 TFLOP/s at every batch, the
 * 3x3 shapes that take Winograd at 57-106); a row that leaves it 0 (the tensor cores'
 * precisions, which use no Winograd) takes its 3x3 entry. A 1x1 at stride 1 over such an
 * output is one too (CK_1S1_SMALL): ResNet-50's layer4, whose fp32 weight gradients cuDNN
 * runs at 27-30 TFLOP/s where the 1x1 shapes of the earlier stages, with weights a quarter
 * the size, reach 14.5 (a jump the saturating form of one row cannot follow); a row that
 * leaves it 0 takes its 1x1 entry. P, the output pixels (batch x side^2: the rows of
 * the implicit GEMM), starves cuDNN's kernels where it is small: its 16-bit and tf32 3x3
 * kernels over ResNet's 7 x 7 outputs ran at half their kind's rate at batch 8 and at
 * 1.3-1.8 times it at 256, the larger outputs alike at every batch; a row leaves
 * pixels_half 0 where its fit gains nothing from it (fp32's weight gradients).
 */
enum conv_kind {
	CK_1S1 = 0,
	CK_1S2,
	CK_3S1,
	CK_3S2,
	CK_7S2,
	CK_3S1_SMALL,
	CK_1S1_SMALL,
	CK_COUNT
};
#define CONV_SMALL_SIDE 7
enum conv_pass { CP_FWD = 0, CP_DGRAD, CP_WGRAD, CP_COUNT };

struct conv_row {
	double share[CK_COUNT];      /* peak rate as a share of matrix_tflops */
	double inner_half[CK_COUNT]; /* the GEMM view's size at half the rate */
	double gflop_half;           /* GFLOP at half the rate (ramp and tail) */
	double pixels_half;          /* output pixels at half the rate (0: no term) */
};

/* What one GPU does: a row of the profile table or a file (workload/gpu_profile.h). */
struct gpu_profile {
	char name[32];
	char source[256];                   /* "measured ...", "datasheet ..." or "calibrated ...", "; host at ..." when rescaled */
	double matrix_tflops[MX_COUNT];     /* achieved dense GEMM rate */
	double matrix_t0_us[MX_COUNT];      /* fixed cost of a GEMM (ramp, tail wave) */
	double conv_eff[MX_COUNT];          /* cuDNN conv rate as a share of the GEMM rate */
	double conv_bwd_eff[MX_COUNT];      /* the same for data and weight gradients */
	double conv3_gain[MX_COUNT];        /* 3x3 windows: Winograd's fewer multiplies */
	struct conv_row conv_shape[MX_COUNT][CP_COUNT]; /* by shape, where measured */
	double attn_eff[MX_COUNT];          /* fused attention rate as a share of GEMM
					     * (with sm_count: an SM's rate on its tiles as a
					     * share of its part of the GEMM rate) */
	double attn_bwd_eff[MX_COUNT];      /* its backward's (0: attn_eff) */
	double attn_tile_us[MX_COUNT];      /* fused attention's fixed microseconds per tile
					     * (with sm_count: attn_tiles_s), forward */
	double attn_bwd_tile_us[MX_COUNT];  /* the same for its backward */
	double attn_width_exp[MX_COUNT];    /* fused attention forward at head width d: the
					     * share times (d / ATTN_WIDTH_REF)^this (0: the
					     * same share at every width) */
	double attn_bwd_width_exp[MX_COUNT]; /* the same for its backward */
	double sm_count;                    /* streaming multiprocessors: attention's tiles
					     * run one per SM at a time (0: no tile model) */
	double attn_odd_gain[MX_COUNT];     /* forward over a sequence no multiple of 8: the
					     * rate times this (0: no change) */
	double attn_bwd_odd_gain[MX_COUNT]; /* the same for its backward */
	double align2_eff[MX_COUNT];        /* GEMM share when align_dim is even, unaligned */
	double align1_eff[MX_COUNT];        /* GEMM share when align_dim is odd */
	double align1_bwd_eff[MX_COUNT];    /* the same for the gradients' GEMMs (cuBLAS's
					     * nn / nt kernels for them are faster) */
	double bias_gemm_share[MX_COUNT];   /* forward GEMM of a linear with its bias: the rate
					     * share of cuBLAS's small (64 x 64) output tiles,
					     * against the full rate of 128 x 128 ones, each by its
					     * waves over sm_count (gemm_wave_share; 0: not
					     * measured, the full rate) */
	double grad_gemm_share[MX_COUNT];   /* a linear's gradient GEMMs (data and weight) with
					     * fewer than grad_gemm_rows rows: rate share (0: not
					     * measured) */
	double grad_gemm_rows[MX_COUNT];    /* the rows M from which they run at the full rate */
	double grad_gemm_weight[MX_COUNT];  /* the weight's elements (N x K) from which they
					     * run at it at any M (0: no bound) */
	double wgrad_gemm_share[MX_COUNT];  /* the weight gradient's own share where it
					     * differs (0: grad_gemm_share for both) */
	double hbm_gbps;                    /* streaming bandwidth, GB/s */
	double bn_hbm_gbps;                 /* the bandwidth BatchNorm's shares are of (0:
					     * hbm_gbps): its kernels' rate follows the SMs
					     * more than the memory */
	double mem_eff[OPC_COUNT][2];       /* share of hbm per class; [0] 32-bit, [1] 16-bit */
	double patch_eff[MX_COUNT];         /* a convolution's forward over a window wider
					     * than 7: share of the GEMM rate, cuDNN's layout
					     * transposes included (0: conv_eff) */
	double patch_bwd_eff[MX_COUNT];     /* a convolution's gradients over a window wider
					     * than 7 (ViT's patches, 3 input channels): share
					     * of the GEMM rate (0: conv_bwd_eff) */
	double colsum_share[2];             /* column sums (a linear's bias gradient): share of
					     * hbm at many rows and columns, 32- / 16-bit (0: the
					     * reduce class's share) */
	double colsum_half[2];              /* the columns and the rows at half that share */
	double softmax_bwd_gain[2];         /* log_softmax's backward: its share of hbm as a
					     * multiple of the softmax class's, 32- / 16-bit
					     * (0: the class's own) */
	double softmax_odd_gain[2];         /* log_softmax's forward over an odd number of
					     * classes (rows without paired loads): the class's
					     * share times this, 32- / 16-bit (0: no change) */
	double promote_share;               /* an element-wise op mixing a 16-bit and an fp32
					     * operand (PyTorch's unrolled dtype-casting kernel,
					     * not the vectorized one): share of hbm (0: the
					     * class's) */
	double widen_share;                 /* a cast from 16 bits up to fp32 (the same
					     * unrolled kernel): share of hbm (0: promote_share) */
	double bn_channels_half[2];         /* BatchNorm: channels at half its share; [0]
					     * cuDNN's kernels (fp32; fp16 autocast), [1]
					     * PyTorch's native ones (bf16 inputs):
					     * precision_bn_cudnn() */
	double bn_channel_ns[2];            /* BatchNorm's forward: nanoseconds per channel
					     * beside its bytes (0: none) */
	double bn_bwd_share[2];             /* BatchNorm's backward: share of hbm (0: the
					     * class's, mem_eff.batchnorm) */
	double bn_bwd_channels_half[2];     /* its channels at half that share (0:
					     * bn_channels_half) */
	double bn_bwd_channel_ns[2];        /* its nanoseconds per channel (0: none) */
	double bn_half_gain[2];             /* cuDNN's BatchNorm over 16-bit elements (fp16
					     * autocast): its share, [0] forward's and [1]
					     * backward's, times this (0: no change) */
	double floor_us;                    /* shortest kernel */
	double kernel_gap_us;               /* the GPU's idle between two kernels queued
					     * back to back on one stream (its dispatch of
					     * the next; hidden where it waits for the host) */
	double launch_gap_us;               /* host time per forward call in eager mode */
	double bwd_gap_share;               /* backward's host time per autograd node, as a
					     * share of launch_gap (the C++ engine issues
					     * them, no Python modules) */
	double launch_us;                   /* host time to launch one kernel */
	double sublaunch_us;                /* host time of each further kernel one library
					     * call launches (cuDNN's transposes and
					     * transforms, a memset before a reduce: no
					     * dispatch of their own; 0: launch_us) */
	double host_pace_us;                /* the host the four host values above and below
					     * describe: us per tiny eager PyTorch op (the
					     * probe of measure_torch_step.py); 0: unknown */
	double bwd_start_us;                /* host time per forward call before backward's
					     * first node runs (the engine walks the graph) */
};

/* How a run is costed: the profile, the precision and the host gap (< 0: profile's). */
struct cost_params {
	const struct gpu_profile *gpu;
	int precision;      /* enum precision */
	double launch_gap_us;
};

const char *precision_name(int precision);
/* What the precision means, for `gradsync keys` ("" out of range). */
const char *precision_help(int precision);
/* -1 if unknown */
int precision_find(const char *name);
bool precision_is_amp(int precision);
/* bytes of an activation element (2 under autocast and bf16, else 4) */
int precision_act_bytes(int precision);
/*
 * Whether PyTorch runs BatchNorm on cuDNN (its bn_fw_tr / bn_bw kernels) rather than its
 * own native kernels: cuDNN takes fp32 inputs, and fp16 inputs with fp32 weights (fp16
 * autocast), never bf16 (profiler: the H200's fp32 and the H100's amp_fp16 steps run
 * cuDNN's, amp_bf16's and a bf16 model's the native statistics / transform / backward).
 * The batchnorm rows' [0] are cuDNN's, [1] the native kernels'.
 */
bool precision_bn_cudnn(int precision);
enum matrix_kind precision_matrix(int precision);
const char *op_class_name(int cls);

/* The kind of a convolution of window k and stride s over an output of `side` a side;
 * -1 where the table has none. */
int conv_kind_of(int k, int s, int side);

/*
 * Fused attention as its kernels run it (FlashAttention's and cuDNN's alike): each of the
 * batch x heads rows of work splits the sequence into tiles of ATTN_TILE queries (its
 * backward: keys), a CTA each and one CTA per SM at a time; a tile walks the keys (the
 * queries) in blocks of ATTN_TILE, all of them, or under a causal mask only those before
 * it, so tiles of 1..n blocks. A tile takes tile_s plus block_s per block, and the op lasts
 * as long as the busiest SM when the longest tiles are handed out first. So a small batch
 * at a long sequence, too few tiles for the SMs, runs at the pace of its longest tile (GPT-2
 * at 2 x 512: under half the rate of 8 x 1024), and a short sequence pays its tiles' fixed
 * cost (BERT's 128 tokens: one block a tile). ATTN_TILE: FlashAttention-2's 128-row tiles
 * for heads of 64, taken as given before any fit, not chosen by one.
 */
#define ATTN_TILE 128
#define ATTN_MAX_SMS 1024
/* the head width the attention shares were fitted at (BERT, GPT-2, ViT: 64); wider heads
 * run at a higher share of the GEMM rate (more matrix work per pair of the softmax's;
 * cuDNN at 128: about 3x 64's rate per FLOP on the H200), attn_width_exp */
#define ATTN_WIDTH_REF 64

/* the most tiles of a causal op played one by one in the grid's order (attn_tiles_s) */
#define ATTN_GRID_TILES 65536

/* Seconds of `bh` rows of tiles over a sequence of seq on sms SMs, each tile tile_s plus
 * block_s per block it walks, each to the SM that frees first. Causal rows in the grid's
 * order, each row's tiles longest first (the hardware does not sort the grid; of the two
 * orders within a row, longest first fitted the fit cases' kernels better); past
 * ATTN_GRID_TILES, and rows of equal tiles, the longest first over the whole op. Pure;
 * sms is 1..ATTN_MAX_SMS. */
double attn_tiles_s(uint32_t bh, int64_t seq, bool causal, int sms, double tile_s,
		    double block_s);

/*
 * A GEMM's share of the matrix rate by its output's tiles: cuBLAS picks, per shape, 128 x
 * 128 tiles at the full rate or 64 x 64 ones at small_share, and the tiles run in waves of
 * sms, a last wave part empty taking a whole one's time; the faster of the two (fp32
 * F.linear on the H200, micro gemm_waves: 3152 x 1024 outputs, 200 tiles of 128 in two
 * waves, 76% filled, measured 0.78). 1 where rows, cols or sms is unknown. Pure.
 */
double gemm_wave_share(double rows, double cols, double sms, double small_share);

/* GPU seconds of one operator (no host gap). Pure. */
double cost_op_gpu_s(const struct cost_params *cp, const struct op *o);

/* Host seconds to issue one operator. */
double cost_op_host_s(const struct cost_params *cp, const struct op *o);
/* Host time between the call of backward and its first node: bwd_start_us per forward
 * call of ops[0..n) (0 under CUDA graphs and for recorded segments, which hold theirs). */
double cost_bwd_start_s(const struct cost_params *cp, const struct op *ops, uint32_t n);

/*
 * The eager pipeline over a sequence of ops: *gpu_t and *host_t advance (seconds).
 * Returns the op's end on the GPU; *span_s (when not NULL) gets its span queued behind
 * another op: its kernels and the dispatch gap before each (kernel_gap_us; none for a
 * recorded segment).
 */
double cost_issue(const struct cost_params *cp, const struct op *o, double *host_t,
		  double *gpu_t, double *span_s);

#endif
