/* Layer kinds of the model zoo: parameter registration and analytic FLOPs. */
#include "workload/layers.h"

#define NORM_FLOPS_PER_ELEM 5.0

int ly_linear(struct tensor_list *tl, const char *name, int64_t in, int64_t out, bool bias,
	      double positions)
{
	double fwd = 2.0 * (double)in * (double)out * positions;
	int64_t w[2] = { out, in }, b[1] = { out };
	int l;

	if (bias)
		fwd += (double)out * positions;
	l = tl_layer(tl, fwd, 2.0 * fwd, "%s", name);
	tl_param(tl, l, 2, w, "%s.weight", name);
	if (bias) {
		tl_param(tl, l, 1, b, "%s.bias", name);
		if (l >= 0)
			tl->layers[l].ready_reversed = true;
	}
	return l;
}

int ly_conv1d(struct tensor_list *tl, const char *name, int64_t in, int64_t out,
	      double positions)
{
	double fwd = 2.0 * (double)in * (double)out * positions + (double)out * positions;
	int64_t w[2] = { in, out }, b[1] = { out };
	int l = tl_layer(tl, fwd, 2.0 * fwd, "%s", name);

	tl_param(tl, l, 2, w, "%s.weight", name);
	tl_param(tl, l, 1, b, "%s.bias", name);
	/* addmm(bias, x, weight): both are direct inputs of AddmmBackward, whose outputs are
	 * pushed in argument order (bias first) onto autograd's ready queue, where they tie
	 * at the highest priority; the earlier push wins. */
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
	int l;

	if (bias)
		fwd += (double)cout * pos;
	l = tl_layer(tl, fwd, first ? fwd : 2.0 * fwd, "%s", name);
	tl_param(tl, l, 4, w, "%s.weight", name);
	/* ConvolutionBackward outputs (input, weight, bias) at once: weight, then bias. */
	if (bias)
		tl_param(tl, l, 1, b, "%s.bias", name);
	*hw = out;
	return l;
}

int ly_norm(struct tensor_list *tl, const char *name, int64_t dim, bool bias, double elems)
{
	double fwd = NORM_FLOPS_PER_ELEM * elems;
	int64_t s[1] = { dim };
	int l = tl_layer(tl, fwd, 2.0 * fwd, "%s", name);

	/* Native{Batch,Layer}NormBackward outputs (input, weight, bias): weight first. */
	tl_param(tl, l, 1, s, "%s.weight", name);
	if (bias)
		tl_param(tl, l, 1, s, "%s.bias", name);
	return l;
}

int ly_embedding(struct tensor_list *tl, const char *name, int64_t num, int64_t dim,
		 double positions)
{
	int64_t s[2] = { num, dim };
	int l = tl_layer(tl, 0.0, (double)dim * positions, "%s", name);

	tl_param(tl, l, 2, s, "%s.weight", name);
	return l;
}

int ly_compute(struct tensor_list *tl, const char *name, double fwd_flops)
{
	return tl_layer(tl, fwd_flops, 2.0 * fwd_flops, "%s", name);
}

double ly_attention_flops(int batch, int seq, int64_t width, bool causal)
{
	double f = 4.0 * batch * (double)seq * (double)seq * (double)width;

	return causal ? f / 2.0 : f;
}
