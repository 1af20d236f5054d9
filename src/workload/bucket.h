/*
 * Gradient buckets exactly as PyTorch DDP assigns them when the Reducer rebuilds its
 * buckets after the first iteration (compute_bucket_assignment_by_size called with the
 * gradient-ready order and the limits {first_bucket_bytes_cap, bucket_bytes_cap}).
 */
#ifndef GS_WORKLOAD_BUCKET_H
#define GS_WORKLOAD_BUCKET_H

#include <stdint.h>

#include "util/dtype.h"
#include "workload/tensor_list.h"

struct bucket {
	uint32_t first;      /* offset of its tensors in bucket_plan.tensors */
	uint32_t ntensors;
	uint64_t numel;
	uint64_t bytes;
	uint64_t size_limit; /* the limit in force when it closed (DDP's per-bucket limit) */
	enum dtype dtype;
};

/*
 * Buckets in the order DDP launches them. tensors[b.first .. b.first+b.ntensors) are
 * the bucket's tensor indices (registration order numbers, as DDP's
 * rebuilt_per_bucket_param_indices) in gradient-ready order. The plan owns its arrays.
 */
struct bucket_plan {
	struct bucket *b;
	uint32_t nbuckets;
	uint32_t *tensors;
	uint32_t ntensors;
	uint64_t bytes;      /* all gradients */
	uint64_t cap;
	uint64_t first_cap;
	enum dtype grad_dtype;
};

/*
 * DDP's algorithm: walk the tensors in gradient-ready order; each gradient dtype has
 * its own open bucket and its own position in the limit list {first_cap, cap} (just
 * {cap} when first_cap is 0). A tensor joins its dtype's open bucket; when the bucket's
 * size reaches the current limit (>=, so the last tensor may overflow it) the bucket
 * closes and that dtype moves on to the next limit, staying on the last one. Open
 * buckets left at the end follow, one per dtype in the order the dtypes first appeared
 * (DDP walks an unordered_map there; with one dtype there is no difference).
 * Tensors with dtype TENSOR_DTYPE_GRAD use grad_dtype. Returns 0, -EINVAL (no tensors,
 * bad dtype) or -ENOMEM.
 */
int bucket_plan_build(const struct tensor_list *tl, uint64_t cap, uint64_t first_cap,
		      enum dtype grad_dtype, struct bucket_plan *out);
void bucket_plan_free(struct bucket_plan *p);

/* dtype of tensor t under a plan built with grad_dtype. */
static inline enum dtype tensor_grad_dtype(const struct tensor *t, enum dtype grad_dtype)
{
	return t->dtype == TENSOR_DTYPE_GRAD ? grad_dtype : (enum dtype)t->dtype;
}

/* DDP's first bucket: first if given, else 1 MiB (dist._DEFAULT_FIRST_BUCKET_BYTES)
 * while the cap is DDP's default and the cap itself once the user set bucket_cap_mb. */
static inline uint64_t bucket_first_cap(uint64_t cap, uint64_t first, bool cap_given)
{
	return first ? first : cap_given ? cap : (uint64_t)1 << 20;
}

#endif
