/* The per-operator cost model: pure functions of an op, a GPU profile and a precision. */
#include <math.h>
#include <string.h>

#include "util/common.h"
#include "workload/costmodel.h"

/* The precision vocabulary, [workload] precision's one list: name and what it means. */
static const struct {
	const char *name;
	const char *help;
} precisions[PREC_COUNT] = {
	[PREC_FP32] = { "fp32", "fp32 everywhere, TF32 off (torch.backends ... allow_tf32 = False)" },
	[PREC_TF32] = { "tf32", "fp32 tensors, TF32 tensor cores for matmul and convolution" },
	[PREC_AMP_BF16] = { "amp_bf16", "torch.autocast(bfloat16) over fp32 parameters" },
	[PREC_AMP_FP16] = { "amp_fp16", "torch.autocast(float16) over fp32 parameters" },
	[PREC_BF16] = { "bf16", "bf16 parameters and activations, no autocast" },
};

static const char *const class_names[OPC_COUNT] = {
	[OPC_GEMM] = "gemm", [OPC_CONV] = "conv", [OPC_ATTN] = "attention",
	[OPC_ELEM] = "elementwise", [OPC_NORM] = "norm", [OPC_BN] = "batchnorm",
	[OPC_SOFTMAX] = "softmax", [OPC_REDUCE] = "reduce", [OPC_EMBED] = "embedding",
	[OPC_CAST] = "cast", [OPC_POOL] = "pool", [OPC_COPY] = "copy",
};

const char *precision_name(int p)
{
	return p >= 0 && p < PREC_COUNT ? precisions[p].name : "?";
}

const char *precision_help(int p)
{
	return p >= 0 && p < PREC_COUNT ? precisions[p].help : "";
}

int precision_find(const char *name)
{
	for (int p = 0; p < PREC_COUNT; p++) {
		if (strcmp(precisions[p].name, name) == 0)
			return p;
	}
	return -1;
}

const char *op_class_name(int cls)
{
	return cls >= 0 && cls < OPC_COUNT ? class_names[cls] : "?";
}

bool precision_is_amp(int p)
{
	return p == PREC_AMP_BF16 || p == PREC_AMP_FP16;
}

int precision_act_bytes(int p)
{
	return p == PREC_FP32 || p == PREC_TF32 ? 4 : 2;
}

bool precision_bn_cudnn(int p)
{
	return p != PREC_AMP_BF16 && p != PREC_BF16;
}

enum matrix_kind precision_matrix(int p)
{
	switch (p) {
	case PREC_TF32:
		return MX_TF32;
	case PREC_AMP_BF16:
	case PREC_BF16:
		return MX_BF16;
	case PREC_AMP_FP16:
		return MX_FP16;
	default:
		return MX_FP32;
	}
}

/* Tensor-core paths want rows aligned to 16 bytes; cuBLAS falls back to 4-byte (even
 * 16-bit dims) or 2-byte (odd) loads otherwise. fp32 SIMT does not care. The gradients'
 * GEMMs of an odd dimension run other kernels (nn / nt layouts) than forward's (tn). */
static double align_share(const struct gpu_profile *g, enum matrix_kind mx, int64_t dim,
			  bool bwd)
{
	if (dim <= 0 || mx == MX_FP32 || dim % (mx == MX_TF32 ? 4 : 8) == 0)
		return 1;
	if (mx != MX_TF32 && dim % 2 == 0)
		return g->align2_eff[mx];
	return bwd && g->align1_bwd_eff[mx] > 0 ? g->align1_bwd_eff[mx] : g->align1_eff[mx];
}

/* The share of the SMs a grid of tile x tile output tiles keeps busy: the tiles are dealt
 * out in waves of sms, and a last wave part empty takes as long as a full one. */
static double wave_fill(double rows, double cols, double tile, double sms)
{
	double tiles = ceil(rows / tile) * ceil(cols / tile);

	return tiles / (ceil(tiles / sms) * sms);
}

double gemm_wave_share(double rows, double cols, double sms, double small_share)
{
	if (!(rows >= 1) || !(cols >= 1) || !(sms >= 1))
		return 1;
	return fmax(wave_fill(rows, cols, 128, sms),
		    small_share * wave_fill(rows, cols, 64, sms));
}

/* A linear's forward with its bias (F.linear; cuBLAS's bias-epilogue kernels) by its
 * output tiles' waves (gemm_wave_share); gradients and bias-free linears never take it. */
static double bias_share(const struct gpu_profile *g, enum matrix_kind mx, const struct op *o)
{
	if (!o->bias_rows || o->bwd || !(g->bias_gemm_share[mx] > 0))
		return 1;
	return gemm_wave_share(o->bias_rows, o->bias_cols, g->sm_count, g->bias_gemm_share[mx]);
}

/* A linear's gradient GEMMs over few rows M (fp32 on the H200: 0.91 of the matrix rate below
 * 4096 rows, micro gemm_waves): cuBLAS's kernels for them fill the SMs less, unless the
 * weight is large (a vocabulary head: N x K tiles enough at any M). */
static double grad_share(const struct gpu_profile *g, enum matrix_kind mx, const struct op *o)
{
	if (!o->grad_rows || !o->bwd || !(g->grad_gemm_share[mx] > 0) ||
	    o->grad_rows >= g->grad_gemm_rows[mx])
		return 1;
	if (g->grad_gemm_weight[mx] > 0 &&
	    o->flops / (2.0 * o->grad_rows) >= g->grad_gemm_weight[mx])
		return 1;
	if (o->pass == CP_WGRAD && g->wgrad_gemm_share[mx] > 0)
		return g->wgrad_gemm_share[mx];
	return g->grad_gemm_share[mx];
}

int conv_kind_of(int k, int s, int side)
{
	if (k == 3 && s == 1 && side > 0 && side <= CONV_SMALL_SIDE)
		return CK_3S1_SMALL;
	if (k == 1 && s == 1 && side > 0 && side <= CONV_SMALL_SIDE)
		return CK_1S1_SMALL;
	if ((k == 1 || k == 3) && (s == 1 || s == 2))
		return (k == 1 ? CK_1S1 : CK_3S1) + (s == 2 ? 1 : 0);
	return k == 7 && s == 2 ? CK_7S2 : -1;
}

/* A convolution's rate (FLOP/s): its shape's row where the profile has one, else one
 * share per direction (and Winograd's gain for 3x3 windows). */
static double conv_rate(const struct gpu_profile *g, enum matrix_kind mx, const struct op *o)
{
	const struct conv_row *r = &g->conv_shape[mx][o->pass < CP_COUNT ? o->pass : CP_FWD];
	double rate = g->matrix_tflops[mx] * 1e12;
	int k = conv_kind_of(o->window, o->stride, o->side);

	if (k == CK_3S1_SMALL && !(r->share[k] > 0))
		k = CK_3S1;
	if (k == CK_1S1_SMALL && !(r->share[k] > 0))
		k = CK_1S1;

	if (k >= 0 && r->share[k] > 0 && o->inner > 0) {
		rate *= r->share[k] * o->flops / (o->flops + r->gflop_half * 1e9) * o->inner /
			(o->inner + r->inner_half[k]);
		if (r->pixels_half > 0 && o->pixels > 0)
			rate *= o->pixels / (o->pixels + r->pixels_half);
		return rate;
	}
	/* ViT's patch embedding: 3 input channels under a 16 x 16 window, which cuDNN's
	 * 16-bit kernels run at a twentieth to a thirtieth of the rate both ways (NCHW
	 * transposes included) */
	if (o->bwd && o->window > 7 && g->patch_bwd_eff[mx] > 0)
		return rate * g->patch_bwd_eff[mx];
	if (!o->bwd && o->window > 7 && g->patch_eff[mx] > 0)
		return rate * g->patch_eff[mx];
	rate *= o->bwd ? g->conv_bwd_eff[mx] : g->conv_eff[mx];
	if (o->window == 3 && g->conv3_gain[mx] > 0)
		rate *= g->conv3_gain[mx];
	return rate;
}

/* BatchNorm's time from its bytes by shape: one block per channel, so few channels leave
 * SMs idle (ResNet's first stage: the share times C / (C + half)) and each channel costs
 * a fixed time besides (the blocks' reductions in turn: ResNet-50's layer4, 2048 channels
 * of 7 x 7 per image, is slower than its bytes); backward's kernels have their own. The
 * rows' column is the kernel family (precision_bn_cudnn), not the element size; cuDNN's
 * over 16-bit elements takes bn_half_gain of its share. */
static double bn_s(const struct gpu_profile *g, const struct op *o, int precision)
{
	int wide = !precision_bn_cudnn(precision);
	double eff = g->mem_eff[OPC_BN][wide] > 0 ? g->mem_eff[OPC_BN][wide] : 1;
	double ch = g->bn_channels_half[wide], ns = g->bn_channel_ns[wide];
	double gain = !wide && precision_act_bytes(precision) == 2 ? g->bn_half_gain[o->bwd] : 0;

	if (o->bwd) {
		if (g->bn_bwd_share[wide] > 0)
			eff = g->bn_bwd_share[wide];
		if (g->bn_bwd_channels_half[wide] > 0)
			ch = g->bn_bwd_channels_half[wide];
		ns = g->bn_bwd_channel_ns[wide];
	}
	if (o->channels && ch > 0)
		eff *= o->channels / (o->channels + ch);
	if (gain > 0)
		eff *= gain;
	double gbps = g->bn_hbm_gbps > 0 ? g->bn_hbm_gbps : g->hbm_gbps;

	return o->bytes / (gbps * 1e9 * eff) + o->channels * fmax(ns, 0) * 1e-9;
}

/* Calls that launch nothing (views, transposes, reshapes): host time only. */
static bool host_only(const struct op *o)
{
	return !o->kernels && !(o->flops > 0) && !(o->bytes > 0) && !(o->fixed_s > 0);
}

/* Fused attention's share of the GEMM rate: its own per direction, scaled by the head
 * width's (attn_width_exp), and a sequence that is no multiple of 8 (ViT's 197 tokens:
 * align_dim) another kernel's. */
static double attn_share(const struct gpu_profile *g, enum matrix_kind mx, const struct op *o)
{
	double eff = o->bwd && g->attn_bwd_eff[mx] > 0 ? g->attn_bwd_eff[mx] : g->attn_eff[mx];
	double odd = o->bwd ? g->attn_bwd_odd_gain[mx] : g->attn_odd_gain[mx];
	double wexp = o->bwd ? g->attn_bwd_width_exp[mx] : g->attn_width_exp[mx];

	/* the width's exponent was fitted on cuDNN's kernels (even sequences); the other
	 * kernel of an odd sequence keeps its share at every width (vit_h_14's 80 over 257
	 * tokens runs slower than width 64's share, not faster) */
	if (o->align_dim % 8 && odd > 0)
		return eff * odd;
	/* never past the GEMM's own rate (a width of 256 would otherwise extrapolate there) */
	if (o->head_dim && wexp != 0)
		eff = fmin(eff * pow((double)o->head_dim / ATTN_WIDTH_REF, wexp), fmax(eff, 1));
	return eff;
}

/* Restore the min-heap h[0..n) after h[i] grew: the root is the SM that frees first. */
static void sift_down(double *h, int n, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		double t;

		if (l < n && h[l] < h[m])
			m = l;
		if (r < n && h[r] < h[m])
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

double attn_tiles_s(uint32_t bh, int64_t seq, bool causal, int sms, double tile_s,
		    double block_s)
{
	double load[ATTN_MAX_SMS] = { 0 }, tmp[ATTN_MAX_SMS];
	int64_t n = (seq + ATTN_TILE - 1) / ATTN_TILE;

	if (sms < 1 || sms > ATTN_MAX_SMS || !bh || n < 1)
		return 0;
	/*
	 * Causal: the block scheduler hands the grid out in its order, each tile to the SM
	 * that frees first: row after row, a row's tiles longest first (fit_attn.py: the
	 * lower objective of the two orders within a row). Past ATTN_GRID_TILES
	 * the longest-first grouping below, which any order approaches there (the busiest SM
	 * within a tile of the mean).
	 */
	if (causal && (uint64_t)bh * (uint64_t)n <= ATTN_GRID_TILES) {
		double end = 0;

		for (uint32_t r = 0; r < bh; r++) {
			for (int64_t len = n; len >= 1; len--) {
				load[0] += tile_s + (double)len * block_s;
				if (load[0] > end)
					end = load[0];
				sift_down(load, sms, 0);
			}
		}
		return end;
	}
	/*
	 * The longest first, a group of equal tiles at a time, the loads kept in ascending
	 * order: whole rounds of sms tiles raise every SM alike, the rest go to the least
	 * loaded (the first `rest`), and the two sorted runs are merged back into order.
	 * Causal: bh tiles of each length n..1; else bh x n tiles of n blocks.
	 */
	for (int64_t len = n; len >= (causal ? 1 : n); len--) {
		uint64_t count = causal ? bh : (uint64_t)bh * (uint64_t)n;
		double t = tile_s + (double)len * block_s;
		int rest = (int)(count % (uint64_t)sms), a = 0, b, k = 0;

		for (int i = 0; i < sms; i++)
			load[i] += (double)(count / (uint64_t)sms) * t + (i < rest ? t : 0);
		for (b = rest; a < rest || b < sms;)
			tmp[k++] = b >= sms || (a < rest && load[a] <= load[b]) ? load[a++] : load[b++];
		memcpy(load, tmp, (size_t)sms * sizeof(load[0]));
	}
	return load[sms - 1];
}

/* Fused attention by its tiles (attn_tiles_s): a block is 4 T^2 d FLOPs forward, the op's
 * FLOPs per unmasked query-key pair scaled alike backward, at the SM's share of the GEMM
 * rate. 0 where the op or the profile lacks what the tiles need (the rate model then). */
static double attn_tiles_gpu_s(const struct gpu_profile *g, enum matrix_kind mx,
			       const struct op *o, double rate)
{
	double pairs, block_s, tile_s;

	/* the count is cast to int below: past ATTN_MAX_SMS it would not fit, and
	 * attn_tiles_s refuses it anyway */
	if (!(g->sm_count >= 1) || g->sm_count > ATTN_MAX_SMS || !o->attn_bh || !o->head_dim ||
	    o->align_dim < 1 || !(rate > 0))
		return 0;
	/* query-key pairs the op's FLOPs count (half the square under a causal mask) */
	pairs = (double)o->attn_bh * (double)o->align_dim * (double)o->align_dim *
		(o->causal ? 0.5 : 1.0);
	block_s = o->flops / pairs * ATTN_TILE * ATTN_TILE / (rate / g->sm_count);
	tile_s = (o->bwd ? g->attn_bwd_tile_us[mx] : g->attn_tile_us[mx]) * 1e-6;
	return attn_tiles_s(o->attn_bh, o->align_dim, o->causal, (int)g->sm_count, tile_s,
			    block_s);
}

double cost_op_gpu_s(const struct cost_params *cp, const struct op *o)
{
	const struct gpu_profile *g = cp->gpu;
	enum matrix_kind mx = precision_matrix(cp->precision);
	int wide = precision_act_bytes(cp->precision) == 2;
	double floor_s = (o->kernels ? o->kernels : 1) * g->floor_us * 1e-6;
	double mat = 0, mem = 0, rate, eff;

	if (o->fixed_s > 0)
		return o->fixed_s;
	if (host_only(o))
		return 0;
	if (o->flops > 0 && (o->cls == OPC_GEMM || o->cls == OPC_CONV || o->cls == OPC_ATTN)) {
		rate = g->matrix_tflops[mx] * 1e12;
		if (o->cls == OPC_CONV)
			rate = conv_rate(g, mx, o);
		else if (o->cls == OPC_ATTN)
			rate *= attn_share(g, mx, o);
		else {
			double a = align_share(g, mx, o->align_dim, o->bwd);

			/* an unaligned dimension's kernel: its own measured share, the
			 * gradients' too (TF32's heads: backward's GEMMs 0.98-1.15x
			 * forward's time, where the aligned share made them 1.19x) */
			rate *= a < 1 ? a : bias_share(g, mx, o) * grad_share(g, mx, o);
		}
		if (o->cls == OPC_ATTN)
			mat = attn_tiles_gpu_s(g, mx, o, rate);
		if (!(mat > 0) && rate > 0)
			mat = g->matrix_t0_us[mx] * 1e-6 + o->flops / rate;
	}
	if (o->bytes > 0 && o->cls == OPC_BN) {
		mem = bn_s(g, o, cp->precision);
	} else if (o->bytes > 0) {
		/* pooling counts 32-bit elements (window work), whatever the precision; an op
		 * on fp32 data under autocast streams as in fp32 */
		if (o->cls == OPC_POOL || o->f32)
			wide = 0;
		eff = g->mem_eff[o->cls < OPC_COUNT ? o->cls : OPC_ELEM][wide];
		if (!(eff > 0))
			eff = 1;
		if (o->cls == OPC_SOFTMAX && o->bwd && g->softmax_bwd_gain[wide] > 0)
			eff = fmin(1.0, eff * g->softmax_bwd_gain[wide]);
		if (o->cls == OPC_SOFTMAX && !o->bwd && o->align_dim % 2 &&
		    g->softmax_odd_gain[wide] > 0)
			eff *= g->softmax_odd_gain[wide];
		/* a bias gradient's column sum: PyTorch's reduce kernel splits the rows over
		 * blocks and adds the partial sums; few columns or rows leave it far below a
		 * stream (768 columns at 0.2-0.3 of HBM, 3072 at 0.45-0.67) */
		if (o->cls == OPC_REDUCE && o->channels && o->rows && g->colsum_share[wide] > 0)
			eff = g->colsum_share[wide] * o->channels /
			      (o->channels + g->colsum_half[0]) * o->rows /
			      (o->rows + g->colsum_half[1]);
		/* autocast's residual add, a 16-bit branch into the fp32 stream: the
		 * dtype-casting kernel, unvectorized */
		if (o->promote && g->promote_share > 0)
			eff = g->promote_share;
		if (o->promote && o->cls == OPC_CAST && g->widen_share > 0)
			eff = g->widen_share;
		mem = o->bytes / (g->hbm_gbps * 1e9 * eff);
	}
	return floor_s + fmax(mat, mem);
}

double cost_op_host_s(const struct cost_params *cp, const struct op *o)
{
	double gap = cp->launch_gap_us >= 0 ? cp->launch_gap_us : cp->gpu->launch_gap_us;
	double launch = cp->gpu->launch_us;

	if (o->fixed_s > 0)
		return 0; /* a recorded segment already holds its host time */
	if (cp->launch_gap_us == 0)
		return 0; /* CUDA graphs: the whole step is one launch */
	double sub = cp->gpu->sublaunch_us > 0 ? cp->gpu->sublaunch_us : launch;
	int kernels = host_only(o) ? 0 : o->kernels ? o->kernels : 1;
	/* one dispatched launch per call (a call-less op, a cast or a same-node kernel, is
	 * one); the call's further kernels come from inside the library */
	int first = GS_MIN(kernels, GS_MAX((int)o->calls, 1));

	if (o->bwd && cp->gpu->bwd_gap_share > 0)
		gap *= cp->gpu->bwd_gap_share;
	return (o->calls * gap + first * launch + (kernels - first) * sub) * 1e-6;
}

double cost_bwd_start_s(const struct cost_params *cp, const struct op *ops, uint32_t n)
{
	double calls = 0;

	if (cp->launch_gap_us == 0)
		return 0;
	for (uint32_t k = 0; k < n; k++)
		if (!ops[k].bwd && !(ops[k].fixed_s > 0))
			calls += ops[k].calls;
	return calls * cp->gpu->bwd_start_us * 1e-6;
}

/* The span of an op whose kernels take busy seconds: a dispatch gap before each. */
static double span_of(const struct cost_params *cp, const struct op *o, double busy)
{
	if (!(busy > 0) || o->fixed_s > 0)
		return busy; /* a recorded segment holds its gaps */
	return busy + (o->kernels ? o->kernels : 1) * cp->gpu->kernel_gap_us * 1e-6;
}

double cost_issue(const struct cost_params *cp, const struct op *o, double *host_t,
		  double *gpu_t, double *span_s)
{
	double busy = cost_op_gpu_s(cp, o), span = span_of(cp, o, busy);
	/* the first kernel's dispatch gap hides behind a late host: it starts when it is
	 * launched; its further kernels follow their own gaps */
	double hidden = span > busy ? cp->gpu->kernel_gap_us * 1e-6 : 0;

	*host_t += cost_op_host_s(cp, o);
	*gpu_t = fmax(*gpu_t, *host_t - hidden) + span;
	if (span_s)
		*span_s = span;
	return *gpu_t;
}
