/*
 * Hugging Face BertForPreTraining (BERT base / large), vocabulary 30522, 512 positions,
 * 2 token types. The MLM decoder weight is tied to bert.embeddings.word_embeddings
 * (named_parameters() lists it once, under the embedding); the decoder bias is the
 * head's own parameter cls.predictions.bias, registered before cls.predictions.transform.
 *
 * Execution order: word, token_type, position embeddings, LayerNorm, the layers (query,
 * key, value, attention, attention.output.dense, LayerNorm, intermediate, output.dense,
 * LayerNorm), pooler, cls.predictions.transform (dense, LayerNorm), the decoder (tied
 * weight + cls.predictions.bias), cls.seq_relationship.
 * Gradient-ready order (reverse execution, loss = MLM + NSP as HF computes it):
 * seq_relationship (bias, weight), cls.predictions.bias, transform.LayerNorm, transform.dense,
 * pooler, each layer from output.LayerNorm down to query (value, key, query: value's
 * nodes were created last), embeddings.LayerNorm, position, token_type and finally
 * word_embeddings: the tied weight's accumulator waits for both the decoder and the
 * embedding lookup, so it is ready only at the very end of backward.
 */
#include <errno.h>
#include <stdio.h>

#include "workload/layers.h"
#include "workload/model.h"

struct bert_preset {
	int layers;
	int heads;
	int hidden;
	int ffn;
};

const struct bert_preset bert_base_preset = { 12, 12, 768, 3072 };
const struct bert_preset bert_large_preset = { 24, 16, 1024, 4096 };

#define BERT_VOCAB 30522
#define BERT_POSITIONS 512
#define BERT_TYPES 2
#define BERT_BATCH 32
#define BERT_SEQ 128

/* HF BertSelfAttention: query, key and value read the layer's input, whose gradients
 * autograd sums (2 adds a layer besides the residual's; the fit cases' traces, 2026-12-03:
 * 4 adds a layer in all, no layout copies: SDPA takes and returns the permuted views) */
#define BERT_QKV_FORKS 2
/* HF's BertSelfAttention and sdpa_attention_forward: q, k, v each .view + .transpose, the
 * mask's slice, the output's .transpose + .reshape: host calls that launch no kernel */
#define BERT_VIEWS 9
#define BERT_DROPOUT 0.1 /* hidden_dropout_prob; attention's runs inside SDPA */

static void bert_layer(struct tensor_list *tl, int i, int batch, int seq, int64_t h,
		       int heads, int64_t ffn)
{
	double pos = (double)batch * seq;
	int e = ly_act_bytes(tl), r = ly_res_bytes(tl);

	ly_scope(tl, "bert.encoder.layer.%d", i);
	ly_qkv(tl, "attention.self.query", "attention.self.key", "attention.self.value", h, h, true,
	       pos);
	ly_attention(tl, "attention.self.core", batch, seq, h, heads, heads, false, 0, 0);
	ly_fork(tl, BERT_QKV_FORKS, pos * h, r);
	ly_views(tl, BERT_VIEWS);
	ly_linear(tl, "attention.output.dense", h, h, true, pos);
	ly_dropout(tl, pos * h, e, BERT_DROPOUT);
	ly_add_residual(tl, pos * h);
	ly_norm(tl, "attention.output.LayerNorm", h, true, pos * h);
	ly_linear(tl, "intermediate.dense", h, ffn, true, pos);
	ly_act(tl, "gelu", pos * ffn, e, 1);
	ly_linear(tl, "output.dense", ffn, h, true, pos);
	ly_dropout(tl, pos * h, e, BERT_DROPOUT);
	ly_add_residual(tl, pos * h);
	ly_norm(tl, "output.LayerNorm", h, true, pos * h);
}

int model_build_bert(const struct model_info *m, const struct workload_opts *w,
		     struct tensor_list *tl)
{
	const struct bert_preset *p = m->preset;
	int batch = model_pick(w->batch, BERT_BATCH);
	int seq = model_pick(w->seq_len, BERT_SEQ);
	int layers = model_pick(w->num_layers, p->layers);
	int heads = model_pick(w->num_heads, p->heads);
	int64_t h = model_pick(w->hidden_size, p->hidden);
	int64_t ffn = model_pick(w->ffn_size, p->ffn);
	int64_t vocab = model_pick(w->vocab_size, BERT_VOCAB);
	int64_t vb[1] = { vocab };
	double pos = (double)batch * seq;
	int l_word, l_pos, l_type, l_ln, l_dec, i;

	tl->batch = batch;
	tl->seq_len = seq;
	if (model_need_positions(tl, m->name, seq, BERT_POSITIONS) ||
	    model_need_heads(tl, w, m->name, h, heads))
		return -EINVAL;
	/* Registration: word, position, token_type; execution: word, token_type, position. */
	ly_scope(tl, "%s", "bert.embeddings");
	l_word = ly_embedding(tl, "word_embeddings", vocab, h, pos);
	l_pos = ly_embedding(tl, "position_embeddings", BERT_POSITIONS, h, pos);
	ly_add(tl, pos * h, 4);
	l_type = ly_embedding(tl, "token_type_embeddings", BERT_TYPES, h, pos);
	ly_add(tl, pos * h, 4);
	tl_exec_after(tl, l_type, l_word);
	l_ln = ly_norm(tl, "LayerNorm", h, true, pos * h);
	ly_dropout(tl, pos * h, 4, BERT_DROPOUT);
	(void)l_pos;
	(void)l_ln;
	for (i = 0; i < layers; i++)
		bert_layer(tl, i, batch, seq, h, heads, ffn);
	ly_scope(tl, "%s", "");
	ly_linear(tl, "bert.pooler.dense", h, h, true, batch);
	ly_act(tl, "tanh", (double)batch * h, ly_act_bytes(tl), 1);

	/* The decoder: its FLOPs use the tied weight; it owns only cls.predictions.bias.
	 * Its GEMM runs over the 30522-word vocabulary (not a multiple of 8). */
	l_dec = tl_layer(tl, 2.0 * h * vocab * pos + vocab * pos, 2.0 * (2.0 * h * vocab * pos),
			 "cls.predictions.decoder");
	tl_param(tl, l_dec, 1, vb, "cls.predictions.bias");
	ly_tied_linear_ops(tl, l_dec, pos, h, vocab, true);
	ly_linear(tl, "cls.predictions.transform.dense", h, h, true, pos);
	ly_act(tl, "gelu", pos * h, ly_act_bytes(tl), 1);
	i = ly_norm(tl, "cls.predictions.transform.LayerNorm", h, true, pos * h);
	tl_exec_after(tl, l_dec, i);
	ly_linear(tl, "cls.seq_relationship", h, 2, true, batch);
	ly_loss(tl, pos, vocab);
	return tl->err;
}
