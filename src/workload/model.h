/*
 * The model zoo: one table of models, each a builder that generates the parameter
 * table from the architecture's hyper-parameters (PyTorch names, shapes, order).
 */
#ifndef GS_WORKLOAD_MODEL_H
#define GS_WORKLOAD_MODEL_H

#include <stddef.h>

#include "util/dtype.h"
#include "workload/tensor_list.h"
#include "workload/workload.h"

struct model_info;

/*
 * Builds the model into an initialised, empty list. Zero batch / seq_len / image_size
 * (and zero transformer-shape fields) mean the model's own default; the values used
 * are stored in the list. Returns 0 or -errno (-EINVAL: bad shape or layers string,
 * logged once).
 */
typedef int (*model_builder)(const struct model_info *m, const struct workload_opts *w,
			     struct tensor_list *out);

struct model_info {
	const char *name;
	const char *family;
	const char *help;
	model_builder build;
	const void *preset; /* the family's shape for this model */
};

size_t model_count(void);
const struct model_info *model_at(size_t i);
const struct model_info *model_find(const char *name);

/*
 * The gradients' dtype DDP reduces for w: grad_dtype where given, else (GRAD_DTYPE_AUTO) the
 * parameters' own: bf16 under precision = bf16 (a model cast to bf16), f32 otherwise
 * (autocast keeps fp32 parameters, so their gradients are fp32).
 */
enum dtype model_grad_dtype(const struct workload_opts *w);

/*
 * Whether model `model` reads [workload] key `key`: the shape keys its family builds from,
 * op_trace (trace), layers (custom), the compute rates (not a trace's recorded times), and
 * every other [workload] key; model "none" (the collective benchmark) reads none of them.
 */
bool model_reads_key(const char *model, const char *key);
/* The families that read key, "resnet, vit" ("" when every model does). */
void model_key_families(const char *key, char *buf, size_t len);

/* Look w->model up and build it; -ENOENT for an unknown name. A refusal is logged once. */
int model_build(const struct workload_opts *w, struct tensor_list *out);
/* The same, nothing logged: on failure out is freed, err says why and *key (key not NULL)
 * names the [workload] key holding the refused value (NULL: none). */
int model_build_err(const struct workload_opts *w, struct tensor_list *out, const char **key,
		    char *err, size_t errlen);
/*
 * What `check` asks: would model_build() accept w? Builds and frees the model; 0, or
 * -errno with the reason (the same words run logs) in err and, where key is not NULL, the
 * [workload] key holding the refused value in *key (NULL: none). Pure apart from memory.
 */
int model_check(const struct workload_opts *w, const char **key, char *err, size_t errlen);

/* Builders, one file each (model_<family>.c); presets live beside them. */
int model_build_resnet(const struct model_info *m, const struct workload_opts *w,
		       struct tensor_list *out);
int model_build_vit(const struct model_info *m, const struct workload_opts *w,
		    struct tensor_list *out);
int model_build_bert(const struct model_info *m, const struct workload_opts *w,
		     struct tensor_list *out);
int model_build_gpt2(const struct model_info *m, const struct workload_opts *w,
		     struct tensor_list *out);
int model_build_llama(const struct model_info *m, const struct workload_opts *w,
		      struct tensor_list *out);
int model_build_trace(const struct model_info *m, const struct workload_opts *w,
		      struct tensor_list *out);
int model_build_custom(const struct model_info *m, const struct workload_opts *w,
		       struct tensor_list *out);

/* Presets referenced by the table (defined in the family files). */
extern const struct resnet_preset resnet18_preset, resnet34_preset, resnet50_preset,
	resnet101_preset, resnet152_preset;
extern const struct vit_preset vit_b_16_preset, vit_l_16_preset, vit_h_14_preset;
extern const struct bert_preset bert_base_preset, bert_large_preset;
extern const struct gpt2_preset gpt2_preset, gpt2_medium_preset, gpt2_large_preset,
	gpt2_xl_preset;
extern const struct llama_preset llama2_7b_preset, llama3_8b_preset;

/*
 * The shape rules the transformer builders share, each refusal naming the key that holds
 * the refused value (tl_reject): attention heads split the hidden size evenly (blamed on
 * num_heads where the file sets it, else on hidden_size), and a learned position table
 * ends at `positions` (seq_len). 0, or -EINVAL with tl->why set.
 */
int model_need_heads(struct tensor_list *tl, const struct workload_opts *w, const char *model,
		     int64_t hidden, int heads);
int model_need_positions(struct tensor_list *tl, const char *model, int seq, int positions);

/* Shared by the transformer families: w's override if non-zero, else the preset's. */
static inline int model_pick(int override, int preset)
{
	return override > 0 ? override : preset;
}

#endif
