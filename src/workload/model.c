/* The model table: names, families, one-line help and builders. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/log.h"
#include "util/strutil.h"
#include "workload/model.h"

static const struct model_info models[] = {
	{ "resnet18", "resnet", "torchvision ResNet-18, 11.7M params", model_build_resnet,
	  &resnet18_preset },
	{ "resnet34", "resnet", "torchvision ResNet-34, 21.8M params", model_build_resnet,
	  &resnet34_preset },
	{ "resnet50", "resnet", "torchvision ResNet-50, 25.6M params", model_build_resnet,
	  &resnet50_preset },
	{ "resnet101", "resnet", "torchvision ResNet-101, 44.5M params", model_build_resnet,
	  &resnet101_preset },
	{ "resnet152", "resnet", "torchvision ResNet-152, 60.2M params", model_build_resnet,
	  &resnet152_preset },
	{ "vit_b_16", "vit", "torchvision ViT-B/16, 86.6M params", model_build_vit,
	  &vit_b_16_preset },
	{ "vit_l_16", "vit", "torchvision ViT-L/16, 304M params", model_build_vit,
	  &vit_l_16_preset },
	{ "vit_h_14", "vit", "torchvision ViT-H/14, 632M params", model_build_vit,
	  &vit_h_14_preset },
	{ "bert_base", "bert", "HF BertForPreTraining base, 110M params", model_build_bert,
	  &bert_base_preset },
	{ "bert_large", "bert", "HF BertForPreTraining large, 336M params", model_build_bert,
	  &bert_large_preset },
	{ "gpt2", "gpt2", "HF GPT2LMHeadModel small, 124M params", model_build_gpt2,
	  &gpt2_preset },
	{ "gpt2_medium", "gpt2", "HF GPT2LMHeadModel medium, 355M params", model_build_gpt2,
	  &gpt2_medium_preset },
	{ "gpt2_large", "gpt2", "HF GPT2LMHeadModel large, 774M params", model_build_gpt2,
	  &gpt2_large_preset },
	{ "gpt2_xl", "gpt2", "HF GPT2LMHeadModel xl, 1.56B params", model_build_gpt2,
	  &gpt2_xl_preset },
	{ "llama2_7b", "llama", "Llama-2 7B decoder (HF LlamaForCausalLM), 6.74B params",
	  model_build_llama, &llama2_7b_preset },
	{ "llama3_8b", "llama", "Llama-3 8B decoder (HF LlamaForCausalLM), 8.03B params",
	  model_build_llama, &llama3_8b_preset },
	{ "trace", "trace", "replay [workload] op_trace = FILE (tests/workload/record_op_trace.py)",
	  model_build_trace, NULL },
	{ "custom", "custom", "layers from [workload] layers = \"name:params[:gflops], ...\"",
	  model_build_custom, NULL },
};

/*
 * Which of the [workload] keys that only some models read each family reads. A key no
 * row lists (bucket_cap, precision, overlap, ...) applies to every model; model = none
 * (the [collective] benchmark) reads no [workload] key. The trace replays recorded
 * times: no shape and no rate of ours changes them. custom keeps batch, seq_len and
 * image_size as its step's shape (samples/s, the plan's header).
 */
static const struct {
	const char *family, *reads;
} family_reads[] = {
	{ "resnet", " batch image_size gpu_tflops launch_gap " },
	{ "vit", " batch image_size hidden_size num_layers num_heads ffn_size gpu_tflops"
		 " launch_gap " },
	{ "bert", " batch seq_len hidden_size num_layers num_heads ffn_size vocab_size"
		  " gpu_tflops launch_gap " },
	{ "gpt2", " batch seq_len hidden_size num_layers num_heads ffn_size vocab_size"
		  " gpu_tflops launch_gap " },
	{ "llama", " batch seq_len hidden_size num_layers num_heads num_kv_heads ffn_size"
		   " vocab_size gpu_tflops launch_gap " },
	{ "trace", " op_trace batch " },
	{ "custom", " layers batch seq_len image_size gpu_tflops launch_gap " },
};

bool model_reads_key(const char *model, const char *key)
{
	const struct model_info *m = model_find(model);
	bool scoped = false;
	size_t i;

	if (!m)
		return false; /* none: the collective benchmark */
	for (i = 0; i < ARRAY_SIZE(family_reads); i++) {
		bool listed = str_word_in(family_reads[i].reads, key);

		if (!strcmp(family_reads[i].family, m->family) && listed)
			return true;
		scoped |= listed;
	}
	return !scoped; /* a key no family lists is every model's */
}

void model_key_families(const char *key, char *buf, size_t len)
{
	size_t i, at = 0;

	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(family_reads) && at < len; i++)
		if (str_word_in(family_reads[i].reads, key))
			at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "",
					       family_reads[i].family);
}

size_t model_count(void)
{
	return ARRAY_SIZE(models);
}

const struct model_info *model_at(size_t i)
{
	return i < ARRAY_SIZE(models) ? &models[i] : NULL;
}

const struct model_info *model_find(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(models); i++) {
		if (strcmp(models[i].name, name) == 0)
			return &models[i];
	}
	return NULL;
}

int model_need_heads(struct tensor_list *tl, const struct workload_opts *w, const char *model,
		     int64_t hidden, int heads)
{
	if (hidden % heads == 0)
		return 0;
	return tl_reject(tl, w->num_heads ? "num_heads" : "hidden_size",
			 "model %s: hidden_size %lld is not a multiple of num_heads %d", model,
			 (long long)hidden, heads);
}

int model_need_positions(struct tensor_list *tl, const char *model, int seq, int positions)
{
	if (seq <= positions)
		return 0;
	return tl_reject(tl, "seq_len", "model %s has %d positions: seq_len %d is past them",
			 model, positions, seq);
}

int model_build_err(const struct workload_opts *w, struct tensor_list *out, const char **key,
		    char *err, size_t errlen)
{
	const struct model_info *m = model_find(w->model);
	int ret;

	tensor_list_init(out);
	if (key)
		*key = NULL;
	if (!m) {
		if (key)
			*key = "model";
		snprintf(err, errlen, "model '%s': unknown", w->model);
		return -ENOENT;
	}
	out->model = m->name;
	out->family = m->family;
	out->precision = w->precision;
	ret = m->build(m, w, out);
	if (!ret)
		ret = tl_finish(out);
	if (ret) {
		if (out->why[0])
			snprintf(err, errlen, "%s", out->why);
		else
			snprintf(err, errlen, "model '%s': %s", w->model, strerror(-ret));
		if (key)
			*key = out->why_key; /* a static string: outlives the list */
		tensor_list_free(out);
	}
	return ret;
}

enum dtype model_grad_dtype(const struct workload_opts *w)
{
	if (w->grad_dtype != GRAD_DTYPE_AUTO)
		return (enum dtype)w->grad_dtype;
	return w->precision == PREC_BF16 ? DT_BF16 : DT_F32;
}

int model_build(const struct workload_opts *w, struct tensor_list *out)
{
	char err[sizeof(out->why)];
	int ret = model_build_err(w, out, NULL, err, sizeof(err));

	if (ret)
		log_err(LOG_WORKLOAD, "%s", err);
	return ret;
}

int model_check(const struct workload_opts *w, const char **key, char *err, size_t errlen)
{
	struct tensor_list tl;
	int ret = model_build_err(w, &tl, key, err, errlen);

	if (!ret)
		tensor_list_free(&tl);
	return ret;
}
