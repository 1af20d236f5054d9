/*
 * The layer kinds the model zoo is made of: each registers its parameters with
 * PyTorch's names and shapes, charges its analytic FLOPs and emits the operators
 * PyTorch eager runs for it, forward and backward (workload/costmodel.h), for the
 * precision the list is built for (tl->precision).
 *
 * Names: every helper takes the layer's name relative to the current scope
 * (ly_scope(tl, "bert.encoder.layer.%d", i) then ly_linear(tl, "attention.self.query",
 * ...)); an empty scope means top-level names.
 *
 * FLOP model (per rank, per iteration; a multiply-add is 2 FLOPs):
 *  - linear / conv: 2 * in * out * positions (+ positions * out for the bias);
 *  - normalisation (BatchNorm, LayerNorm, RMSNorm): 5 FLOPs per element;
 *  - attention scores and weighted sum: 4 * batch * seq^2 * width (half when causal,
 *    as FlashAttention skips the masked half); its backward 2.5x (it recomputes);
 *  - embeddings: no forward FLOPs; backward is a scatter-add, 1 FLOP per element.
 * Backward = 2x forward for a layer whose input needs a gradient (data gradient plus
 * weight gradient), 1x for the first layer of a network (weight gradient only).
 * Bytes (memory-bound operators) count each tensor read or written once.
 */
#ifndef GS_WORKLOAD_LAYERS_H
#define GS_WORKLOAD_LAYERS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/common.h"
#include "workload/tensor_list.h"

/* Set the name prefix of the following helpers (printf format; "" = none). */
void ly_scope(struct tensor_list *tl, const char *fmt, ...) GS_PRINTF(2, 3);

/* nn.Linear(in, out): "<name>.weight" [out, in], "<name>.bias" [out]; positions = rows. */
int ly_linear(struct tensor_list *tl, const char *name, int64_t in, int64_t out, bool bias,
	      double positions);
/*
 * Attention's query, key and value as three nn.Linear of one input (HF BERT, Llama; not
 * a packed in_proj): q h -> h, k and v h -> kv (kv < h: grouped-query attention). Under
 * autocast the input is an fp32 activation that k and v each cast again, as q did.
 * Returns v's layer.
 */
int ly_qkv(struct tensor_list *tl, const char *q, const char *k, const char *v, int64_t h,
	   int64_t kv, bool bias, double positions);
/* The same with its own parameter names (relative to the scope); bias NULL = none.
 * MultiheadAttention's packed in_proj_weight / in_proj_bias are one. */
int ly_linear_as(struct tensor_list *tl, const char *name, const char *weight,
		 const char *bias, int64_t in, int64_t out, double positions);
/* The operators of a linear layer whose weight is tied to another parameter (an LM
 * head on the embedding), added to `layer`. */
void ly_tied_linear_ops(struct tensor_list *tl, int layer, double rows, int64_t in,
			int64_t out, bool bias);
/* GPT-2's Conv1D(nf=out, nx=in): weight [in, out] used directly by addmm, bias [out]. */
int ly_conv1d(struct tensor_list *tl, const char *name, int64_t in, int64_t out,
	      double positions);
/*
 * nn.Conv2d(cin, cout, k, stride, pad): weight [cout, cin, k, k] (+ bias [cout]) on a
 * batch of hw x hw inputs; *hw becomes the output side. first = no input gradient.
 */
int ly_conv2d(struct tensor_list *tl, const char *name, int64_t cin, int64_t cout, int k,
	      int stride, int pad, bool bias, int batch, int *hw, bool first);
/* LayerNorm (weight, bias; or weight only) over `elems` elements of rows of dim, one fused kernel. */
int ly_norm(struct tensor_list *tl, const char *name, int64_t dim, bool bias, double elems);
/* HF's LlamaRMSNorm (weight only) over `elems` elements of rows of dim: its Python formula,
 * a kernel per operation on the fp32 residual stream. */
int ly_rms_norm(struct tensor_list *tl, const char *name, int64_t dim, double elems);
/* BatchNorm2d(c) in training mode over `elems` elements. */
int ly_batchnorm(struct tensor_list *tl, const char *name, int64_t c, double elems);
/* nn.Embedding(num, dim) looked up `positions` times. */
int ly_embedding(struct tensor_list *tl, const char *name, int64_t num, int64_t dim,
		 double positions);
/* A layer that only computes (no parameters): forward FLOPs, backward = 2x, as GEMMs. */
int ly_compute(struct tensor_list *tl, const char *name, double fwd_flops);
/*
 * Scaled-dot-product attention of one layer: width = heads * head_dim, kv_heads the keys'
 * and values' heads (grouped-query attention where fewer). The fused kernel, or SDPA's
 * math path where ly_sdpa_math says PyTorch takes it. copies_*: the layout copies (head
 * split and merge, gradients of transposed views) the module's implementation launches
 * around it, forward and backward, each of one activation.
 */
int ly_attention(struct tensor_list *tl, const char *name, int batch, int seq, int64_t width,
		 int heads, int kv_heads, bool causal, int copies_fwd, int copies_bwd);
/*
 * Which path F.scaled_dot_product_attention(..., enable_gqa=True) takes (torch 2.11, what
 * transformers passes for grouped-query attention without a padding mask): flash and
 * cuDNN attention take 16-bit inputs alone and the memory-efficient kernel takes no
 * grouped query attention, so 32-bit inputs with fewer key heads run the math path
 * (true); everything else a fused kernel (false).
 */
bool ly_sdpa_math(int precision, int heads, int kv_heads);
/*
 * Host calls of the most recent layer that launch no kernel (view, transpose, reshape,
 * slicing of the heads and the mask): n calls forward, n autograd nodes backward.
 */
void ly_views(struct tensor_list *tl, int n);
/*
 * Copies the most recent layer makes forward that no gradient flows through (GPT-2's
 * key/value cache concatenation): n kernels, one host call each, bytes read + written in
 * all, strided (class copy).
 */
void ly_fwd_copy(struct tensor_list *tl, const char *what, int n, double bytes);
/* backward's layout copies of n kernels from `calls` host calls (the rest launched inside
 * another call) and bytes in all (autograd's views' gradients) */
void ly_bwd_copy(struct tensor_list *tl, const char *what, int n, int calls, double bytes);
/* Forward-only element-wise work of the most recent layer that no gradient flows through
 * (Llama's rotary table, the labels' padding): kernels from `calls` host calls, bytes in
 * all; kernels 0 and bytes 0: host calls alone (Python that launches nothing). */
void ly_fwd_elem(struct tensor_list *tl, const char *what, int kernels, int calls,
		 double bytes);
/* Under autocast, n fp32 tensors of `elems` elements in all cast to 16 bits inside the
 * next op's call (SDPA's inputs), and their gradients cast back (a node each); nothing
 * otherwise. */
void ly_amp_cast(struct tensor_list *tl, const char *what, int n, double elems);
/* A parameterless layer to hang operators on (loss, pooling). */
int ly_plain(struct tensor_list *tl, const char *name);

/*
 * Operators added to the most recent layer (they run right after it and their backward
 * runs before its own). elems = elements of the activation, ebytes = its element size.
 * kernels: the eager kernels of one forward call (HF's gelu_new is seven).
 */
void ly_act(struct tensor_list *tl, const char *what, double elems, int ebytes, int kernels);
/* HF's gelu_new formula (GPT-2): under autocast an fp32 formula between two casts */
void ly_gelu_formula(struct tensor_list *tl, double elems);
/* HF's apply_rotary_pos_emb over q and k (elems: their elements together), its slices'
 * gradients included */
#define LY_ROTARY_SLICES 4 /* rotate_half's two halves of q and of k */
void ly_rotary(struct tensor_list *tl, double elems);
/* HF's logits.float() before the loss: a cast under autocast, nothing otherwise */
void ly_logits_float(struct tensor_list *tl, double elems);
void ly_add(struct tensor_list *tl, double elems, int ebytes);
/* A transformer's residual add, branch + stream: under autocast a 16-bit branch into the
 * fp32 stream (2 + 4 + 4 bytes an element, PyTorch's dtype-casting kernel), else
 * ly_add of the activation's width */
void ly_add_residual(struct tensor_list *tl, double elems);
/*
 * LayerNorm's copy of a strided input into a contiguous one, inside its call (torchvision's
 * ViT: both norms of every layer, 29.7 us at vit_b_16 b64 in fp32 and autocast alike).
 * Under autocast the input is the fp32 residual stream and the copy PyTorch's
 * non-vectorized element-wise kernel, at the rate of the promoted residual add
 * (promote_share: the fit cases' kernels, 2.61-2.68 TB/s of 4 + 4 bytes an element); in
 * fp32 the copy class's share, fitted with the layout copies, already holds it.
 */
void ly_norm_input_copy(struct tensor_list *tl, double elems);
/* backward only: autograd sums the gradients of a tensor read by n + 1 ops (n adds) */
void ly_fork(struct tensor_list *tl, int n, double elems, int ebytes);
void ly_dropout(struct tensor_list *tl, double elems, int ebytes, double p);
void ly_pool(struct tensor_list *tl, const char *what, double in_elems, double out_elems,
	     int ebytes, bool indices);
/* Cross-entropy over rows x classes logits (log-softmax + nll, fp32 under autocast). */
void ly_loss(struct tensor_list *tl, double rows, int64_t classes);
/* Autocast: the next linear's input is an fp32 activation (a norm's output, again). */
void ly_input_f32(struct tensor_list *tl);
/* Bytes of an activation element of this list's precision; of the fp32 residual stream
 * of autocast transformers (4 under autocast, else the activation's). */
int ly_act_bytes(const struct tensor_list *tl);
int ly_res_bytes(const struct tensor_list *tl);

/* Attention scores + weighted sum of one layer: width = heads * head_dim. */
double ly_attention_flops(int batch, int seq, int64_t width, bool causal);

/* Output side of a convolution or pooling window. */
int ly_conv_out(int in, int k, int stride, int pad);
/* CUDA kernels of one convolution pass (enum conv_pass) of a k x k window */
int ly_conv_kernels(int pass, int k, bool fp32);

#endif
