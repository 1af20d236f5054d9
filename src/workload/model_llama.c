/*
 * Llama-style decoder (Hugging Face LlamaForCausalLM) from its shape: hidden, layers,
 * heads, kv-heads (grouped-query attention), ffn (SwiGLU gate/up/down), vocabulary.
 * No biases, RMSNorm weights only, untied lm_head.
 *
 * Registration per layer: self_attn.{q,k,v,o}_proj, mlp.{gate,up,down}_proj,
 * input_layernorm, post_attention_layernorm. Execution: input_layernorm, q, k, v,
 * attention, o, post_attention_layernorm, gate, up, down.
 * Gradient-ready order (reverse execution): lm_head, norm, then per layer down, up,
 * gate (up's nodes were created after gate's), post_attention_layernorm, o, v, k, q
 * (each projection's grad reaches its weight through a TBackward created after the
 * earlier projections), input_layernorm; embed_tokens last.
 */
#include <errno.h>
#include <stdio.h>

#include "workload/layers.h"
#include "workload/model.h"

struct llama_preset {
	int hidden;
	int layers;
	int heads;
	int kv_heads;
	int ffn;
	int vocab;
	int seq;
};

const struct llama_preset llama2_7b_preset = { 4096, 32, 32, 32, 11008, 32000, 4096 };
const struct llama_preset llama3_8b_preset = { 4096, 32, 32, 8, 14336, 128256, 8192 };

#define LLAMA_BATCH 1

/*
 * The eager operators around the matrix work, from the profiler (transformers 5.17, torch
 * 2.11, llama2_7b and llama3_8b reduced to 2 and 8 layers, 2026-12-05):
 * - apply_rotary_pos_emb: per q and k a multiply by cos, rotate_half (two slices, a neg,
 *   a cat), a multiply by sin and an add: 10 kernels; under autocast the 16-bit q and k
 *   times fp32 cos / sin give fp32 (3 bytes an element on average), which SDPA casts
 *   back down (two casts). Backward: each slice's gradient a zero fill and a copy.
 * - views: q, k, v's view and transpose, cos / sin's unsqueeze, the four slices, the
 *   output's transpose and reshape: 14 calls that launch nothing, a node each backward.
 * - use_cache (the config's default, as a user trains it): DynamicCache stores each
 *   layer's keys and values with torch.cat (a copy of each), behind two torch.tensor([])
 *   (three host calls each).
 * - the output's transpose(1, 2).contiguous(): one copy forward; backward 7 copies of
 *   layout a layer (the gradients of q, k, v and the output through their transposes).
 */
#define LLAMA_VIEWS (8 + LY_ROTARY_SLICES + 2) /* q, k, v, output; slices; cos / sin */
#define LLAMA_CACHE_CALLS 6
#define LLAMA_COPIES_FWD 1
#define LLAMA_COPIES_BWD 7
/* the model's rotary table once per forward (inv_freq times positions, cat, cos, sin, the
 * scaling, casts) and the cache position's arange: kernels and host calls */
#define ROPE_TABLE_KERNELS 9
#define ROPE_TABLE_CALLS 16
/* ForCausalLMLoss: the labels padded by one and shifted (pad, slice, contiguous, view) */
#define LABELS_KERNELS 2
#define LABELS_CALLS 5

/* One decoder layer; returns the index of its last layer in execution order. */
static int llama_layer(struct tensor_list *tl, int i, int prev, int batch, int seq, int64_t h,
		       int heads, int kv_heads, int64_t ffn)
{
	int64_t kv = h / heads * kv_heads; /* the keys' and values' width */
	double pos = (double)batch * seq;
	int e = ly_act_bytes(tl);
	int o, down, ln1, ln2;

	ly_scope(tl, "model.layers.%d", i);
	ly_qkv(tl, "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", h, kv, false, pos);
	ly_rotary(tl, pos * (h + kv));
	ly_views(tl, LLAMA_VIEWS);
	ly_fwd_elem(tl, "kv_cache.new", 0, LLAMA_CACHE_CALLS, 0);
	ly_fwd_copy(tl, "kv_cache.cat", 2, 2.0 * 2.0 * pos * kv * e);
	ly_amp_cast(tl, "cast.qk", 2, pos * (h + kv));
	ly_attention(tl, "self_attn.core", batch, seq, h, heads, kv_heads, true, LLAMA_COPIES_FWD,
		     LLAMA_COPIES_BWD);
	o = ly_linear(tl, "self_attn.o_proj", h, h, false, pos);
	ly_add_residual(tl, pos * h);
	ly_input_f32(tl);
	ly_linear(tl, "mlp.gate_proj", h, ffn, false, pos);
	ly_input_f32(tl);
	ly_linear(tl, "mlp.up_proj", h, ffn, false, pos);
	ly_act(tl, "silu_mul", pos * ffn, e, 2);
	down = ly_linear(tl, "mlp.down_proj", ffn, h, false, pos);
	ly_add_residual(tl, pos * h);
	ln1 = ly_rms_norm(tl, "input_layernorm", h, pos * h);
	ln2 = ly_rms_norm(tl, "post_attention_layernorm", h, pos * h);
	tl_exec_after(tl, ln1, prev);
	tl_exec_after(tl, ln2, o);
	return down;
}

int model_build_llama(const struct model_info *m, const struct workload_opts *w,
		      struct tensor_list *tl)
{
	const struct llama_preset *p = m->preset;
	int batch = model_pick(w->batch, LLAMA_BATCH);
	int seq = model_pick(w->seq_len, p->seq);
	int layers = model_pick(w->num_layers, p->layers);
	int heads = model_pick(w->num_heads, p->heads);
	int kv_heads = model_pick(w->num_kv_heads, p->kv_heads);
	int64_t h = model_pick(w->hidden_size, p->hidden);
	int64_t ffn = model_pick(w->ffn_size, p->ffn);
	int64_t vocab = model_pick(w->vocab_size, p->vocab);
	double pos = (double)batch * seq;
	int prev, i;

	tl->batch = batch;
	tl->seq_len = seq;
	if (model_need_heads(tl, w, m->name, h, heads))
		return -EINVAL;
	if (heads % kv_heads) {
		return tl_reject(tl, w->num_kv_heads ? "num_kv_heads" : "num_heads",
				 "model %s: num_heads %d is not a multiple of num_kv_heads %d",
				 m->name, heads, kv_heads);
	}
	prev = ly_embedding(tl, "model.embed_tokens", vocab, h, pos);
	ly_fwd_elem(tl, "rope.table", ROPE_TABLE_KERNELS, ROPE_TABLE_CALLS,
		    2.0 * 4.0 * pos * (double)(h / heads));
	for (i = 0; i < layers; i++)
		prev = llama_layer(tl, i, prev, batch, seq, h, heads, kv_heads, ffn);
	ly_scope(tl, "%s", "");
	ly_rms_norm(tl, "model.norm", h, pos * h);
	ly_linear(tl, "lm_head", h, vocab, false, pos);
	ly_logits_float(tl, pos * vocab);
	ly_fwd_elem(tl, "labels.shift", LABELS_KERNELS, LABELS_CALLS, 4.0 * 8.0 * pos);
	ly_loss(tl, pos, vocab);
	return tl->err;
}
