/*
 * The plan of a workload as a person or a script reads it: model summary, the bucket
 * plan (with ready times when a compute rate is given) and optionally every tensor,
 * as text or as JSON. Both `gradsync plan --model ...` and `gradsync plan FILE.ini`
 * end in plan_print().
 */
#ifndef GS_WORKLOAD_PLAN_PRINT_H
#define GS_WORKLOAD_PLAN_PRINT_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>

#include "workload/bucket.h"
#include "workload/tensor_list.h"
#include "workload/timeline.h"
#include "workload/workload.h"

/*
 * Build w's model, its bucket plan (w->bucket_cap, w->first_bucket_cap, w->grad_dtype)
 * and its compute timeline (w's precision, GPU profile, launch gap); print them to out,
 * with ops: every operator and its modelled time. JSON adds precision, gpu_profile,
 * launch_gap_s and (ops) ops [{layer, phase, class, op, kernels, flops, bytes, gpu_s}].
 * Returns 0, -ENOENT (unknown model or profile), -EINVAL (bad options, logged), -ENOMEM
 * or -EIO.
 */
int plan_print(FILE *out, const struct workload_opts *w, bool json, bool tensors, bool ops);

/*
 * JSON document of a built plan; ct may be NULL. Keys: model, family, batch, seq_len,
 * image_size, num_params, num_tensors, num_layers, fwd_flops, bwd_flops, grad_dtype,
 * grad_bytes, bucket_cap, first_bucket_cap, num_buckets, ready_order (tensor indices),
 * buckets [{index, dtype, bytes, numel, size_limit, tensors, ready_s?}], and with
 * `tensors`: tensors [{index, name, shape, numel, layer, bucket, ready_pos}] and layers
 * [{name, fwd_flops, bwd_flops, tensors}]; with ct: gpu_tflops, fwd_s, bwd_s.
 * Returns a new reference or NULL (out of memory).
 */
json_t *plan_to_json(const struct tensor_list *tl, const struct bucket_plan *p,
		     const struct compute_timeline *ct, bool tensors);
int plan_print_text(FILE *out, const struct tensor_list *tl, const struct bucket_plan *p,
		    const struct compute_timeline *ct, bool tensors);

#endif
