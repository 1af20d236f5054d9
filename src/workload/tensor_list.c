/* Building a tensor list: registration, layer execution order, gradient-ready order. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "workload/tensor_list.h"

void tensor_list_init(struct tensor_list *tl)
{
	memset(tl, 0, sizeof(*tl));
}

void tensor_list_free(struct tensor_list *tl)
{
	free(tl->t);
	free(tl->layers);
	free(tl->ready);
	free(tl->exec);
	free(tl->ops);
	tensor_list_init(tl);
}

static bool tl_fail(struct tensor_list *tl, int err)
{
	if (!tl->err)
		tl->err = err;
	return false;
}

static bool grow(struct tensor_list *tl, void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t ncap;
	void *p;

	if (need <= *cap)
		return true;
	ncap = *cap ? *cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, (size_t)ncap * elem);
	if (!p)
		return tl_fail(tl, -ENOMEM);
	*arr = p;
	*cap = ncap;
	return true;
}

int tl_reject(struct tensor_list *tl, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (!tl->why[0]) {
		tl->why_key = key;
		va_start(ap, fmt);
		vsnprintf(tl->why, sizeof(tl->why), fmt, ap);
		va_end(ap);
	}
	tl_fail(tl, -EINVAL);
	return -EINVAL;
}

GS_PRINTF(3, 0)
static bool vname(struct tensor_list *tl, char *dst, const char *fmt, va_list ap)
{
	int n = vsnprintf(dst, TENSOR_NAME_MAX, fmt, ap);

	if (n < 0 || n >= TENSOR_NAME_MAX)
		return tl_fail(tl, -ENAMETOOLONG);
	return true;
}

int tl_layer(struct tensor_list *tl, double fwd_flops, double bwd_flops, const char *fmt, ...)
{
	uint32_t cap_exec = tl->cap_l;
	struct layer *l;
	va_list ap;
	bool ok;

	if (tl->err)
		return -1;
	if (!grow(tl, (void **)&tl->layers, &tl->cap_l, tl->nlayers + 1, sizeof(*tl->layers)))
		return -1;
	if (cap_exec != tl->cap_l) {
		uint32_t *e = realloc(tl->exec, (size_t)tl->cap_l * sizeof(*e));

		if (!e)
			return tl_fail(tl, -ENOMEM), -1;
		tl->exec = e;
	}
	l = &tl->layers[tl->nlayers];
	memset(l, 0, sizeof(*l));
	va_start(ap, fmt);
	ok = vname(tl, l->name, fmt, ap);
	va_end(ap);
	if (!ok)
		return -1;
	l->fwd_flops = fwd_flops;
	l->bwd_flops = bwd_flops;
	tl->exec[tl->nlayers] = tl->nlayers;
	return (int)tl->nlayers++;
}

int tl_param(struct tensor_list *tl, int layer, int ndim, const int64_t *shape, const char *fmt,
	     ...)
{
	struct tensor *t;
	struct layer *l;
	va_list ap;
	bool ok;
	int i;

	if (tl->err)
		return -1;
	if (layer < 0 || (uint32_t)layer >= tl->nlayers || ndim < 1 || ndim > TENSOR_NDIM_MAX)
		return tl_fail(tl, -EINVAL), -1;
	l = &tl->layers[layer];
	if (l->ntensors == LAYER_TENSORS_MAX)
		return tl_fail(tl, -EINVAL), -1;
	if (!grow(tl, (void **)&tl->t, &tl->cap_t, tl->n + 1, sizeof(*tl->t)))
		return -1;
	t = &tl->t[tl->n];
	memset(t, 0, sizeof(*t));
	va_start(ap, fmt);
	ok = vname(tl, t->name, fmt, ap);
	va_end(ap);
	if (!ok)
		return -1;
	t->ndim = ndim;
	t->numel = 1;
	for (i = 0; i < ndim; i++) {
		if (shape[i] <= 0)
			return tl_fail(tl, -EINVAL), -1;
		t->shape[i] = shape[i];
		t->numel *= (uint64_t)shape[i];
	}
	t->layer = (uint32_t)layer;
	t->dtype = TENSOR_DTYPE_GRAD;
	l->tensors[l->ntensors++] = tl->n;
	return (int)tl->n++;
}

int tl_op(struct tensor_list *tl, int layer, const struct op *o)
{
	if (tl->err || layer < 0)
		return -1;
	if ((uint32_t)layer >= tl->nlayers)
		return tl_fail(tl, -EINVAL), -1;
	if (!grow(tl, (void **)&tl->ops, &tl->cap_o, tl->nops + 1, sizeof(*tl->ops)))
		return -1;
	tl->ops[tl->nops] = *o;
	tl->ops[tl->nops].layer = (uint32_t)layer;
	tl->nops++;
	return 0;
}

/* Group the ops by layer (now in execution order), forward before backward, keeping
 * their order of addition within each group. */
static int group_ops(struct tensor_list *tl)
{
	struct op *sorted;
	uint32_t i, k = 0, l;
	int bwd;

	if (!tl->nops)
		return 0;
	sorted = malloc((size_t)tl->nops * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	/* nops is small (a few thousand): a pass per layer and phase is simple and enough */
	for (l = 0; l < tl->nlayers; l++) {
		tl->layers[l].op_first = k;
		for (bwd = 0; bwd < 2; bwd++) {
			for (i = 0; i < tl->nops; i++) {
				if (tl->ops[i].layer == l && tl->ops[i].bwd == bwd)
					sorted[k++] = tl->ops[i];
			}
		}
		tl->layers[l].nops = k - tl->layers[l].op_first;
	}
	free(tl->ops);
	tl->ops = sorted;
	tl->cap_o = tl->nops;
	return 0;
}

void tl_exec_after(struct tensor_list *tl, int layer, int after)
{
	uint32_t i, from = UINT32_MAX, to = UINT32_MAX;

	if (tl->err)
		return;
	for (i = 0; i < tl->nlayers; i++) {
		if (tl->exec[i] == (uint32_t)layer)
			from = i;
	}
	if (from == UINT32_MAX || layer == after) {
		tl_fail(tl, -EINVAL);
		return;
	}
	memmove(&tl->exec[from], &tl->exec[from + 1], (tl->nlayers - from - 1) * sizeof(uint32_t));
	for (i = 0; i + 1 < tl->nlayers; i++) {
		if (tl->exec[i] == (uint32_t)after)
			to = i + 1;
	}
	if (to == UINT32_MAX) {
		tl_fail(tl, -EINVAL);
		return;
	}
	memmove(&tl->exec[to + 1], &tl->exec[to], (tl->nlayers - 1 - to) * sizeof(uint32_t));
	tl->exec[to] = (uint32_t)layer;
}

int tl_finish(struct tensor_list *tl)
{
	struct layer *sorted = NULL;
	uint32_t *newidx = NULL;
	uint32_t i, j, k;

	if (tl->err)
		return tl->err;
	if (!tl->n || !tl->nlayers)
		return -EINVAL;
	sorted = malloc((size_t)tl->nlayers * sizeof(*sorted));
	newidx = malloc((size_t)tl->nlayers * sizeof(*newidx));
	tl->ready = malloc((size_t)tl->n * sizeof(*tl->ready));
	if (!sorted || !newidx || !tl->ready)
		goto out_nomem;
	for (i = 0; i < tl->nlayers; i++) {
		sorted[i] = tl->layers[tl->exec[i]];
		newidx[tl->exec[i]] = i;
	}
	free(tl->layers);
	tl->layers = sorted;
	sorted = NULL;
	tl->cap_l = tl->nlayers;
	for (i = 0; i < tl->n; i++)
		tl->t[i].layer = newidx[tl->t[i].layer];
	for (i = 0; i < tl->nops; i++)
		tl->ops[i].layer = newidx[tl->ops[i].layer];
	for (i = 0; i < tl->nlayers; i++)
		tl->exec[i] = i;
	free(newidx);
	newidx = NULL;
	if (group_ops(tl))
		goto out_nomem;

	/* Backward runs the layers in reverse execution order; a layer's gradients become
	 * ready when its backward completes. */
	tl->numel = 0;
	tl->fwd_flops = 0;
	tl->bwd_flops = 0;
	k = 0;
	for (i = tl->nlayers; i-- > 0;) {
		const struct layer *l = &tl->layers[i];

		tl->fwd_flops += l->fwd_flops;
		tl->bwd_flops += l->bwd_flops;
		for (j = 0; j < l->ntensors; j++) {
			uint32_t r = l->ready_reversed ? l->ntensors - 1 - j : j;

			tl->ready[k++] = l->tensors[r];
		}
	}
	if (k != tl->n)
		return -EINVAL; /* cannot happen: every tensor has exactly one layer */
	for (i = 0; i < tl->n; i++)
		tl->numel += tl->t[i].numel;
	return 0;

out_nomem:
	free(sorted);
	free(newidx);
	free(tl->ready);
	tl->ready = NULL;
	return -ENOMEM;
}

int tensor_list_find(const struct tensor_list *tl, const char *name)
{
	uint32_t i;

	for (i = 0; i < tl->n; i++) {
		if (strcmp(tl->t[i].name, name) == 0)
			return (int)i;
	}
	return -1;
}

bool tensor_list_has_duplicates(const struct tensor_list *tl)
{
	uint32_t i, j;

	for (i = 0; i < tl->n; i++) {
		for (j = i + 1; j < tl->n; j++) {
			if (strcmp(tl->t[i].name, tl->t[j].name) == 0)
				return true;
		}
	}
	return false;
}
