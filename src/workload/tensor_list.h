/*
 * A model as DDP sees it: parameter tensors in registration order (PyTorch's
 * named_parameters()), the layers that own them in forward execution order, and the
 * order in which autograd makes their gradients ready during backward.
 */
#ifndef GS_WORKLOAD_TENSOR_LIST_H
#define GS_WORKLOAD_TENSOR_LIST_H

#include <stdint.h>
#include <stdbool.h>

#include "util/common.h"
#include "workload/costmodel.h"

#define TENSOR_NAME_MAX 96
#define TENSOR_NDIM_MAX 4
#define LAYER_TENSORS_MAX 4
/* tensor.dtype value meaning "the gradient dtype the bucket plan is built with". */
#define TENSOR_DTYPE_GRAD (-1)

struct tensor {
	char name[TENSOR_NAME_MAX]; /* PyTorch's parameter name */
	int ndim;
	int64_t shape[TENSOR_NDIM_MAX];
	uint64_t numel;
	uint32_t layer; /* owning layer: the one whose backward makes this gradient ready */
	int dtype;      /* enum dtype of the gradient, or TENSOR_DTYPE_GRAD */
};

/*
 * A unit of compute. Layers without tensors carry compute only (attention scores,
 * a head whose weight is tied to an embedding). FLOPs are per rank per iteration.
 */
struct layer {
	char name[TENSOR_NAME_MAX];
	double fwd_flops;
	double bwd_flops;
	/* The gradients of a linear layer (addmm) become ready bias first: the bias is an
	 * input of AddmmBackward itself, the weight arrives through a TBackward node. */
	bool ready_reversed;
	uint32_t ntensors;
	/* its tensors in registration order (= ready order unless ready_reversed) */
	uint32_t tensors[LAYER_TENSORS_MAX];
	/* its operators (after tl_finish): ops[op_first .. op_first + nops), forward ones in
	 * execution order, then backward ones in execution order */
	uint32_t op_first;
	uint32_t nops;
};

/*
 * Contract: after a successful model build, t[0..n) is in registration order,
 * layers[0..nlayers) in forward execution order, and ready[0..n) is a permutation of
 * 0..n-1 giving the gradient-ready order (backward = layers in reverse execution order).
 * The list owns its arrays; tensor_list_free() releases them.
 */
struct tensor_list {
	const char *model;  /* model table name (static string) */
	const char *family; /* model table family (static string) */
	int batch;          /* resolved values the FLOPs were computed with */
	int seq_len;
	int image_size;
	int precision;      /* enum precision the operators were emitted for */

	struct tensor *t;
	uint32_t n;
	struct layer *layers;
	uint32_t nlayers;
	uint32_t *ready;

	uint64_t numel; /* sum of t[].numel */
	double fwd_flops;
	double bwd_flops;

	struct op *ops; /* every operator, grouped by layer in execution order (tl_finish) */
	uint32_t nops;

	/* builder state */
	uint32_t cap_t;
	uint32_t cap_l;
	uint32_t cap_o;
	uint32_t *exec; /* layer indices in execution order while building */
	int err;        /* first error of a builder call; later calls do nothing */
	char scope[TENSOR_NAME_MAX]; /* prefix of the names layer helpers register */
	bool in_f32;    /* autocast: the next linear reads an fp32 activation (a norm's) */
	char why[256];  /* what tl_reject() refused, in words ("" if nothing was) */
	const char *why_key; /* the [workload] key it blames (NULL: none), e.g. "seq_len" */
};

void tensor_list_init(struct tensor_list *tl);
void tensor_list_free(struct tensor_list *tl);

/*
 * Builder calls. Errors are sticky: the first failure (-ENOMEM, -EINVAL, -ENAMETOOLONG)
 * is kept in tl->err, later calls do nothing and tl_finish() returns it.
 * tl_layer returns the new layer's index (>= 0) or -1 after an error.
 */
int tl_layer(struct tensor_list *tl, double fwd_flops, double bwd_flops, const char *fmt, ...)
	GS_PRINTF(4, 5);
/* Register a parameter of `layer` (shape of ndim dims); returns its index or -1. */
int tl_param(struct tensor_list *tl, int layer, int ndim, const int64_t *shape, const char *fmt,
	     ...) GS_PRINTF(5, 6);
/* Add an operator to `layer` (creation index; phase and costs in *o). 0 or -1. */
int tl_op(struct tensor_list *tl, int layer, const struct op *o);
/* Execution order differs from creation order: run `layer` right after `after`. */
void tl_exec_after(struct tensor_list *tl, int layer, int after);
/*
 * A builder refusing its input (a bad shape, a bad layers string): records the reason in
 * tl->why and the [workload] key that holds the refused value in tl->why_key (key NULL:
 * none; the first refusal wins) and returns -EINVAL. Nothing is logged here, so the same
 * builder serves `run` (which logs it), `check` (which names the file, the line that set
 * the key and the case) and `plan` (which names the flag).
 */
int tl_reject(struct tensor_list *tl, const char *key, const char *fmt, ...) GS_PRINTF(3, 4);
/* Reorder layers into execution order, derive the ready order and totals. 0 or -errno. */
int tl_finish(struct tensor_list *tl);

/* Index of the tensor named `name`, or -1. */
int tensor_list_find(const struct tensor_list *tl, const char *name);
/* True if two tensors share a name. */
bool tensor_list_has_duplicates(const struct tensor_list *tl);

#endif
