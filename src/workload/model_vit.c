/*
 * torchvision VisionTransformer (ViT-B/16, ViT-L/16, ViT-H/14), 1000 classes.
 *
 * Registration: class_token (the module's own parameter) comes first, then conv_proj,
 * encoder.pos_embedding, the encoder layers, encoder.ln, heads.head.
 * Execution: conv_proj, cat(class_token), + pos_embedding, layers, ln, head.
 * Gradient-ready order (reverse execution): head (bias, weight), encoder.ln, each
 * layer from mlp.3 down to ln_1, then pos_embedding (the add's second operand, pushed
 * at top priority), class_token (its ExpandBackward was created after the patch
 * permute, so it runs before the conv branch) and conv_proj (weight, bias) last.
 * Inside a layer, in_proj is one linear whose bias is added last, so in_proj_bias is
 * ready before in_proj_weight, as for out_proj and the MLP linears.
 */
#include <errno.h>
#include <stdio.h>

#include "workload/layers.h"
#include "workload/model.h"

struct vit_preset {
	int patch;
	int layers;
	int heads;
	int hidden;
	int mlp;
};

const struct vit_preset vit_b_16_preset = { 16, 12, 12, 768, 3072 };
const struct vit_preset vit_l_16_preset = { 16, 24, 16, 1024, 4096 };
const struct vit_preset vit_h_14_preset = { 14, 32, 16, 1280, 5120 };

#define VIT_CLASSES 1000
/* F.multi_head_attention_forward's layout copies per layer, forward and backward, as the
 * profiler shows them (torch 2.11): q/k/v split and head transposes, their gradients */
#define MHA_COPIES_FWD 7
#define MHA_COPIES_BWD 13
#define VIT_BATCH 32
#define VIT_IMAGE 224

static void encoder_layer(struct tensor_list *tl, int i, int batch, int seq, int64_t d,
			  int heads, int64_t mlp)
{
	double pos = (double)batch * seq;
	int e = ly_act_bytes(tl);

	ly_scope(tl, "encoder.layers.encoder_layer_%d", i);
	ly_norm(tl, "ln_1", d, true, pos * d);
	ly_norm_input_copy(tl, pos * d);
	/* MultiheadAttention's packed projection: F.linear(x, in_proj_weight, in_proj_bias) */
	ly_linear_as(tl, "self_attention.in_proj", "self_attention.in_proj_weight",
		     "self_attention.in_proj_bias", d, 3 * d, pos);
	ly_attention(tl, "self_attention.core", batch, seq, d, heads, heads, false, MHA_COPIES_FWD,
		     MHA_COPIES_BWD);
	ly_linear(tl, "self_attention.out_proj", d, d, true, pos);
	ly_add_residual(tl, pos * d);
	ly_norm(tl, "ln_2", d, true, pos * d);
	ly_norm_input_copy(tl, pos * d);
	ly_linear(tl, "mlp.0", d, mlp, true, pos);
	ly_act(tl, "gelu", pos * mlp, e, 1);
	ly_linear(tl, "mlp.3", mlp, d, true, pos);
	ly_add_residual(tl, pos * d);
}

int model_build_vit(const struct model_info *m, const struct workload_opts *w,
		    struct tensor_list *tl)
{
	const struct vit_preset *p = m->preset;
	int batch = model_pick(w->batch, VIT_BATCH);
	int image = model_pick(w->image_size, VIT_IMAGE);
	int layers = model_pick(w->num_layers, p->layers);
	int heads = model_pick(w->num_heads, p->heads);
	int64_t d = model_pick(w->hidden_size, p->hidden);
	int64_t mlp = model_pick(w->ffn_size, p->mlp);
	int64_t ct[3] = { 1, 1, d }, pe[3] = { 1, 0, d };
	int hw = image, seq, l_cls, l_conv, l_pos, i;

	tl->batch = batch;
	tl->image_size = image;
	if (image % p->patch) {
		return tl_reject(tl, "image_size", "model %s: image_size %d is not a multiple of "
				 "its patch size %d", m->name, image, p->patch);
	}
	if (model_need_heads(tl, w, m->name, d, heads))
		return -EINVAL;
	seq = (image / p->patch) * (image / p->patch) + 1;
	tl->seq_len = seq;
	pe[1] = seq;

	l_cls = ly_plain(tl, "class_token");
	tl_param(tl, l_cls, 3, ct, "class_token");
	l_conv = ly_conv2d(tl, "conv_proj", 3, d, p->patch, p->patch, 0, true, batch, &hw, true);
	tl_exec_after(tl, l_cls, l_conv);
	/* torch.cat of the class token and the patches */
	ly_act(tl, "cat", (double)batch * seq * d, ly_act_bytes(tl), 1);
	l_pos = ly_plain(tl, "encoder.pos_embedding");
	tl_param(tl, l_pos, 3, pe, "encoder.pos_embedding");
	ly_add(tl, (double)batch * seq * d, ly_res_bytes(tl));
	for (i = 0; i < layers; i++)
		encoder_layer(tl, i, batch, seq, d, heads, mlp);
	ly_scope(tl, "%s", "");
	ly_norm(tl, "encoder.ln", d, true, (double)batch * seq * d);
	ly_linear(tl, "heads.head", d, VIT_CLASSES, true, batch);
	ly_loss(tl, batch, VIT_CLASSES);
	return tl->err;
}
