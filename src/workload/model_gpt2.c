/*
 * Hugging Face GPT2LMHeadModel (small, medium, large, xl): vocabulary 50257, 1024
 * positions, Conv1D projections (weight stored [in, out]). lm_head.weight is tied to
 * transformer.wte.weight, so it is not a separate parameter; the head is a compute-only
 * layer here.
 *
 * Gradient-ready order (reverse execution): ln_f, then each block from mlp.c_proj down
 * to ln_1 (Conv1D: bias then weight, both direct addmm inputs; LayerNorm: weight then
 * bias), then wpe (the embedding add's second operand runs first) and wte last: its
 * accumulator waits for both the tied head and the token lookup.
 */
#include <errno.h>
#include <stdio.h>

#include "workload/layers.h"
#include "workload/model.h"

struct gpt2_preset {
	int layers;
	int heads;
	int hidden;
};

const struct gpt2_preset gpt2_preset = { 12, 12, 768 };
const struct gpt2_preset gpt2_medium_preset = { 24, 16, 1024 };
const struct gpt2_preset gpt2_large_preset = { 36, 20, 1280 };
const struct gpt2_preset gpt2_xl_preset = { 48, 25, 1600 };

#define GPT2_VOCAB 50257
#define GPT2_POSITIONS 1024
#define GPT2_BATCH 8
#define GPT2_SEQ 1024

/* HF GPT2Attention's split / merge of heads: copies per layer (profiler, torch 2.11) */
#define GPT2_COPIES_FWD 3
/* backward: 12 copy-class kernels a layer, but small ones: 1077 us over 12 layers at gpt2
 * b8 x 1024 fp32 (a fit case's kernels, 2026-12-01), 2.3 copies of an activation each way
 * at the copy class's rate, not 12. Nine of the twelve are memsets: four before the bias
 * gradients' column sums and one of the attention's, which those ops count already, and
 * four more inside the GEMMs' calls (launched by cuBLAS, no call of their own); the other
 * three are calls: the cat of q, k, v's gradients, a fill and a copy */
#define GPT2_COPY_KERNELS_BWD 7
#define GPT2_COPY_CALLS_BWD 3
#define GPT2_COPY_ACTS_BWD 2.3
#define GPT2_DROPOUT 0.1 /* resid_pdrop, embd_pdrop; attn_pdrop runs inside SDPA */

static void gpt2_block(struct tensor_list *tl, int i, int batch, int seq, int64_t h,
		       int heads, int64_t ffn)
{
	double pos = (double)batch * seq;
	int e = ly_act_bytes(tl);

	ly_scope(tl, "transformer.h.%d", i);
	ly_norm(tl, "ln_1", h, true, pos * h);
	ly_conv1d(tl, "attn.c_attn", h, 3 * h, pos);
	ly_attention(tl, "attn.core", batch, seq, h, heads, heads, true, GPT2_COPIES_FWD, 0);
	ly_bwd_copy(tl, "layout.copy.bwd", GPT2_COPY_KERNELS_BWD, GPT2_COPY_CALLS_BWD,
		    GPT2_COPY_ACTS_BWD * 2.0 * pos * (double)h * e);
	/* use_cache: the layer's keys and values go into the cache (torch.cat of each, the
	 * profiler's CatArrayBatchedCopy, 2 a layer); the loss never reads them */
	ly_fwd_copy(tl, "kv_cache.cat", 2, 2.0 * 2.0 * pos * h * e);
	ly_conv1d(tl, "attn.c_proj", h, h, pos);
	ly_dropout(tl, pos * h, e, GPT2_DROPOUT);
	ly_add_residual(tl, pos * h);
	ly_norm(tl, "ln_2", h, true, pos * h);
	ly_conv1d(tl, "mlp.c_fc", h, ffn, pos);
	ly_gelu_formula(tl, pos * ffn);
	ly_conv1d(tl, "mlp.c_proj", ffn, h, pos);
	ly_dropout(tl, pos * h, e, GPT2_DROPOUT);
	ly_add_residual(tl, pos * h);
}

int model_build_gpt2(const struct model_info *m, const struct workload_opts *w,
		     struct tensor_list *tl)
{
	const struct gpt2_preset *p = m->preset;
	int batch = model_pick(w->batch, GPT2_BATCH);
	int seq = model_pick(w->seq_len, GPT2_SEQ);
	int layers = model_pick(w->num_layers, p->layers);
	int heads = model_pick(w->num_heads, p->heads);
	int64_t h = model_pick(w->hidden_size, p->hidden);
	int64_t ffn = model_pick(w->ffn_size, 4 * (int)h);
	int64_t vocab = model_pick(w->vocab_size, GPT2_VOCAB);
	double pos = (double)batch * seq;
	int i;

	tl->batch = batch;
	tl->seq_len = seq;
	if (model_need_positions(tl, m->name, seq, GPT2_POSITIONS) ||
	    model_need_heads(tl, w, m->name, h, heads))
		return -EINVAL;
	ly_embedding(tl, "transformer.wte", vocab, h, pos);
	ly_embedding(tl, "transformer.wpe", GPT2_POSITIONS, h, pos);
	ly_add(tl, pos * h, 4);
	ly_dropout(tl, pos * h, 4, GPT2_DROPOUT);
	for (i = 0; i < layers; i++)
		gpt2_block(tl, i, batch, seq, h, heads, ffn);
	ly_scope(tl, "%s", "");
	ly_norm(tl, "transformer.ln_f", h, true, pos * h);
	/* the head's weight is wte's: its GEMMs over the 50257-word vocabulary (odd) */
	i = tl_layer(tl, 2.0 * h * vocab * pos, 4.0 * h * vocab * pos, "lm_head");
	ly_tied_linear_ops(tl, i, pos, h, vocab, false);
	/* HF upcasts the logits (logits.float()) and shifts them before the loss */
	ly_logits_float(tl, pos * vocab);
	ly_loss(tl, pos, vocab);
	return tl->err;
}
