/* Compute timeline: layer times from FLOPs, gradient and bucket ready times. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "workload/model.h"
#include "workload/timeline.h"

static void build_custom(const char *layers, struct tensor_list *tl)
{
	struct workload_opts w;

	memset(&w, 0, sizeof(w));
	snprintf(w.model, sizeof(w.model), "custom");
	snprintf(w.layers, sizeof(w.layers), "%s", layers);
	assert_int_equal(model_build(&w, tl), 0);
}

static void test_hand_timeline(void **state)
{
	struct compute_timeline ct;
	struct tensor_list tl;
	struct bucket_plan p;

	(void)state;
	/* 1, 2, 3 GFLOPs forward at 1 TFLOP/s: 1, 2, 3 ms forward; 2, 4, 6 ms backward */
	build_custom("a:100:1, b:100:2, c:100:3", &tl);
	/* ready c, b, a (400 B each): cap 800 -> [c, b], [a] */
	assert_int_equal(bucket_plan_build(&tl, 800, 0, DT_F32, &p), 0);
	assert_int_equal(p.nbuckets, 2);
	assert_int_equal(compute_timeline_build(&tl, &p, 1.0, &ct), 0);
	assert_float_equal(ct.fwd_s, 6e-3, 1e-12);
	assert_float_equal(ct.bwd_s, 12e-3, 1e-12);
	assert_float_equal(ct.layer_fwd_s[1], 2e-3, 1e-12);
	assert_float_equal(ct.layer_bwd_s[2], 6e-3, 1e-12);
	assert_float_equal(ct.layer_bwd_end[2], 6e-3, 1e-12);
	assert_float_equal(ct.layer_bwd_end[1], 10e-3, 1e-12);
	assert_float_equal(ct.layer_bwd_end[0], 12e-3, 1e-12);
	assert_float_equal(ct.tensor_ready[2], 6e-3, 1e-12);
	assert_float_equal(ct.bucket_ready[0], 10e-3, 1e-12);
	assert_float_equal(ct.bucket_ready[1], 12e-3, 1e-12);
	compute_timeline_free(&ct);

	/* 4 TFLOP/s: everything 4x faster */
	assert_int_equal(compute_timeline_build(&tl, &p, 4.0, &ct), 0);
	assert_float_equal(ct.bucket_ready[0], 2.5e-3, 1e-12);
	compute_timeline_free(&ct);

	/* no plan: layer and tensor times only */
	assert_int_equal(compute_timeline_build(&tl, NULL, 1.0, &ct), 0);
	assert_int_equal(ct.nbuckets, 0);
	assert_float_equal(ct.tensor_ready[0], 12e-3, 1e-12);
	compute_timeline_free(&ct);

	assert_int_equal(compute_timeline_build(&tl, &p, 0.0, &ct), -EINVAL);
	assert_int_equal(compute_timeline_build(&tl, &p, -1.0, &ct), -EINVAL);
	bucket_plan_free(&p);
	tensor_list_free(&tl);
}

static void test_model_timeline(void **state)
{
	struct compute_timeline ct;
	struct workload_opts w;
	struct tensor_list tl;
	struct bucket_plan p;
	uint32_t i;

	(void)state;
	memset(&w, 0, sizeof(w));
	snprintf(w.model, sizeof(w.model), "resnet50");
	assert_int_equal(model_build(&w, &tl), 0);
	assert_int_equal(bucket_plan_build(&tl, 25ull << 20, 1ull << 20, DT_F32, &p), 0);
	assert_int_equal(compute_timeline_build(&tl, &p, 100.0, &ct), 0);
	/* buckets become ready in launch order, the last one when backward ends */
	for (i = 1; i < p.nbuckets; i++)
		assert_true(ct.bucket_ready[i] >= ct.bucket_ready[i - 1]);
	assert_float_equal(ct.bucket_ready[p.nbuckets - 1], ct.bwd_s, 1e-15);
	assert_float_equal(ct.bwd_s, tl.bwd_flops / 100e12, 1e-12);
	/* backward is about twice forward (the stem conv has no data gradient) */
	assert_true(ct.bwd_s > 1.9 * ct.fwd_s && ct.bwd_s <= 2.0 * ct.fwd_s);
	compute_timeline_free(&ct);
	bucket_plan_free(&p);
	tensor_list_free(&tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_timeline),
		cmocka_unit_test(test_model_timeline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
