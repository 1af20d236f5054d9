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

#include "util/log.h"
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

/* One decoder layer; returns the index of its last layer in execution order. */
static int llama_layer(struct tensor_list *tl, int i, int prev, int batch, int seq, int64_t h,
		       int64_t kv, int64_t ffn)
{
	double pos = (double)batch * seq;
	char pre[48], n[TENSOR_NAME_MAX];
	int o, down, ln1, ln2;

	snprintf(pre, sizeof(pre), "model.layers.%d", i);
	snprintf(n, sizeof(n), "%s.self_attn.q_proj", pre);
	ly_linear(tl, n, h, h, false, pos);
	snprintf(n, sizeof(n), "%s.self_attn.k_proj", pre);
	ly_linear(tl, n, h, kv, false, pos);
	snprintf(n, sizeof(n), "%s.self_attn.v_proj", pre);
	ly_linear(tl, n, h, kv, false, pos);
	snprintf(n, sizeof(n), "%s.self_attn.core", pre);
	ly_compute(tl, n, ly_attention_flops(batch, seq, h, true));
	snprintf(n, sizeof(n), "%s.self_attn.o_proj", pre);
	o = ly_linear(tl, n, h, h, false, pos);
	snprintf(n, sizeof(n), "%s.mlp.gate_proj", pre);
	ly_linear(tl, n, h, ffn, false, pos);
	snprintf(n, sizeof(n), "%s.mlp.up_proj", pre);
	ly_linear(tl, n, h, ffn, false, pos);
	snprintf(n, sizeof(n), "%s.mlp.down_proj", pre);
	down = ly_linear(tl, n, ffn, h, false, pos);
	snprintf(n, sizeof(n), "%s.input_layernorm", pre);
	ln1 = ly_norm(tl, n, h, false, pos * h);
	snprintf(n, sizeof(n), "%s.post_attention_layernorm", pre);
	ln2 = ly_norm(tl, n, h, false, pos * h);
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
	if (h % heads || heads % kv_heads) {
		log_err(LOG_WORKLOAD, "model %s: hidden %lld not a multiple of heads %d, or heads "
			"not a multiple of kv_heads %d", m->name, (long long)h, heads, kv_heads);
		return -EINVAL;
	}
	prev = ly_embedding(tl, "model.embed_tokens", vocab, h, pos);
	for (i = 0; i < layers; i++)
		prev = llama_layer(tl, i, prev, batch, seq, h, h / heads * kv_heads, ffn);
	ly_norm(tl, "model.norm", h, false, pos * h);
	ly_linear(tl, "lm_head", h, vocab, false, pos);
	return tl->err;
}
