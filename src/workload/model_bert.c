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

#include "util/log.h"
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

static void bert_layer(struct tensor_list *tl, int i, int batch, int seq, int64_t h,
		       int64_t ffn)
{
	double pos = (double)batch * seq;
	char pre[48], n[TENSOR_NAME_MAX];

	snprintf(pre, sizeof(pre), "bert.encoder.layer.%d", i);
	snprintf(n, sizeof(n), "%s.attention.self.query", pre);
	ly_linear(tl, n, h, h, true, pos);
	snprintf(n, sizeof(n), "%s.attention.self.key", pre);
	ly_linear(tl, n, h, h, true, pos);
	snprintf(n, sizeof(n), "%s.attention.self.value", pre);
	ly_linear(tl, n, h, h, true, pos);
	snprintf(n, sizeof(n), "%s.attention.self.core", pre);
	ly_compute(tl, n, ly_attention_flops(batch, seq, h, false));
	snprintf(n, sizeof(n), "%s.attention.output.dense", pre);
	ly_linear(tl, n, h, h, true, pos);
	snprintf(n, sizeof(n), "%s.attention.output.LayerNorm", pre);
	ly_norm(tl, n, h, true, pos * h);
	snprintf(n, sizeof(n), "%s.intermediate.dense", pre);
	ly_linear(tl, n, h, ffn, true, pos);
	snprintf(n, sizeof(n), "%s.output.dense", pre);
	ly_linear(tl, n, ffn, h, true, pos);
	snprintf(n, sizeof(n), "%s.output.LayerNorm", pre);
	ly_norm(tl, n, h, true, pos * h);
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
	if (seq > BERT_POSITIONS || h % heads) {
		log_err(LOG_WORKLOAD, "model %s: seq_len %d above %d positions, or hidden %lld "
			"not a multiple of heads %d", m->name, seq, BERT_POSITIONS,
			(long long)h, heads);
		return -EINVAL;
	}
	/* Registration: word, position, token_type; execution: word, token_type, position. */
	l_word = ly_embedding(tl, "bert.embeddings.word_embeddings", vocab, h, pos);
	l_pos = ly_embedding(tl, "bert.embeddings.position_embeddings", BERT_POSITIONS, h, pos);
	l_type = ly_embedding(tl, "bert.embeddings.token_type_embeddings", BERT_TYPES, h, pos);
	tl_exec_after(tl, l_type, l_word);
	l_ln = ly_norm(tl, "bert.embeddings.LayerNorm", h, true, pos * h);
	(void)l_pos;
	(void)l_ln;
	for (i = 0; i < layers; i++)
		bert_layer(tl, i, batch, seq, h, ffn);
	ly_linear(tl, "bert.pooler.dense", h, h, true, batch);

	/* The decoder: its FLOPs use the tied weight; it owns only cls.predictions.bias. */
	l_dec = tl_layer(tl, 2.0 * h * vocab * pos + vocab * pos, 2.0 * (2.0 * h * vocab * pos),
			 "cls.predictions.decoder");
	tl_param(tl, l_dec, 1, vb, "cls.predictions.bias");
	ly_linear(tl, "cls.predictions.transform.dense", h, h, true, pos);
	i = ly_norm(tl, "cls.predictions.transform.LayerNorm", h, true, pos * h);
	tl_exec_after(tl, l_dec, i);
	ly_linear(tl, "cls.seq_relationship", h, 2, true, batch);
	return tl->err;
}
