/*
 * The layer kinds the model zoo is made of: each registers its parameters with
 * PyTorch's names and shapes and charges its analytic FLOPs.
 *
 * FLOP model (per rank, per iteration; a multiply-add is 2 FLOPs):
 *  - linear / conv: 2 * in * out * positions (+ positions * out for the bias);
 *  - normalisation (BatchNorm, LayerNorm, RMSNorm): 5 FLOPs per element;
 *  - attention scores and weighted sum: 4 * batch * seq^2 * width (half when causal,
 *    as FlashAttention skips the masked half);
 *  - embeddings: no forward FLOPs; backward is a scatter-add, 1 FLOP per element.
 * Backward = 2x forward for a layer whose input needs a gradient (data gradient plus
 * weight gradient), 1x for the first layer of a network (weight gradient only).
 */
#ifndef GS_WORKLOAD_LAYERS_H
#define GS_WORKLOAD_LAYERS_H

#include <stdbool.h>
#include <stdint.h>

#include "workload/tensor_list.h"

/* nn.Linear(in, out): "<name>.weight" [out, in], "<name>.bias" [out]; positions = rows. */
int ly_linear(struct tensor_list *tl, const char *name, int64_t in, int64_t out, bool bias,
	      double positions);
/* GPT-2's Conv1D(nf=out, nx=in): weight [in, out] used directly by addmm, bias [out]. */
int ly_conv1d(struct tensor_list *tl, const char *name, int64_t in, int64_t out,
	      double positions);
/*
 * nn.Conv2d(cin, cout, k, stride, pad): weight [cout, cin, k, k] (+ bias [cout]) on a
 * batch of hw x hw inputs; *hw becomes the output side. first = no input gradient.
 */
int ly_conv2d(struct tensor_list *tl, const char *name, int64_t cin, int64_t cout, int k,
	      int stride, int pad, bool bias, int batch, int *hw, bool first);
/* BatchNorm / LayerNorm (weight, bias) or RMSNorm (weight only) over `elems` elements. */
int ly_norm(struct tensor_list *tl, const char *name, int64_t dim, bool bias, double elems);
/* nn.Embedding(num, dim) looked up `positions` times. */
int ly_embedding(struct tensor_list *tl, const char *name, int64_t num, int64_t dim,
		 double positions);
/* A layer that only computes (no parameters): forward FLOPs, backward = 2x. */
int ly_compute(struct tensor_list *tl, const char *name, double fwd_flops);
/* Attention scores + weighted sum of one layer: width = heads * head_dim. */
double ly_attention_flops(int batch, int seq, int64_t width, bool causal);

/* Output side of a convolution or pooling window. */
int ly_conv_out(int in, int k, int stride, int pad);

#endif
