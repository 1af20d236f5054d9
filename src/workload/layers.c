/* Layer kinds of the model zoo: parameters, analytic FLOPs and the eager operators. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "workload/layers.h"

#define NORM_FLOPS_PER_ELEM 5.0
#define ATTN_BWD_FACTOR 2.5 /* FlashAttention's backward recomputes the scores */
#define F32 4               /* bytes of an fp32 element */
#define COLSUM_SPLIT_ROWS 1024 /* a column sum over this many rows splits them over blocks */

void ly_scope(struct tensor_list *tl, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tl->scope, sizeof(tl->scope), fmt, ap);
	va_end(ap);
	if ((n < 0 || n >= (int)sizeof(tl->scope)) && !tl->err)
		tl->err = -ENAMETOOLONG;
}

/* "<scope>.<name>" (or name alone) into buf. */
static const char *full(const struct tensor_list *tl, const char *name, char *buf)
{
	snprintf(buf, TENSOR_NAME_MAX, tl->scope[0] ? "%s.%s" : "%.0s%s", tl->scope, name);
	return buf;
}

int ly_act_bytes(const struct tensor_list *tl)
{
	return precision_act_bytes(tl->precision);
}

int ly_res_bytes(const struct tensor_list *tl)
{
	return precision_is_amp(tl->precision) ? F32 : ly_act_bytes(tl);
}

static struct op *op(struct tensor_list *tl, int layer, int bwd, int cls, int kernels,
		     double flops, double bytes, int64_t align, const char *what)
{
	/* one host call per op, except autocast's forward casts (issued inside the op they
	 * feed); backward's casts are autograd nodes (ToCopyBackward) of their own */
	struct op o = { .cls = (uint8_t)cls, .bwd = (uint8_t)bwd, .kernels = (uint16_t)kernels,
			.calls = cls == OPC_CAST && !bwd ? 0 : 1, .flops = flops, .bytes = bytes,
			.align_dim = align, .what = what };

	return tl_op(tl, layer, &o) ? NULL : &tl->ops[tl->nops - 1];
}

/* An op issued by n host calls (a k-kernel Python formula: k calls; n autograd nodes). */
static struct op *with_calls(struct op *o, int n)
{
	if (o)
		o->calls = (uint16_t)n;
	return o;
}

/* An op issued by a host call counted elsewhere (the same autograd node computes a
 * matmul's data and weight gradients and its bias's column sum). */
static struct op *same_call(struct op *o)
{
	return with_calls(o, 0);
}

/* inner: the GEMM view's size that sets the pass's rate, pixels: the output's (batch x
 * side^2) (costmodel.h, conv_row) */
static struct op *conv_op(struct tensor_list *tl, int l, int pass, int kernels, double flops,
			  double bytes, int64_t cout, int k, int stride, int side, double inner,
			  double pixels, const char *what)
{
	struct op *o = op(tl, l, pass != CP_FWD, OPC_CONV, kernels, flops, bytes, cout, what);

	if (o) {
		o->window = (uint8_t)(k < 255 ? k : 255);
		o->stride = (uint8_t)(stride < 255 ? stride : 255);
		o->pass = (uint8_t)pass;
		o->side = (uint16_t)(side < 65535 ? side : 65535);
		o->inner = inner;
		o->pixels = pixels;
	}
	return o;
}

/*
 * Kernels cuDNN launches for one convolution pass (fwd 0, dgrad 1, wgrad 2), counted on the
 * fit cases' kernels (ref/runs/h200_2026-12-03_diag_fit.json, resnet18 / resnet50 at b128
 * and b16): a 3x3 or 7x7 window takes about six more kernels backward than a 1x1 (fp32:
 * FFT and Winograd transforms, flipped filters; 16-bit: NCHW <-> NHWC transposes and
 * memsets, forward too), which the host launches one by one. 1x1 windows: 1 / 2 / 2
 * kernels in fp32, 3 / 3 / 2 on the tensor cores (their transposes); 3x3 and 7x7: 1 / 5 / 4
 * in fp32, 6 / 6 / 5. Other windows (ViT's patches) keep the plain count.
 */
int ly_conv_kernels(int pass, int k, bool fp32)
{
	static const int plain[2][CP_COUNT] = { { 2, 3, 2 }, { 1, 2, 1 } };
	static const int one[2][CP_COUNT] = { { 3, 3, 2 }, { 1, 2, 2 } };
	static const int wide[2][CP_COUNT] = { { 6, 6, 5 }, { 1, 5, 4 } };

	if (pass < 0 || pass >= CP_COUNT)
		return 1;
	if (k == 1)
		return one[fp32][pass];
	return k == 3 || k == 7 ? wide[fp32][pass] : plain[fp32][pass];
}

static int last(const struct tensor_list *tl)
{
	return tl->err || !tl->nlayers ? -1 : (int)tl->nlayers - 1;
}

/* an op on fp32 data whatever the precision (costmodel.h: the classes' 32-bit share) */
static void f32(struct op *o, bool on)
{
	if (o && on)
		o->f32 = 1;
}

/* A cast from 16 bits up to fp32 (a gradient back to its fp32 weight or input, log-probs up
 * for nll_loss, logits.float()) or the residual add that promotes a 16-bit branch into the
 * fp32 stream: PyTorch's unrolled dtype-casting kernel; casts down to 16 bits run
 * vectorized at the cast class's rate. */
static struct op *widen(struct op *o)
{
	if (o)
		o->promote = 1;
	return o;
}

/*
 * Autocast's cast of n fp32 tensors (elems elements in all) down to 16 bits, issued inside
 * the op they feed, and its gradients' back up: a ToCopyBackward0 node each.
 */
static void cast_pair(struct tensor_list *tl, int l, int n, double elems, const char *what,
		      const char *bwd_what)
{
	op(tl, l, 0, OPC_CAST, n, 0, 6.0 * elems, 0, what);
	with_calls(widen(op(tl, l, 1, OPC_CAST, n, 0, 6.0 * elems, 0, bwd_what)), n);
}

/*
 * A weight used by a matrix op under autocast is cast to 16 bits in forward and its
 * gradient cast back in backward (ToCopyBackward); an fp32 activation (a norm's
 * output) likewise. bias: the bias is cast too.
 */
static void amp_casts(struct tensor_list *tl, int l, double wnumel, double bias,
		      double in_elems)
{
	if (!precision_is_amp(tl->precision))
		return;
	cast_pair(tl, l, 1, wnumel, "cast.weight", "cast.weight.bwd");
	if (bias > 0) /* a kernel of its own each way, however small */
		cast_pair(tl, l, 1, bias, "cast.bias", "cast.bias.bwd");
	if (tl->in_f32 && in_elems > 0)
		cast_pair(tl, l, 1, in_elems, "cast.input", "cast.input.bwd");
	tl->in_f32 = false;
}

/* out = x[rows, in] W^T: forward GEMM, data-grad and weight-grad GEMMs, bias column sum.
 * linear_bias: F.linear with its bias, whose forward runs cuBLAS's bias epilogue (Conv1D's
 * addmm over an [in, out] weight is another layout, not measured: costed as a plain GEMM). */
static void matmul_ops(struct tensor_list *tl, int l, double rows, int64_t in, int64_t out,
		       bool bias, bool linear_bias)
{
	double f = 2.0 * rows * (double)in * (double)out;
	int e = ly_act_bytes(tl);
	double io = e * (rows * (double)(in + out) + (double)in * out);
	uint32_t m = rows < UINT32_MAX ? (uint32_t)rows : UINT32_MAX;
	struct op *fw, *dg, *wg;

	fw = op(tl, l, 0, OPC_GEMM, 1, f, io, out % 8 ? out : in, "gemm");
	if (fw && linear_bias && bias) {
		fw->bias_rows = m;
		fw->bias_cols = out < UINT32_MAX ? (uint32_t)out : UINT32_MAX;
	}
	/* each op() may move the op array: set an op's fields before adding the next */
	dg = op(tl, l, 1, OPC_GEMM, 1, f, io, out % 8 ? out : in, "gemm.dgrad");
	if (dg) {
		dg->grad_rows = m;
		dg->pass = CP_DGRAD;
	}
	wg = op(tl, l, 1, OPC_GEMM, 1, f, io, out % 8 ? out : in, "gemm.wgrad");
	same_call(wg);
	if (wg) {
		wg->grad_rows = m;
		wg->pass = CP_WGRAD;
	}
	if (bias) {
		/* over many rows a memset of the partial sums, then the reduce kernel (the fit
		 * cases' traces: at 4096 rows and more; at 128 and fewer the reduce alone) */
		struct op *b = op(tl, l, 1, OPC_REDUCE, rows >= COLSUM_SPLIT_ROWS ? 2 : 1, 0,
				  e * rows * (double)out, 0, "bias.grad");

		same_call(b);
		if (b) { /* a column sum: its rate by columns and rows (colsum_share) */
			b->channels = (uint32_t)out;
			b->rows = m;
		}
	}
}

void ly_tied_linear_ops(struct tensor_list *tl, int layer, double rows, int64_t in,
			int64_t out, bool bias)
{
	amp_casts(tl, layer, (double)in * out, bias ? (double)out : 0, rows * in);
	matmul_ops(tl, layer, rows, in, out, bias, true);
}

int ly_linear_as(struct tensor_list *tl, const char *name, const char *weight,
		 const char *bias, int64_t in, int64_t out, double positions)
{
	double fwd = 2.0 * (double)in * (double)out * positions;
	int64_t w[2] = { out, in }, b[1] = { out };
	char n[TENSOR_NAME_MAX], pn[TENSOR_NAME_MAX];
	int l;

	if (bias)
		fwd += (double)out * positions;
	l = tl_layer(tl, fwd, 2.0 * fwd, "%s", full(tl, name, n));
	tl_param(tl, l, 2, w, "%s", full(tl, weight, pn));
	amp_casts(tl, l, (double)in * out, bias ? (double)out : 0, positions * in);
	matmul_ops(tl, l, positions, in, out, bias, true);
	if (bias) {
		tl_param(tl, l, 1, b, "%s", full(tl, bias, pn));
		/* addmm(bias, x, W^T): the bias is a direct input of AddmmBackward, the weight
		 * comes through TBackward: bias first. Under autocast both come through a cast
		 * node and the weight's is created first: weight first, as PyTorch does. */
		if (l >= 0)
			tl->layers[l].ready_reversed = !precision_is_amp(tl->precision);
	}
	return l;
}

int ly_linear(struct tensor_list *tl, const char *name, int64_t in, int64_t out, bool bias,
	      double positions)
{
	char w[TENSOR_NAME_MAX], b[TENSOR_NAME_MAX];

	snprintf(w, sizeof(w), "%s.weight", name);
	snprintf(b, sizeof(b), "%s.bias", name);
	return ly_linear_as(tl, name, w, bias ? b : NULL, in, out, positions);
}

int ly_qkv(struct tensor_list *tl, const char *q, const char *k, const char *v, int64_t h,
	   int64_t kv, bool bias, double positions)
{
	ly_linear(tl, q, h, h, bias, positions);
	ly_input_f32(tl);
	ly_linear(tl, k, h, kv, bias, positions);
	ly_input_f32(tl);
	return ly_linear(tl, v, h, kv, bias, positions);
}

int ly_conv1d(struct tensor_list *tl, const char *name, int64_t in, int64_t out,
	      double positions)
{
	double fwd = 2.0 * (double)in * (double)out * positions + (double)out * positions;
	int64_t w[2] = { in, out }, b[1] = { out };
	char n[TENSOR_NAME_MAX];
	int l = tl_layer(tl, fwd, 2.0 * fwd, "%s", full(tl, name, n));

	tl_param(tl, l, 2, w, "%s.weight", n);
	tl_param(tl, l, 1, b, "%s.bias", n);
	amp_casts(tl, l, (double)in * out, (double)out, positions * in);
	matmul_ops(tl, l, positions, in, out, true, false);
	/* addmm(bias, x, weight): both are direct inputs of AddmmBackward, whose outputs are
	 * pushed in argument order (bias first) onto autograd's ready queue, where they tie
	 * at the highest priority; the earlier push wins (with or without autocast). */
	if (l >= 0)
		tl->layers[l].ready_reversed = true;
	return l;
}

int ly_conv_out(int in, int k, int stride, int pad)
{
	return (in + 2 * pad - k) / stride + 1;
}

int ly_conv2d(struct tensor_list *tl, const char *name, int64_t cin, int64_t cout, int k,
	      int stride, int pad, bool bias, int batch, int *hw, bool first)
{
	int64_t w[4] = { cout, cin, k, k }, b[1] = { cout };
	int out = ly_conv_out(*hw, k, stride, pad);
	double pos = (double)batch * out * out;
	double fwd = 2.0 * (double)cin * k * k * (double)cout * pos;
	double in_el = (double)batch * cin * *hw * *hw, out_el = pos * cout;
	double wn = (double)cout * cin * k * k;
	int e = ly_act_bytes(tl), fp32 = tl->precision == PREC_FP32;
	char n[TENSOR_NAME_MAX];
	struct op *wg;
	int l;

	if (bias)
		fwd += (double)cout * pos;
	l = tl_layer(tl, fwd, first ? fwd : 2.0 * fwd, "%s", full(tl, name, n));
	tl_param(tl, l, 4, w, "%s.weight", n);
	/* ConvolutionBackward outputs (input, weight, bias) at once: weight, then bias. */
	if (bias)
		tl_param(tl, l, 1, b, "%s.bias", n);
	/* the network's input (the image) is fp32: autocast casts it */
	if (first)
		tl->in_f32 = true;
	amp_casts(tl, l, wn, bias ? (double)cout : 0, in_el);
	/* cuDNN on NCHW tensor-core paths transposes to NHWC and back: more kernels */
	conv_op(tl, l, CP_FWD, ly_conv_kernels(CP_FWD, k, fp32), fwd, e * (in_el + out_el + wn), cout, k, stride,
		out, (double)cin * k * k, pos, "conv");
	if (!first)
		conv_op(tl, l, CP_DGRAD, ly_conv_kernels(CP_DGRAD, k, fp32), fwd, e * (in_el + out_el + wn), cout, k,
			stride, out, (double)cout * k * k, pos, "conv.dgrad");
	wg = conv_op(tl, l, CP_WGRAD, ly_conv_kernels(CP_WGRAD, k, fp32), fwd, e * (in_el + out_el + wn), cout, k,
		     stride, out, wn, pos, "conv.wgrad");
	if (!first)
		same_call(wg); /* ConvolutionBackward computes both */
	if (bias)
		same_call(op(tl, l, 1, OPC_REDUCE, 1, 0, e * out_el, 0, "bias.grad"));
	*hw = out;
	return l;
}

/*
 * A normalization's layer (NORM_FLOPS_PER_ELEM a normalized element forward, twice that
 * backward) and its dim-wide weight, then bias when it has one: Native{Batch,Layer}Norm-
 * Backward outputs (input, weight, bias), weight first. Returns the layer's index.
 */
static int norm_layer(struct tensor_list *tl, const char *name, int64_t dim, bool bias,
		      double elems)
{
	double fwd = NORM_FLOPS_PER_ELEM * elems;
	int64_t s[1] = { dim };
	char n[TENSOR_NAME_MAX];
	int l = tl_layer(tl, fwd, 2.0 * fwd, "%s", full(tl, name, n));

	tl_param(tl, l, 1, s, "%s.weight", n);
	if (bias)
		tl_param(tl, l, 1, s, "%s.bias", n);
	return l;
}

int ly_norm(struct tensor_list *tl, const char *name, int64_t dim, bool bias, double elems)
{
	int l = norm_layer(tl, name, dim, bias, elems);
	/* autocast runs norms in fp32: input (the fp32 residual stream) and output */
	int e = ly_res_bytes(tl);

	op(tl, l, 0, OPC_NORM, 1, 0, 2.0 * e * elems, 0, "norm");
	/* backward is two kernels of other rates (the fit cases' traces, 2026-12-03): the
	 * input gradient a row pass streaming at an element-wise kernel's rate (0.83-0.89
	 * of HBM), the weight and bias gradients a column reduction of x and dy (PyTorch's
	 * GammaBeta kernel, 0.35-0.39 of HBM) */
	op(tl, l, 1, OPC_ELEM, 1, 0, 3.0 * e * elems, 0, "norm.bwd");
	same_call(op(tl, l, 1, OPC_NORM, 1, 0, 2.0 * e * elems, 0, "norm.bwd.weight"));
	if (precision_is_amp(tl->precision))
		tl->in_f32 = true;
	return l;
}

/*
 * HF's LlamaRMSNorm, a Python formula on the fp32 residual stream (the profiler, llama
 * 2 and 3 under torch 2.11, 2026-12-05: pow, mean, the epsilon's add, rsqrt, the scale's
 * broadcast multiply and the weight's, each a kernel of its own; two .to() calls that
 * launch nothing). Backward is its autograd nodes: the weight's multiply (its gradient a
 * column sum), the scale's (a row sum for rsqrt's input), rsqrt's and the mean's
 * gradients on the rows, pow's, and the sum of the two paths into the input.
 */
int ly_rms_norm(struct tensor_list *tl, const char *name, int64_t dim, double elems)
{
	double rows = dim > 0 ? elems / (double)dim : 0;
	/* the formula runs in fp32 whatever the stream: a 16-bit model (bf16, no autocast)
	 * casts up first and back before the weight's multiply, kernels of their own */
	bool half = !precision_is_amp(tl->precision) && ly_act_bytes(tl) == 2;
	int e = F32, w = ly_res_bytes(tl);
	int l = norm_layer(tl, name, dim, false, elems);
	struct op *o;

	/* pow's call with the two .to() */
	with_calls(op(tl, l, 0, OPC_ELEM, 1, 0, 2.0 * e * elems, 0, "rms.pow"), 3);
	op(tl, l, 0, OPC_REDUCE, 1, 0, e * elems, 0, "rms.mean");
	with_calls(op(tl, l, 0, OPC_ELEM, 2, 0, 4.0 * e * rows, 0, "rms.rsqrt"), 2);
	op(tl, l, 0, OPC_ELEM, 1, 0, 2.0 * e * elems, 0, "rms.scale");
	if (half) {
		same_call(op(tl, l, 0, OPC_CAST, 2, 0, 12.0 * elems, 0, "rms.casts"));
		op(tl, l, 1, OPC_CAST, 2, 0, 12.0 * elems, 0, "rms.casts.bwd");
	}
	op(tl, l, 0, OPC_ELEM, 1, 0, 2.0 * w * elems, 0, "rms.weight");

	op(tl, l, 1, OPC_ELEM, 2, 0, 6.0 * w * elems, 0, "rms.bwd.weight_mul");
	o = same_call(op(tl, l, 1, OPC_REDUCE, 1, 0, w * elems, 0, "rms.bwd.weight"));
	if (o) { /* a column sum: its rate by columns and rows (colsum_share) */
		o->channels = (uint32_t)dim;
		o->rows = rows < UINT32_MAX ? (uint32_t)rows : UINT32_MAX;
	}
	op(tl, l, 1, OPC_ELEM, 2, 0, 6.0 * e * elems, 0, "rms.bwd.scale_mul");
	same_call(op(tl, l, 1, OPC_REDUCE, 1, 0, e * elems, 0, "rms.bwd.rowsum"));
	/* RsqrtBackward0, AddBackward0, MeanBackward1 */
	with_calls(op(tl, l, 1, OPC_ELEM, 3, 0, 6.0 * e * rows, 0, "rms.bwd.rsqrt"), 3);
	same_call(op(tl, l, 1, OPC_ELEM, 1, 0, 2.0 * e * elems, 0, "rms.bwd.mean"));
	op(tl, l, 1, OPC_ELEM, 2, 0, 5.0 * e * elems, 0, "rms.bwd.pow");
	same_call(op(tl, l, 1, OPC_ELEM, 1, 0, 3.0 * e * elems, 0, "rms.bwd.sum"));
	if (precision_is_amp(tl->precision))
		tl->in_f32 = true;
	return l;
}

int ly_batchnorm(struct tensor_list *tl, const char *name, int64_t c, double elems)
{
	int l = norm_layer(tl, name, c, true, elems);
	int e = ly_act_bytes(tl);
	struct op *o;

	/* statistics pass + normalise pass (cuDNN, or PyTorch's native kernels for bf16
	 * inputs: precision_bn_cudnn); the reductions' rate depends on the channel count */
	o = op(tl, l, 0, OPC_BN, precision_bn_cudnn(tl->precision) ? 2 : 3, 0, 2.0 * e * elems, 0,
	       "bn");
	if (o)
		o->channels = (uint32_t)c;
	o = op(tl, l, 1, OPC_BN, 1, 0, 3.0 * e * elems, 0, "bn.bwd");
	if (o)
		o->channels = (uint32_t)c;
	return l;
}

int ly_embedding(struct tensor_list *tl, const char *name, int64_t num, int64_t dim,
		 double positions)
{
	int64_t s[2] = { num, dim };
	char n[TENSOR_NAME_MAX];
	int l = tl_layer(tl, 0.0, (double)dim * positions, "%s", full(tl, name, n));

	tl_param(tl, l, 2, s, "%s.weight", n);
	/* weights stay fp32 under autocast: a gather forward; backward zero-fills the whole
	 * gradient (a streaming write: llama3_8b's 128256 x 4096 table, 2.1 GB, in about 0.45
	 * ms; charged at the gather's share it was 1.7 ms), then sorts the indices and
	 * scatter-adds the rows */
	op(tl, l, 0, OPC_EMBED, 1, 0, 2.0 * F32 * positions * dim, 0, "embedding");
	f32(op(tl, l, 1, OPC_ELEM, 1, 0, F32 * (double)num * dim, 0, "embedding.bwd.fill"), true);
	same_call(op(tl, l, 1, OPC_EMBED, 5, 0, F32 * 2.0 * positions * dim, 0,
		     "embedding.bwd"));
	return l;
}

int ly_compute(struct tensor_list *tl, const char *name, double fwd_flops)
{
	char n[TENSOR_NAME_MAX];
	int l = tl_layer(tl, fwd_flops, 2.0 * fwd_flops, "%s", full(tl, name, n));

	op(tl, l, 0, OPC_GEMM, 1, fwd_flops, 0, 0, "gemm");
	op(tl, l, 1, OPC_GEMM, 1, fwd_flops, 0, 0, "gemm.dgrad");
	op(tl, l, 1, OPC_GEMM, 1, fwd_flops, 0, 0, "gemm.wgrad");
	return l;
}

/* What the tile model of an attention op needs (costmodel.h, attn_tiles_s). */
static void attn_tiles(struct op *o, int batch, int64_t width, int heads, bool causal)
{
	if (!o || heads < 1 || width % heads)
		return;
	o->attn_bh = (uint32_t)batch * (uint32_t)heads;
	o->head_dim = (uint16_t)(width / heads);
	o->causal = causal;
}

bool ly_sdpa_math(int precision, int heads, int kv_heads)
{
	return kv_heads > 0 && kv_heads < heads && precision_act_bytes(precision) == F32;
}

/*
 * SDPA's math path (aten's _scaled_dot_product_attention_math) on layer l, each op one
 * aten call inside SDPA's single Python call: q and the repeated keys scaled, the keys
 * and values repeated to every query head (enable_gqa), the causal mask built (ones,
 * tril, made additive) and added, scores = q k^T and out = p v as batched GEMMs over the
 * whole square (the mask costs no FLOPs), _safe_softmax (the softmax, then the rows
 * with no key left: isneginf, all, where). Backward: the two GEMMs' gradients (two
 * each), softmax's, the scales' and the repeats' (a sum over each group). The profiler's
 * kernels of llama3_8b@3 1 x 1024 fp32 (2026-12-05): 13 more GEMM launches forward than
 * the fused op's layers, triu, isneginf, a bool reduce and softmax each once a layer.
 */
static void attention_math(struct tensor_list *tl, int l, int batch, int seq, int64_t width,
			   int heads, int kv_heads, bool causal)
{
	int e = ly_act_bytes(tl);
	double s2 = (double)batch * heads * (double)seq * seq; /* score elements */
	double a = (double)batch * seq * (double)width;         /* q (and repeated k, v) */
	double kv = a * kv_heads / heads;
	int64_t d = width / heads;
	double mm = 2.0 * s2 * (double)d; /* one batched GEMM's FLOPs */
	double sq = (double)seq * seq;

	op(tl, l, 0, OPC_ELEM, 2, 0, 2 * 2.0 * e * a, 0, "sdpa.scale"); /* SDPA's call */
	same_call(op(tl, l, 0, OPC_COPY, 2, 0, 2.0 * e * (kv + a), 0, "sdpa.repeat_kv"));
	if (causal) /* ones, tril (bool), zeros, logical_not, masked_fill (the additive mask) */
		same_call(op(tl, l, 0, OPC_ELEM, 5, 0, (3.0 + 2.0 + 2.0 * e) * sq, 0,
			     "sdpa.mask"));
	same_call(op(tl, l, 0, OPC_GEMM, 1, mm, e * (2.0 * a + s2), d, "sdpa.qk"));
	if (causal)
		same_call(op(tl, l, 0, OPC_ELEM, 1, 0, 2.0 * e * s2 + e * sq, 0, "sdpa.mask_add"));
	same_call(op(tl, l, 0, OPC_SOFTMAX, 1, 0, 2.0 * e * s2, seq, "sdpa.softmax"));
	/* _safe_softmax's rows without a key: isneginf (a byte each), all, where */
	same_call(op(tl, l, 0, OPC_ELEM, 2, 0, (e + 1.0 + e + 1.0 + e) * s2, 0, "sdpa.safe"));
	same_call(op(tl, l, 0, OPC_REDUCE, 1, 0, s2, 0, "sdpa.safe.all"));
	same_call(op(tl, l, 0, OPC_GEMM, 1, mm, e * (2.0 * a + s2), d, "sdpa.pv"));
	/* backward: one node per aten op; p v's node: dP = dO v^T and dV = p^T dO */
	op(tl, l, 1, OPC_GEMM, 2, 2.0 * mm, e * (4.0 * a + 2.0 * s2), d, "sdpa.pv.bwd");
	op(tl, l, 1, OPC_SOFTMAX, 1, 0, 3.0 * e * s2, seq, "sdpa.softmax.bwd");
	op(tl, l, 1, OPC_GEMM, 2, 2.0 * mm, e * (4.0 * a + 2.0 * s2), d, "sdpa.qk.bwd");
	with_calls(op(tl, l, 1, OPC_ELEM, 2, 0, 2 * 2.0 * e * a, 0, "sdpa.scale.bwd"), 2);
	/* the repeats' gradients: each group of query heads summed into its key head */
	with_calls(op(tl, l, 1, OPC_REDUCE, 2, 0, 2.0 * e * (a + kv), 0, "sdpa.repeat_kv.bwd"),
		   2);
}

int ly_attention(struct tensor_list *tl, const char *name, int batch, int seq, int64_t width,
		 int heads, int kv_heads, bool causal, int copies_fwd, int copies_bwd)
{
	bool math = ly_sdpa_math(tl->precision, heads, kv_heads);
	/* the math path computes the whole square, masked or not */
	double f = ly_attention_flops(batch, seq, width, causal && !math);
	double act = (double)batch * seq * (double)width * ly_act_bytes(tl);
	char n[TENSOR_NAME_MAX];
	int l = tl_layer(tl, f, (math ? 2.0 : ATTN_BWD_FACTOR) * f, "%s", full(tl, name, n));

	if (math) {
		attention_math(tl, l, batch, seq, width, heads, kv_heads, causal);
	} else {
		/* align: the sequence (costmodel.c attn_share: another kernel where it is no
		 * multiple of 8) */
		attn_tiles(op(tl, l, 0, OPC_ATTN, 1, f, 4.0 * act, seq, "attention"), batch,
			   width, heads, causal);
		/* backward: 4 kernels a layer in the fit cases' traces (cuDNN's: dO.O, the
		 * kernel, dQ's conversion and a fill; the efficient kernel's: the same with a
		 * sum) */
		attn_tiles(op(tl, l, 1, OPC_ATTN, 4, ATTN_BWD_FACTOR * f, 8.0 * act, seq,
			      "attention.bwd"),
			   batch, width, heads, causal);
	}
	/* head split / merge: .contiguous() of transposed views, each a copy of one
	 * activation (and its gradient's in backward) */
	if (copies_fwd) /* .contiguous() calls */
		with_calls(op(tl, l, 0, OPC_COPY, copies_fwd, 0, copies_fwd * 2.0 * act, 0,
			      "layout.copy"), copies_fwd);
	if (copies_bwd)
		with_calls(op(tl, l, 1, OPC_COPY, copies_bwd, 0, copies_bwd * 2.0 * act, 0,
			      "layout.copy.bwd"), copies_bwd);
	return l;
}

void ly_fwd_copy(struct tensor_list *tl, const char *what, int n, double bytes)
{
	with_calls(op(tl, last(tl), 0, OPC_COPY, n, 0, bytes, 0, what), n);
}

void ly_bwd_copy(struct tensor_list *tl, const char *what, int n, int calls, double bytes)
{
	with_calls(op(tl, last(tl), 1, OPC_COPY, n, 0, bytes, 0, what), calls);
}

void ly_fwd_elem(struct tensor_list *tl, const char *what, int kernels, int calls,
		 double bytes)
{
	with_calls(op(tl, last(tl), 0, OPC_ELEM, kernels, 0, bytes, 0, what), calls);
}

void ly_amp_cast(struct tensor_list *tl, const char *what, int n, double elems)
{
	if (precision_is_amp(tl->precision))
		cast_pair(tl, last(tl), n, elems, what, what);
}

void ly_views(struct tensor_list *tl, int n)
{
	int l = last(tl);

	if (n < 1)
		return;
	for (int bwd = 0; bwd < 2; bwd++)
		with_calls(op(tl, l, bwd, OPC_ELEM, 0, 0, 0, 0, bwd ? "views.bwd" : "views"), n);
}

int ly_plain(struct tensor_list *tl, const char *name)
{
	char n[TENSOR_NAME_MAX];

	return tl_layer(tl, 0, 0, "%s", full(tl, name, n));
}

void ly_act(struct tensor_list *tl, const char *what, double elems, int ebytes, int kernels)
{
	int l = last(tl), bk = kernels > 1 ? kernels + kernels / 2 : 1;

	/* a k-kernel formula is k Python-level calls (HF's gelu_new: pow, mul, add, tanh...),
	 * each kernel reading and writing the activation */
	ly_fwd_elem(tl, what, kernels, kernels, kernels * 2.0 * ebytes * elems);
	/* its backward: about 1.5x the kernels (autograd nodes), each reading two inputs */
	with_calls(op(tl, l, 1, OPC_ELEM, bk, 0, bk * 3.0 * ebytes * elems, 0, what), bk);
}

/* HF's gelu_new, a Python formula, 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 pow(x, 3)))):
 * 8 kernels forward (6 of one input, 2 of two). Under autocast pow is an fp32 op: x is
 * upcast (a cast of its own), the formula and its gradients run in 32-bit (two kernels mix
 * the 16-bit x in: 64 bytes an element in all) and its output is fp32, so the next linear
 * casts its input back (profiler, gpt2_medium b8 x 1024 amp_bf16: the upcast, 8 kernels
 * and c_proj's input cast, 0.77 ms a layer; the model had charged 16-bit, 0.26 ms). */
void ly_gelu_formula(struct tensor_list *tl, double elems)
{
	int l = last(tl), e = ly_act_bytes(tl);
	bool amp = precision_is_amp(tl->precision);

	if (amp) {
		widen(op(tl, l, 0, OPC_CAST, 1, 0, 6.0 * elems, 0, "gelu.upcast"));
		op(tl, l, 1, OPC_CAST, 1, 0, 6.0 * elems, 0, "gelu.upcast.bwd");
	}
	ly_fwd_elem(tl, "gelu_new", 8, 8, (amp ? 64.0 : 18.0 * e) * elems);
	/* its backward: 10 autograd nodes launching 8 kernels in 32-bit, three of them a
	 * scalar multiply (one input), five of two (21 passes over the tensor): profiler,
	 * gpt2 b8 x 1024 amp_bf16, 0.50 ms a layer; charged as 10 kernels of two inputs each
	 * (30 passes) it was 0.84, and every GPU-bound autocast GPT-2 backward 5-10% over */
	with_calls(op(tl, l, 1, OPC_ELEM, 8, 0, 21.0 * (amp ? F32 : e) * elems, 0, "gelu_new"),
		   10);
	if (amp)
		tl->in_f32 = true;
}

/*
 * HF's apply_rotary_pos_emb, q * cos + rotate_half(q) * sin and the same for k: per tensor
 * two multiplies, rotate_half's neg and cat, an add (10 kernels). Under autocast the
 * 16-bit q and k times fp32 cos / sin run PyTorch's unvectorized mixed-dtype kernel into
 * fp32 (3 bytes an element on average: the forward is charged as an activation of 10
 * kernels at 3 bytes, 0.56 ms a layer against the profiler's 0.67 for llama2_7b@2 b2 x
 * 2048).
 * Its backward is lighter than an activation's 1.5x: per tensor the two multiplies'
 * gradients (fp32, vectorized: 8 bytes an element each), under autocast their casts back
 * to q's dtype (6 bytes each), the neg's over half (e), and two adds where q's three
 * gradients meet (3e each): profiler, llama2_7b@2 b2 x 2048 amp_bf16, 0.39 ms a layer for
 * these 14 kernels (the activation's 15 kernels at 9 bytes had charged 1.25). Its nodes:
 * per tensor two multiplies, the neg, the cat and the add. Each of rotate_half's slices
 * (LY_ROTARY_SLICES, two halves of q and of k) has its gradient zero-filled whole and its
 * half copied in.
 */
void ly_rotary(struct tensor_list *tl, double elems)
{
	int l = last(tl), e = ly_act_bytes(tl);
	bool amp = precision_is_amp(tl->precision);
	int g = amp ? F32 : e; /* the multiplies' gradients: fp32 under autocast */
	double per = 2 * 2.0 * g + (amp ? 2.0 * (F32 + e) : 0) + e + 2 * 3.0 * e;

	ly_fwd_elem(tl, "rotary", 10, 10, 10 * 2.0 * (amp ? 3 : e) * elems);
	with_calls(op(tl, l, 1, OPC_ELEM, amp ? 14 : 10, 0, per * elems, 0, "rotary"), 10);
	ly_bwd_copy(tl, "rotary.slice.bwd", 2 * LY_ROTARY_SLICES, 0, 4.0 * e * elems);
}

void ly_add(struct tensor_list *tl, double elems, int ebytes)
{
	int l = last(tl);

	op(tl, l, 0, OPC_ELEM, 1, 0, 3.0 * ebytes * elems, 0, "add");
	/* the fork's two gradients are summed where the branches met */
	op(tl, l, 1, OPC_ELEM, 1, 0, 3.0 * ebytes * elems, 0, "add.bwd");
}

void ly_add_residual(struct tensor_list *tl, double elems)
{
	int l = last(tl), e = ly_act_bytes(tl);

	if (!precision_is_amp(tl->precision)) {
		ly_add(tl, elems, e);
		return;
	}
	widen(op(tl, l, 0, OPC_ELEM, 1, 0, (e + 2.0 * F32) * elems, 0, "add.promote"));
	op(tl, l, 1, OPC_ELEM, 1, 0, 3.0 * F32 * elems, 0, "add.bwd");
	/* AddBackward0 casts the branch's gradient back to 16 bits (the fit cases' kernels: a
	 * copy_ per residual add, 14 us at vit_b_16 b64) */
	same_call(op(tl, l, 1, OPC_CAST, 1, 0, (F32 + e) * elems, 0, "add.bwd.cast"));
}

void ly_norm_input_copy(struct tensor_list *tl, double elems)
{
	if (!precision_is_amp(tl->precision))
		return;
	/* launched inside layer_norm's call */
	widen(same_call(op(tl, last(tl), 0, OPC_ELEM, 1, 0, 2.0 * F32 * elems, 0,
			   "norm.input.copy")));
}

void ly_fork(struct tensor_list *tl, int n, double elems, int ebytes)
{
	if (n < 1)
		return;
	/* the engine's add_ into the input buffer, each */
	with_calls(op(tl, last(tl), 1, OPC_ELEM, n, 0, n * 3.0 * ebytes * elems, 0, "fork.bwd"), n);
}

void ly_dropout(struct tensor_list *tl, double elems, int ebytes, double p)
{
	int l = last(tl);

	if (!(p > 0))
		return;
	/* native_dropout writes the output and a byte mask; backward reads both */
	op(tl, l, 0, OPC_ELEM, 1, 0, (2.0 * ebytes + 1) * elems, 0, "dropout");
	op(tl, l, 1, OPC_ELEM, 1, 0, (2.0 * ebytes + 1) * elems, 0, "dropout.bwd");
}

void ly_pool(struct tensor_list *tl, const char *what, double in_elems, double out_elems,
	     int ebytes, bool indices)
{
	int l = last(tl);
	double idx = indices ? 8.0 * out_elems : 0;

	/* the window's element work bounds it, not the element size: 32-bit elements
	 * counted (the same time for fp32 and bf16 on the H200) */
	(void)ebytes;
	op(tl, l, 0, OPC_POOL, 1, 0, F32 * (in_elems + out_elems) + idx, 0, what);
	/* backward zero-fills the input gradient, then scatters into it: the scattered
	 * read-modify-writes cost about three streamed passes over the input */
	op(tl, l, 1, OPC_POOL, indices ? 2 : 1, 0, F32 * (4.0 * in_elems + out_elems) + idx, 0,
	   what);
}

void ly_loss(struct tensor_list *tl, double rows, int64_t classes)
{
	int l = ly_plain(tl, "loss");
	double n = rows * (double)classes;

	/* autocast: 16-bit logits go through log_softmax in 16 bits, and nll_loss (an fp32
	 * op) casts the log-probabilities up; backward casts nll's fp32 gradient down and
	 * runs log_softmax's backward in 16 bits (profiler, bert_base b8 x 128: 16-bit
	 * softmax kernels, 65 us backward where 32-bit bytes had charged 175). Logits
	 * already made fp32 (GPT-2's and Llama's logits.float(): ly_input_f32) take the
	 * 32-bit path. */
	double sm = tl->in_f32 ? F32 : ly_act_bytes(tl);
	/* nll_loss and its gradient: fp32 under autocast (an fp32 op), else the logits' */
	double nl = precision_is_amp(tl->precision) ? F32 : sm;

	if (precision_is_amp(tl->precision) && !tl->in_f32) {
		widen(op(tl, l, 0, OPC_CAST, 1, 0, 6.0 * n, 0, "cast.logits"));
		op(tl, l, 1, OPC_CAST, 1, 0, 6.0 * n, 0, "cast.logits.bwd");
	}
	/* a bf16 model's loss runs in 16 bits throughout, no cast */
	f32(op(tl, l, 0, OPC_SOFTMAX, 1, 0, 2.0 * sm * n, classes, "log_softmax"), sm == F32);
	f32(op(tl, l, 0, OPC_REDUCE, 2, 0, nl * rows, 0, "nll"), nl == F32);
	if (tl->precision == PREC_AMP_FP16) {
		/* GradScaler.scale(loss): the loss times the scale on the device before
		 * backward, whose first node multiplies the gradient back */
		f32(op(tl, l, 0, OPC_ELEM, 1, 0, 3.0 * F32, 0, "loss.scale"), true);
		f32(op(tl, l, 1, OPC_ELEM, 1, 0, 3.0 * F32, 0, "loss.scale.bwd"), true);
	}
	f32(op(tl, l, 1, OPC_ELEM, 2, 0, nl * n, 0, "nll.bwd"), nl == F32);
	f32(op(tl, l, 1, OPC_SOFTMAX, 1, 0, 3.0 * sm * n, 0, "log_softmax.bwd"), sm == F32);
}

/* HF's logits.float() before the loss (GPT-2, Llama): under autocast a cast of the
 * 16-bit logits (profiler: one copy kernel, which the loss then takes as it is), in
 * 32-bit precisions the tensor itself (no kernel); a bf16 model's 16-bit logits are cast
 * as autocast's are */
void ly_logits_float(struct tensor_list *tl, double elems)
{
	if (ly_act_bytes(tl) != 2)
		return;
	widen(op(tl, last(tl), 0, OPC_CAST, 1, 0, 6.0 * elems, 0, "logits.float"));
	op(tl, last(tl), 1, OPC_CAST, 1, 0, 6.0 * elems, 0, "logits.float.bwd");
	tl->in_f32 = true;
}

void ly_input_f32(struct tensor_list *tl)
{
	tl->in_f32 = precision_is_amp(tl->precision);
}

double ly_attention_flops(int batch, int seq, int64_t width, bool causal)
{
	double f = 4.0 * batch * (double)seq * (double)seq * (double)width;

	return causal ? f / 2.0 : f;
}
