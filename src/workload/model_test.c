/* Model zoo: parameter and tensor counts against the published references, names, orders. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "workload/costmodel.h"
#include "workload/layers.h"
#include "workload/model.h"

/*
 * Reference numbers: sum(p.numel() for p in model.parameters()) and
 * len(list(model.named_parameters())) of the PyTorch modules. bert_large: the often
 * quoted 335,174,458 is not BertForPreTraining's count; deriving it from the
 * architecture gives BertModel 335,141,888 + heads (30,522 decoder bias, 1,049,600
 * transform dense, 2,048 LayerNorm, 2,050 seq_relationship) = 336,226,108.
 */
static const struct {
	const char *name;
	uint64_t params;
	uint32_t tensors;
	const char *first; /* registration order */
	const char *last;
	const char *ready_first; /* gradient-ready order */
	const char *ready_last;
} expect[] = {
	{ "resnet18", 11689512, 62, "conv1.weight", "fc.bias", "fc.bias", "conv1.weight" },
	{ "resnet34", 21797672, 110, "conv1.weight", "fc.bias", "fc.bias", "conv1.weight" },
	{ "resnet50", 25557032, 161, "conv1.weight", "fc.bias", "fc.bias", "conv1.weight" },
	{ "resnet101", 44549160, 314, "conv1.weight", "fc.bias", "fc.bias", "conv1.weight" },
	{ "resnet152", 60192808, 467, "conv1.weight", "fc.bias", "fc.bias", "conv1.weight" },
	{ "vit_b_16", 86567656, 152, "class_token", "heads.head.bias", "heads.head.bias",
	  "conv_proj.bias" },
	{ "vit_l_16", 304326632, 296, "class_token", "heads.head.bias", "heads.head.bias",
	  "conv_proj.bias" },
	{ "vit_h_14", 632045800, 392, "class_token", "heads.head.bias", "heads.head.bias",
	  "conv_proj.bias" },
	{ "bert_base", 110106428, 206, "bert.embeddings.word_embeddings.weight",
	  "cls.seq_relationship.bias", "cls.seq_relationship.bias",
	  "bert.embeddings.word_embeddings.weight" },
	{ "bert_large", 336226108, 398, "bert.embeddings.word_embeddings.weight",
	  "cls.seq_relationship.bias", "cls.seq_relationship.bias",
	  "bert.embeddings.word_embeddings.weight" },
	{ "gpt2", 124439808, 148, "transformer.wte.weight", "transformer.ln_f.bias",
	  "transformer.ln_f.weight", "transformer.wte.weight" },
	{ "gpt2_medium", 354823168, 292, "transformer.wte.weight", "transformer.ln_f.bias",
	  "transformer.ln_f.weight", "transformer.wte.weight" },
	{ "gpt2_large", 774030080, 436, "transformer.wte.weight", "transformer.ln_f.bias",
	  "transformer.ln_f.weight", "transformer.wte.weight" },
	{ "gpt2_xl", 1557611200, 580, "transformer.wte.weight", "transformer.ln_f.bias",
	  "transformer.ln_f.weight", "transformer.wte.weight" },
	{ "llama2_7b", 6738415616ull, 291, "model.embed_tokens.weight", "lm_head.weight",
	  "lm_head.weight", "model.embed_tokens.weight" },
	{ "llama3_8b", 8030261248ull, 291, "model.embed_tokens.weight", "lm_head.weight",
	  "lm_head.weight", "model.embed_tokens.weight" },
};

static int build(const char *name, struct tensor_list *tl)
{
	struct workload_opts w;

	memset(&w, 0, sizeof(w));
	snprintf(w.model, sizeof(w.model), "%s", name);
	return model_build(&w, tl);
}

/* Position of `name` in the ready order, or -1. */
static int ready_pos(const struct tensor_list *tl, const char *name)
{
	int idx = tensor_list_find(tl, name);
	uint32_t i;

	for (i = 0; idx >= 0 && i < tl->n; i++) {
		if (tl->ready[i] == (uint32_t)idx)
			return (int)i;
	}
	return -1;
}

static void test_counts(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(expect); i++) {
		struct tensor_list tl;
		uint64_t sum = 0;
		uint8_t seen[1024] = { 0 };
		uint32_t j;

		assert_int_equal(build(expect[i].name, &tl), 0);
		if (tl.numel != expect[i].params || tl.n != expect[i].tensors)
			print_error("%s: %llu params in %u tensors\n", expect[i].name,
				    (unsigned long long)tl.numel, tl.n);
		assert_int_equal(tl.numel, expect[i].params);
		assert_int_equal(tl.n, expect[i].tensors);
		for (j = 0; j < tl.n; j++)
			sum += tl.t[j].numel;
		assert_int_equal(sum, tl.numel);
		assert_string_equal(tl.t[0].name, expect[i].first);
		assert_string_equal(tl.t[tl.n - 1].name, expect[i].last);
		assert_string_equal(tl.t[tl.ready[0]].name, expect[i].ready_first);
		assert_string_equal(tl.t[tl.ready[tl.n - 1]].name, expect[i].ready_last);
		/* ready is a permutation */
		for (j = 0; j < tl.n; j++) {
			assert_true(tl.ready[j] < tl.n);
			assert_int_equal(seen[tl.ready[j]], 0);
			seen[tl.ready[j]] = 1;
		}
		assert_false(tensor_list_has_duplicates(&tl));
		assert_true(tl.fwd_flops > 0);
		assert_true(tl.bwd_flops > tl.fwd_flops);
		tensor_list_free(&tl);
	}
}

static void test_table(void **state)
{
	size_t i;

	(void)state;
	/* + custom and trace, which build from [workload] layers / op_trace */
	assert_int_equal(model_count(), ARRAY_SIZE(expect) + 2);
	for (i = 0; i < model_count(); i++) {
		const struct model_info *m = model_at(i);

		assert_non_null(m);
		assert_ptr_equal(model_find(m->name), m);
		assert_non_null(m->help);
		assert_non_null(m->family);
	}
	assert_null(model_at(model_count()));
	assert_null(model_find("resnet51"));
}

/* numel, FLOPs, operator bytes and attention tiles of m built with key = v (0: the preset). */
static double shape_sig(const char *m, const char *key, int v)
{
	static const struct {
		const char *key;
		size_t off; /* an int of struct workload_opts */
	} fields[] = {
		{ "batch", offsetof(struct workload_opts, batch) },
		{ "seq_len", offsetof(struct workload_opts, seq_len) },
		{ "image_size", offsetof(struct workload_opts, image_size) },
		{ "num_layers", offsetof(struct workload_opts, num_layers) },
		{ "num_heads", offsetof(struct workload_opts, num_heads) },
		{ "num_kv_heads", offsetof(struct workload_opts, num_kv_heads) },
		{ "ffn_size", offsetof(struct workload_opts, ffn_size) },
		{ "vocab_size", offsetof(struct workload_opts, vocab_size) },
	};
	struct workload_opts w;
	struct tensor_list tl;
	double sig, bytes = 0;
	uint32_t i;
	size_t f;

	memset(&w, 0, sizeof(w));
	snprintf(w.model, sizeof(w.model), "%s", m);
	for (f = 0; f < ARRAY_SIZE(fields) && strcmp(fields[f].key, key); f++)
		;
	if (f == ARRAY_SIZE(fields))
		fail_msg("no field for %s", key);
	*(int *)((char *)&w + fields[f].off) = v;
	assert_int_equal(model_build(&w, &tl), 0);
	for (i = 0; i < tl.nops; i++)
		bytes += tl.ops[i].bytes + tl.ops[i].attn_bh + tl.ops[i].head_dim;
	sig = (double)tl.numel + tl.fwd_flops + tl.bwd_flops + bytes;
	tensor_list_free(&tl);
	return sig;
}

/*
 * model_reads_key's table (what lint warns on) says what the builders do: a shape key a
 * family reads changes the model it builds, one it does not read changes nothing.
 */
static void test_reads_key(void **state)
{
	static const struct {
		const char *key;
		int v; /* valid for every family that reads the key */
	} keys[] = { { "batch", 3 },      { "seq_len", 64 },    { "image_size", 112 },
		     { "num_layers", 2 }, { "num_heads", 64 }, { "num_kv_heads", 1 },
		     { "ffn_size", 1024 }, { "vocab_size", 1000 } };
	size_t i, k;

	(void)state;
	for (i = 0; i < model_count(); i++) {
		const char *m = model_at(i)->name;

		if (!strcmp(m, "trace") || !strcmp(m, "custom"))
			continue; /* built from a file / a string: checked below and in the CLI */
		for (k = 0; k < ARRAY_SIZE(keys); k++) {
			bool changed = shape_sig(m, keys[k].key, keys[k].v) !=
				       shape_sig(m, keys[k].key, 0);

			if (changed != model_reads_key(m, keys[k].key))
				fail_msg("%s: %s = %d %s the model, but the table says it is %sread",
					 m, keys[k].key, keys[k].v, changed ? "changes" : "does not change",
					 changed ? "not " : "");
		}
		assert_true(model_reads_key(m, "bucket_cap")); /* not scoped: every model */
		assert_true(model_reads_key(m, "gpu_tflops"));
		assert_false(model_reads_key(m, "op_trace"));
		assert_false(model_reads_key(m, "layers"));
	}
	assert_true(model_reads_key("trace", "op_trace"));
	assert_true(model_reads_key("trace", "batch"));
	assert_false(model_reads_key("trace", "gpu_tflops")); /* recorded times */
	assert_false(model_reads_key("trace", "seq_len"));
	assert_true(model_reads_key("custom", "layers"));
	assert_false(model_reads_key("custom", "vocab_size"));
	assert_false(model_reads_key("none", "batch"));
	assert_false(model_reads_key("none", "bucket_cap"));
}

static void test_unknown(void **state)
{
	struct tensor_list tl;

	(void)state;
	assert_int_equal(build("nosuch", &tl), -ENOENT);
}

static void test_resnet50_details(void **state)
{
	struct tensor_list tl;
	int i;

	(void)state;
	assert_int_equal(build("resnet50", &tl), 0);
	assert_int_equal(tl.batch, 32);
	assert_int_equal(tl.image_size, 224);
	i = tensor_list_find(&tl, "layer1.0.downsample.0.weight");
	assert_true(i >= 0);
	assert_int_equal(tl.t[i].ndim, 4);
	assert_int_equal(tl.t[i].shape[0], 256);
	assert_int_equal(tl.t[i].shape[1], 64);
	assert_int_equal(tl.t[i].shape[2], 1);
	/* ready order: fc.bias, fc.weight, then the last block bn3 (weight, bias), conv3 */
	assert_string_equal(tl.t[tl.ready[1]].name, "fc.weight");
	assert_string_equal(tl.t[tl.ready[2]].name, "layer4.2.bn3.weight");
	assert_string_equal(tl.t[tl.ready[3]].name, "layer4.2.bn3.bias");
	assert_string_equal(tl.t[tl.ready[4]].name, "layer4.2.conv3.weight");
	/* the downsample branch runs before the block's main branch in backward */
	assert_int_equal(ready_pos(&tl, "layer4.0.downsample.1.weight") + 1,
			 ready_pos(&tl, "layer4.0.downsample.1.bias"));
	assert_int_equal(ready_pos(&tl, "layer4.0.downsample.0.weight") + 1,
			 ready_pos(&tl, "layer4.0.bn3.weight"));
	/* ResNet-50 FLOPs at 224x224: ~4.1 GFLOPs (multiply-adds x2) per image */
	assert_true(tl.fwd_flops / 32 > 7.8e9 && tl.fwd_flops / 32 < 8.4e9);
	tensor_list_free(&tl);
}

static void test_transformer_orders(void **state)
{
	struct tensor_list tl;

	(void)state;
	assert_int_equal(build("bert_base", &tl), 0);
	assert_string_equal(tl.t[tl.ready[1]].name, "cls.seq_relationship.weight");
	assert_string_equal(tl.t[tl.ready[2]].name, "cls.predictions.bias");
	assert_string_equal(tl.t[tl.ready[3]].name, "cls.predictions.transform.LayerNorm.weight");
	assert_string_equal(tl.t[tl.ready[5]].name, "cls.predictions.transform.dense.bias");
	assert_string_equal(tl.t[tl.ready[7]].name, "bert.pooler.dense.bias");
	assert_string_equal(tl.t[tl.ready[9]].name,
			    "bert.encoder.layer.11.output.LayerNorm.weight");
	assert_string_equal(tl.t[tl.ready[tl.n - 2]].name,
			    "bert.embeddings.token_type_embeddings.weight");
	assert_string_equal(tl.t[tl.ready[tl.n - 3]].name,
			    "bert.embeddings.position_embeddings.weight");
	assert_true(ready_pos(&tl, "bert.encoder.layer.0.attention.self.value.bias") <
		    ready_pos(&tl, "bert.encoder.layer.0.attention.self.key.bias"));
	/* registration: cls.predictions.bias right after the pooler */
	assert_int_equal(tensor_list_find(&tl, "cls.predictions.bias"),
			 tensor_list_find(&tl, "bert.pooler.dense.bias") + 1);
	assert_int_equal(tensor_list_find(&tl, "cls.predictions.decoder.weight"), -1);
	tensor_list_free(&tl);

	assert_int_equal(build("vit_b_16", &tl), 0);
	assert_int_equal(tl.seq_len, 197);
	assert_string_equal(tl.t[tl.ready[tl.n - 2]].name, "conv_proj.weight");
	assert_string_equal(tl.t[tl.ready[tl.n - 3]].name, "class_token");
	assert_string_equal(tl.t[tl.ready[tl.n - 4]].name, "encoder.pos_embedding");
	assert_int_equal(tl.t[tensor_list_find(&tl, "encoder.pos_embedding")].shape[1], 197);
	assert_true(ready_pos(&tl, "encoder.layers.encoder_layer_0.self_attention.in_proj_bias") <
		    ready_pos(&tl, "encoder.layers.encoder_layer_0.self_attention.in_proj_weight"));
	tensor_list_free(&tl);

	assert_int_equal(build("gpt2", &tl), 0);
	assert_string_equal(tl.t[tl.ready[2]].name, "transformer.h.11.mlp.c_proj.bias");
	assert_string_equal(tl.t[tl.ready[3]].name, "transformer.h.11.mlp.c_proj.weight");
	assert_string_equal(tl.t[tl.ready[tl.n - 2]].name, "transformer.wpe.weight");
	assert_int_equal(tl.t[tensor_list_find(&tl, "transformer.h.0.attn.c_attn.weight")].shape[1],
			 2304);
	tensor_list_free(&tl);

	assert_int_equal(build("llama3_8b", &tl), 0);
	assert_string_equal(tl.t[tl.ready[1]].name, "model.norm.weight");
	assert_string_equal(tl.t[tl.ready[2]].name, "model.layers.31.mlp.down_proj.weight");
	assert_string_equal(tl.t[tl.ready[3]].name, "model.layers.31.mlp.up_proj.weight");
	assert_string_equal(tl.t[tl.ready[4]].name, "model.layers.31.mlp.gate_proj.weight");
	assert_string_equal(tl.t[tl.ready[5]].name,
			    "model.layers.31.post_attention_layernorm.weight");
	assert_string_equal(tl.t[tl.ready[6]].name, "model.layers.31.self_attn.o_proj.weight");
	assert_string_equal(tl.t[tl.ready[7]].name, "model.layers.31.self_attn.v_proj.weight");
	assert_string_equal(tl.t[tl.ready[10]].name, "model.layers.31.input_layernorm.weight");
	assert_int_equal(tl.t[tensor_list_find(&tl, "model.layers.0.self_attn.k_proj.weight")]
				 .shape[0], 1024);
	assert_int_equal(tl.seq_len, 8192);
	tensor_list_free(&tl);
}

/* Forward ops named `what` in GPT-2 (b1 x 64) at a precision: how many, their bytes. */
static int gpt2_ops(int precision, const char *what, const char *layer_has, double *bytes)
{
	struct workload_opts w;
	struct tensor_list tl;
	int n = 0;

	memset(&w, 0, sizeof(w));
	snprintf(w.model, sizeof(w.model), "gpt2");
	w.batch = 1;
	w.seq_len = 64;
	w.precision = precision;
	assert_int_equal(model_build(&w, &tl), 0);
	*bytes = 0;
	for (uint32_t k = 0; k < tl.nops; k++) {
		const struct op *o = &tl.ops[k];

		if (o->bwd || strcmp(o->what, what) != 0 ||
		    (layer_has && !strstr(tl.layers[o->layer].name, layer_has)))
			continue;
		n++;
		*bytes += o->bytes;
	}
	tensor_list_free(&tl);
	return n;
}

/* HF's gelu_new under autocast: pow upcasts x, the formula runs in fp32 and c_proj casts its
 * input back; logits.float() is one cast under autocast (the loss adds none) and nothing in
 * fp32 (the profiler, RESULTS.md 2026-12-01) */
static void test_gpt2_autocast_ops(void **state)
{
	double b;

	(void)state;
	assert_int_equal(gpt2_ops(PREC_AMP_BF16, "gelu.upcast", NULL, &b), 12);
	assert_true(fabs(b - 12 * 6.0 * 64 * 3072) < 1);
	assert_int_equal(gpt2_ops(PREC_AMP_BF16, "gelu_new", NULL, &b), 12);
	assert_true(fabs(b - 12 * 64.0 * 64 * 3072) < 1);
	assert_int_equal(gpt2_ops(PREC_AMP_BF16, "cast.input", "mlp.c_proj", &b), 12);
	assert_int_equal(gpt2_ops(PREC_AMP_BF16, "logits.float", NULL, &b), 1);
	assert_int_equal(gpt2_ops(PREC_AMP_BF16, "cast.logits", NULL, &b), 0);
	assert_int_equal(gpt2_ops(PREC_FP32, "gelu.upcast", NULL, &b), 0);
	assert_int_equal(gpt2_ops(PREC_FP32, "gelu_new", NULL, &b), 12);
	assert_true(fabs(b - 12 * 72.0 * 64 * 3072) < 1);
	assert_int_equal(gpt2_ops(PREC_FP32, "logits.float", NULL, &b), 0);
	assert_int_equal(gpt2_ops(PREC_FP32, "cast.logits", NULL, &b), 0);
	/* fp16 autocast's GradScaler: one multiply of the loss, none in the others */
	assert_int_equal(gpt2_ops(PREC_AMP_FP16, "loss.scale", NULL, &b), 1);
	assert_int_equal(gpt2_ops(PREC_AMP_FP16, "logits.float", NULL, &b), 1);
	assert_int_equal(gpt2_ops(PREC_AMP_BF16, "loss.scale", NULL, &b), 0);
	assert_int_equal(gpt2_ops(PREC_BF16, "loss.scale", NULL, &b), 0);
	/* a bf16 model's 16-bit logits are cast up for the loss as autocast's are */
	assert_int_equal(gpt2_ops(PREC_BF16, "logits.float", NULL, &b), 1);
	assert_int_equal(gpt2_ops(PREC_BF16, "gelu.upcast", NULL, &b), 0);
}

/* BERT (batch 2 x 64): every linear's gradient GEMMs carry their rows M (grad_gemm_share),
 * forward's none; the loss's log_softmax runs on 16-bit logits under autocast (2 bytes an
 * element each way), on 32-bit ones in fp32 (the profiler, RESULTS.md 2026-12-03); a bf16
 * model's loss runs in 16 bits throughout (nll too), with no cast */
static void test_bert_grad_rows_and_loss(void **state)
{
	const double n = 128.0 * 30522;
	struct workload_opts w;
	struct tensor_list tl;
	int grads = 0;

	(void)state;
	for (int amp = 0; amp < 3; amp++) {
		int half = amp ? 2 : 4; /* amp 2: a bf16 model */
		int nll = amp == 2 ? 2 : 4, casts = 0;

		memset(&w, 0, sizeof(w));
		snprintf(w.model, sizeof(w.model), "bert_base");
		w.batch = 2;
		w.seq_len = 64;
		w.precision = amp == 2 ? PREC_BF16 : amp ? PREC_AMP_BF16 : PREC_FP32;
		assert_int_equal(model_build(&w, &tl), 0);
		for (uint32_t k = 0; k < tl.nops; k++) {
			const struct op *o = &tl.ops[k];

			if (!strcmp(o->what, "gemm.dgrad") || !strcmp(o->what, "gemm.wgrad")) {
				/* the pooler and the next-sentence head: one row a sequence */
				assert_true(o->grad_rows == 128 || o->grad_rows == 2);
				/* the weight gradient says so (wgrad_gemm_share) */
				assert_int_equal(o->pass, strcmp(o->what, "gemm.wgrad") ? CP_DGRAD
											: CP_WGRAD);
				grads++;
			} else if (!strcmp(o->what, "gemm")) {
				assert_int_equal(o->grad_rows, 0);
			} else if (!strcmp(o->what, "log_softmax")) {
				assert_true(fabs(o->bytes - 2.0 * half * n) < 1);
			} else if (!strcmp(o->what, "log_softmax.bwd")) {
				assert_true(fabs(o->bytes - 3.0 * half * n) < 1);
			} else if (!strcmp(o->what, "nll.bwd")) {
				assert_true(fabs(o->bytes - 1.0 * nll * n) < 1);
			} else if (!strncmp(o->what, "cast.logits", 11)) {
				casts++;
			}
		}
		assert_int_equal(casts, amp == 1 ? 2 : 0);
		tensor_list_free(&tl);
	}
	assert_true(grads > 2 * 2 * 12 * 6);
}

/* grad_dtype auto: the parameters' dtype; a given one is kept whatever the precision */
static void test_grad_dtype(void **state)
{
	struct workload_opts w;

	(void)state;
	memset(&w, 0, sizeof(w));
	w.grad_dtype = GRAD_DTYPE_AUTO;
	w.precision = PREC_BF16;
	assert_int_equal(model_grad_dtype(&w), DT_BF16);
	w.precision = PREC_AMP_BF16;
	assert_int_equal(model_grad_dtype(&w), DT_F32);
	w.precision = PREC_AMP_FP16;
	assert_int_equal(model_grad_dtype(&w), DT_F32);
	w.precision = PREC_FP32;
	assert_int_equal(model_grad_dtype(&w), DT_F32);
	w.grad_dtype = DT_F16;
	assert_int_equal(model_grad_dtype(&w), DT_F16);
	w.grad_dtype = DT_F32;
	w.precision = PREC_BF16;
	assert_int_equal(model_grad_dtype(&w), DT_F32);
}

/* SDPA's path: 32-bit inputs with fewer key heads run the math path (llama3_8b fp32 and
 * tf32, the profiler's kernels, RESULTS.md 2026-12-05), everything else the fused op */
static void test_sdpa_math_path(void **state)
{
	static const struct {
		const char *model;
		int precision;
		bool math;
	} cases[] = {
		{ "llama3_8b", PREC_FP32, true },      { "llama3_8b", PREC_TF32, true },
		{ "llama3_8b", PREC_AMP_BF16, false }, { "llama3_8b", PREC_BF16, false },
		{ "llama2_7b", PREC_FP32, false },     { "gpt2", PREC_FP32, false },
	};

	(void)state;
	assert_true(ly_sdpa_math(PREC_FP32, 32, 8));
	assert_false(ly_sdpa_math(PREC_FP32, 32, 32));
	assert_false(ly_sdpa_math(PREC_AMP_FP16, 32, 8));
	assert_false(ly_sdpa_math(PREC_FP32, 32, 0));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct workload_opts w;
		struct tensor_list tl;
		int fused = 0, qk = 0, grads = 0;
		double f = 0;

		memset(&w, 0, sizeof(w));
		snprintf(w.model, sizeof(w.model), "%s", cases[i].model);
		w.batch = 1;
		w.seq_len = 128;
		w.num_layers = 2;
		w.precision = cases[i].precision;
		assert_int_equal(model_build(&w, &tl), 0);
		for (uint32_t k = 0; k < tl.nops; k++) {
			const struct op *o = &tl.ops[k];

			fused += o->cls == OPC_ATTN;
			if (!strcmp(o->what, "sdpa.qk")) {
				qk++;
				f = o->flops;
			}
			grads += !strcmp(o->what, "sdpa.qk.bwd") || !strcmp(o->what, "sdpa.pv.bwd");
		}
		tensor_list_free(&tl);
		/* two layers: the fused op forward and backward each, or the math path's */
		assert_int_equal(fused, cases[i].math ? 0 : 4);
		assert_int_equal(qk, cases[i].math ? 2 : 0);
		assert_int_equal(grads, cases[i].math ? 4 : 0);
		/* q k^T over the whole square of 32 heads of 128, the causal mask no saving */
		if (cases[i].math)
			assert_true(fabs(f - 2.0 * 32 * 128 * 128 * 128) < 1);
	}
}

static void test_llama_shape_override(void **state)
{
	struct workload_opts w;
	struct tensor_list tl;

	(void)state;
	memset(&w, 0, sizeof(w));
	snprintf(w.model, sizeof(w.model), "llama2_7b");
	w.num_layers = 2;
	assert_int_equal(model_build(&w, &tl), 0);
	assert_int_equal(tl.n, 3 + 9 * 2);
	/* 2 * 32000 * 4096 + 4096 + 2 * 202383360 */
	assert_int_equal(tl.numel, 2ull * 32000 * 4096 + 4096 + 2ull * 202383360);
	tensor_list_free(&tl);
	w.num_kv_heads = 5; /* 32 heads not a multiple of 5 */
	assert_int_equal(model_build(&w, &tl), -EINVAL);
}

static void test_custom(void **state)
{
	struct workload_opts w;
	struct tensor_list tl;
	static const char *const bad[] = {
		"", "a", "a:", ":5", "a:x", "a:5:y", "a:0", "a:-3", "a:1.5", "a:5,a:6", "a:5:-1",
	};
	size_t i;

	(void)state;
	memset(&w, 0, sizeof(w));
	snprintf(w.model, sizeof(w.model), "custom");
	snprintf(w.layers, sizeof(w.layers), " embed : 4M : 0.5, mid:1000, head:2k:1.25 ");
	assert_int_equal(model_build(&w, &tl), 0);
	assert_int_equal(tl.n, 3);
	assert_string_equal(tl.t[0].name, "embed");
	assert_int_equal(tl.t[0].numel, 4000000);
	assert_int_equal(tl.t[2].numel, 2000);
	assert_int_equal(tl.numel, 4003000);
	assert_true(tl.layers[0].fwd_flops == 0.5e9);
	assert_true(tl.layers[2].bwd_flops == 2.5e9);
	assert_int_equal(tl.ready[0], 2);
	assert_int_equal(tl.ready[2], 0);
	tensor_list_free(&tl);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(w.layers, sizeof(w.layers), "%s", bad[i]);
		if (model_build(&w, &tl) != -EINVAL)
			fail_msg("custom layers '%s' accepted", bad[i]);
	}
}

static void test_bad_shapes(void **state)
{
	struct workload_opts w;
	struct tensor_list tl;

	(void)state;
	memset(&w, 0, sizeof(w));
	snprintf(w.model, sizeof(w.model), "vit_b_16");
	w.image_size = 250; /* not a multiple of 16 */
	assert_int_equal(model_build(&w, &tl), -EINVAL);
	w.image_size = 384;
	assert_int_equal(model_build(&w, &tl), 0);
	assert_int_equal(tl.seq_len, 24 * 24 + 1);
	tensor_list_free(&tl);
	snprintf(w.model, sizeof(w.model), "bert_base");
	w.seq_len = 513;
	assert_int_equal(model_build(&w, &tl), -EINVAL);
	snprintf(w.model, sizeof(w.model), "gpt2");
	w.seq_len = 1025;
	assert_int_equal(model_build(&w, &tl), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_reads_key),
		cmocka_unit_test(test_resnet50_details),
		cmocka_unit_test(test_transformer_orders),
		cmocka_unit_test(test_gpt2_autocast_ops),
		cmocka_unit_test(test_bert_grad_rows_and_loss),
		cmocka_unit_test(test_sdpa_math_path),
		cmocka_unit_test(test_llama_shape_override),
		cmocka_unit_test(test_custom),
		cmocka_unit_test(test_grad_dtype),
		cmocka_unit_test(test_bad_shapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
