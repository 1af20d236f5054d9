/* DDP's bucket assignment by size over the gradient-ready order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "workload/bucket.h"

/* One open bucket per dtype, as DDP's BucketAccumulator keyed by (dtype, device). */
struct accum {
	uint32_t *idx;
	uint32_t n;
	uint64_t numel;
	uint64_t bytes;
	uint64_t size_limit;
	unsigned int limit_pos;
	int order; /* when this dtype first appeared, -1 = not yet */
};

static void emit(struct bucket_plan *p, struct accum *a, enum dtype dt)
{
	struct bucket *b = &p->b[p->nbuckets++];

	b->first = p->ntensors;
	b->ntensors = a->n;
	b->numel = a->numel;
	b->bytes = a->bytes;
	b->size_limit = a->size_limit;
	b->dtype = dt;
	memcpy(&p->tensors[p->ntensors], a->idx, a->n * sizeof(uint32_t));
	p->ntensors += a->n;
	a->n = 0;
	a->numel = 0;
	a->bytes = 0;
}

int bucket_plan_build(const struct tensor_list *tl, uint64_t cap, uint64_t first_cap,
		      enum dtype grad_dtype, struct bucket_plan *out)
{
	const uint64_t limits[2] = { first_cap ? first_cap : cap, cap };
	const unsigned int nlimits = first_cap ? 2 : 1;
	struct accum acc[DT_COUNT];
	uint32_t *scratch;
	int norder = 0, d, k;
	uint32_t i;

	memset(out, 0, sizeof(*out));
	if (!tl->n || (unsigned int)grad_dtype >= DT_COUNT)
		return -EINVAL;
	for (i = 0; i < tl->n; i++) {
		enum dtype dt = tensor_grad_dtype(&tl->t[i], grad_dtype);

		if ((unsigned int)dt >= DT_COUNT)
			return -EINVAL;
	}
	out->b = calloc(tl->n, sizeof(*out->b));
	out->tensors = calloc(tl->n, sizeof(*out->tensors));
	scratch = calloc((size_t)tl->n * DT_COUNT, sizeof(*scratch));
	if (!out->b || !out->tensors || !scratch) {
		free(scratch);
		bucket_plan_free(out);
		return -ENOMEM;
	}
	out->cap = cap;
	out->first_cap = first_cap;
	out->grad_dtype = grad_dtype;
	memset(acc, 0, sizeof(acc));
	for (d = 0; d < DT_COUNT; d++) {
		acc[d].idx = scratch + (size_t)d * tl->n;
		acc[d].order = -1;
	}

	for (i = 0; i < tl->n; i++) {
		uint32_t ti = tl->ready[i];
		const struct tensor *t = &tl->t[ti];
		enum dtype dt = tensor_grad_dtype(t, grad_dtype);
		struct accum *a = &acc[dt];
		uint64_t bytes = t->numel * dtype_size(dt);

		if (a->order < 0)
			a->order = norder++;
		a->idx[a->n++] = ti;
		a->numel += t->numel;
		a->bytes += bytes;
		out->bytes += bytes;
		a->size_limit = limits[a->limit_pos];
		if (a->bytes >= a->size_limit) {
			emit(out, a, dt);
			if (a->limit_pos + 1 < nlimits)
				a->limit_pos++;
		}
	}
	for (k = 0; k < norder; k++) {
		for (d = 0; d < DT_COUNT; d++) {
			if (acc[d].order == k && acc[d].n)
				emit(out, &acc[d], (enum dtype)d);
		}
	}
	free(scratch);
	return 0;
}

void bucket_plan_free(struct bucket_plan *p)
{
	free(p->b);
	free(p->tensors);
	memset(p, 0, sizeof(*p));
}
