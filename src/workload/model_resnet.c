/*
 * torchvision ResNet-18/34/50/101/152 (v1.5: stride on the 3x3 conv), 1000 classes.
 *
 * Gradient-ready order: backward runs the layers in reverse execution order. In a
 * block with a downsample branch, torchvision computes downsample(x) after bn3, so the
 * branch runs first in backward (its nodes have the higher sequence numbers):
 * downsample.1 (weight, bias), downsample.0, then bn3, conv3, ... conv1. That differs
 * from reversed registration, which would give downsample.1.bias first. BatchNorm
 * yields weight before bias; fc (addmm on a 2-D input) yields bias before weight.
 */
#include <errno.h>
#include <stdio.h>

#include "workload/layers.h"
#include "workload/model.h"

struct resnet_preset {
	bool bottleneck;
	int blocks[4];
};

const struct resnet_preset resnet18_preset = { false, { 2, 2, 2, 2 } };
const struct resnet_preset resnet34_preset = { false, { 3, 4, 6, 3 } };
const struct resnet_preset resnet50_preset = { true, { 3, 4, 6, 3 } };
const struct resnet_preset resnet101_preset = { true, { 3, 4, 23, 3 } };
const struct resnet_preset resnet152_preset = { true, { 3, 8, 36, 3 } };

#define RESNET_CLASSES 1000
#define RESNET_BATCH 32
#define RESNET_IMAGE 224

/* conv + batchnorm pair "conv<i>", "bn<i>" of the current scope; relu after the bn. */
static void conv_bn(struct tensor_list *tl, const char *conv, const char *bn, int64_t cin,
		    int64_t cout, int k, int stride, int batch, int *hw, bool relu)
{
	double elems;

	ly_conv2d(tl, conv, cin, cout, k, stride, k / 2, false, batch, hw, false);
	elems = (double)batch * cout * *hw * *hw;
	ly_batchnorm(tl, bn, cout, elems);
	if (relu)
		ly_act(tl, "relu", elems, ly_act_bytes(tl), 1);
}

/* One block in the current scope ("layer<s>.<i>"). */
static void block(struct tensor_list *tl, const struct resnet_preset *p, int64_t inplanes,
		  int64_t planes, int stride, int batch, int *hw)
{
	int64_t outplanes = p->bottleneck ? planes * 4 : planes;
	int in_hw = *hw;
	double out_el;
	if (p->bottleneck) {
		conv_bn(tl, "conv1", "bn1", inplanes, planes, 1, 1, batch, hw, true);
		conv_bn(tl, "conv2", "bn2", planes, planes, 3, stride, batch, hw, true);
		conv_bn(tl, "conv3", "bn3", planes, outplanes, 1, 1, batch, hw, false);
	} else {
		conv_bn(tl, "conv1", "bn1", inplanes, planes, 3, stride, batch, hw, true);
		conv_bn(tl, "conv2", "bn2", planes, planes, 3, 1, batch, hw, false);
	}
	if (stride != 1 || inplanes != outplanes)
		conv_bn(tl, "downsample.0", "downsample.1", inplanes, outplanes, 1, stride, batch,
			&in_hw, false);
	/* out += identity; relu */
	out_el = (double)batch * outplanes * *hw * *hw;
	ly_add(tl, out_el, ly_act_bytes(tl));
	ly_act(tl, "relu", out_el, ly_act_bytes(tl), 1);
}

int model_build_resnet(const struct model_info *m, const struct workload_opts *w,
		       struct tensor_list *tl)
{
	const struct resnet_preset *p = m->preset;
	int batch = model_pick(w->batch, RESNET_BATCH);
	int hw = model_pick(w->image_size, RESNET_IMAGE);
	int64_t inplanes = 64, exp = p->bottleneck ? 4 : 1;
	int s, i;

	tl->batch = batch;
	tl->image_size = hw;
	if (hw < 32) {
		return tl_reject(tl, "image_size", "model %s: image_size %d is below 32", m->name,
				 hw);
	}
	ly_conv2d(tl, "conv1", 3, 64, 7, 2, 3, false, batch, &hw, true);
	ly_batchnorm(tl, "bn1", 64, (double)batch * 64 * hw * hw);
	ly_act(tl, "relu", (double)batch * 64 * hw * hw, ly_act_bytes(tl), 1);
	i = hw;
	hw = ly_conv_out(hw, 3, 2, 1);
	ly_pool(tl, "maxpool", (double)batch * 64 * i * i, (double)batch * 64 * hw * hw,
		ly_act_bytes(tl), true);
	for (s = 0; s < 4; s++) {
		int64_t planes = 64LL << s;

		for (i = 0; i < p->blocks[s]; i++) {
			ly_scope(tl, "layer%d.%d", s + 1, i);
			block(tl, p, inplanes, planes, (s > 0 && i == 0) ? 2 : 1, batch, &hw);
			inplanes = planes * exp;
		}
	}
	ly_scope(tl, "%s", "");
	ly_pool(tl, "avgpool", (double)batch * 512 * exp * hw * hw, (double)batch * 512 * exp,
		ly_act_bytes(tl), false);
	ly_linear(tl, "fc", 512 * exp, RESNET_CLASSES, true, batch);
	ly_loss(tl, batch, RESNET_CLASSES);
	return tl->err;
}
