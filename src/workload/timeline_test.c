/* Compute timeline: operators through the eager pipeline, gradient and bucket ready times. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "workload/model.h"
#include "workload/test_custom.h"
#include "workload/timeline.h"

/* A GPU of 1 TFLOP/s fp32 GEMMs and nothing else: no floor, no fixed cost, no host gap. */
static struct gpu_profile unit_gpu(double tflops)
{
	struct gpu_profile g;

	memset(&g, 0, sizeof(g));
	for (int i = 0; i < MX_COUNT; i++)
		g.matrix_tflops[i] = tflops;
	g.hbm_gbps = 1000;
	return g;
}

static struct cost_params params(const struct gpu_profile *g, double gap_us)
{
	return (struct cost_params){ .gpu = g, .precision = PREC_FP32, .launch_gap_us = gap_us };
}

static void test_hand_timeline(void **state)
{
	struct gpu_profile g1 = unit_gpu(1.0), g4 = unit_gpu(4.0), gh = unit_gpu(1.0);
	struct cost_params c1 = params(&g1, 0), c4 = params(&g4, 0), bad = { 0 };
	struct compute_timeline ct;
	struct tensor_list tl;
	struct bucket_plan p;

	(void)state;
	/* 1, 2, 3 GFLOPs forward at 1 TFLOP/s: 1, 2, 3 ms forward; 2, 4, 6 ms backward */
	test_build_custom("a:100:1, b:100:2, c:100:3", &tl);
	/* ready c, b, a (400 B each): cap 800 -> [c, b], [a] */
	assert_int_equal(bucket_plan_build(&tl, 800, 0, DT_F32, &p), 0);
	assert_int_equal(p.nbuckets, 2);
	assert_int_equal(compute_timeline_build(&tl, &p, &c1, &ct), 0);
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
	assert_int_equal(compute_timeline_build(&tl, &p, &c4, &ct), 0);
	assert_float_equal(ct.bucket_ready[0], 2.5e-3, 1e-12);
	compute_timeline_free(&ct);

	/* no plan: layer and tensor times only */
	assert_int_equal(compute_timeline_build(&tl, NULL, &c1, &ct), 0);
	assert_int_equal(ct.nbuckets, 0);
	assert_float_equal(ct.tensor_ready[0], 12e-3, 1e-12);
	compute_timeline_free(&ct);

	/* a host gap of 5 ms per kernel: the GPU waits for the host; forward's three
	 * kernels are issued at 5, 10, 15 ms, backward's six from there on */
	{
		struct cost_params ch = params(&gh, 5000);

		assert_int_equal(compute_timeline_build(&tl, &p, &ch, &ct), 0);
		assert_float_equal(ct.fwd_s, 15e-3 + 3e-3, 1e-12);
		assert_float_equal(ct.bwd_s, 45e-3 + 1e-3 - 18e-3, 1e-12);
		/* the host's own clock: 3 calls forward, 6 backward, never waiting */
		assert_float_equal(ct.host_fwd_s, 15e-3, 1e-12);
		assert_float_equal(ct.host_bwd_s, 30e-3, 1e-12);
		/* forward ends on the GPU's clock: the later of the two is it */
		assert_float_equal(ct.gpu_fwd_s, 18e-3, 1e-12);
		compute_timeline_free(&ct);
		/* backward's start-up, 2 ms per forward call (three): the host-bound GPU waits
		 * 6 ms more for backward's first kernel, and every bucket with it */
		gh.bwd_start_us = 2000;
		assert_int_equal(compute_timeline_build(&tl, &p, &ch, &ct), 0);
		assert_float_equal(ct.bwd_start_s, 6e-3, 1e-12);
		assert_float_equal(ct.bwd_s, 45e-3 + 1e-3 - 18e-3 + 6e-3, 1e-12);
		assert_float_equal(ct.host_bwd_s, 30e-3 + 6e-3, 1e-12);
		compute_timeline_free(&ct);
		/* under CUDA graphs there is no eager start-up */
		ch = params(&gh, 0);
		assert_int_equal(compute_timeline_build(&tl, &p, &ch, &ct), 0);
		assert_float_equal(ct.bwd_start_s, 0, 1e-15);
		assert_float_equal(ct.bwd_s, 12e-3, 1e-12);
		assert_float_equal(ct.host_fwd_s + ct.host_bwd_s, 0, 1e-15);
		compute_timeline_free(&ct);
		gh.bwd_start_us = 0;
	}
	assert_int_equal(compute_timeline_build(&tl, &p, &bad, &ct), -EINVAL);
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
	struct gpu_profile g;
	struct cost_params cp;

	memset(&w, 0, sizeof(w));
	snprintf(w.model, sizeof(w.model), "resnet50");
	w.launch_gap_ns = 0;
	assert_int_equal(model_build(&w, &tl), 0);
	assert_int_equal(bucket_plan_build(&tl, 25ull << 20, 1ull << 20, DT_F32, &p), 0);
	assert_int_equal(compute_params_resolve(&w, &g, &cp), 0);
	assert_string_equal(g.name, "h200");
	assert_int_equal(compute_timeline_build(&tl, &p, &cp, &ct), 0);
	/* buckets become ready in launch order, the last one when backward ends */
	for (i = 1; i < p.nbuckets; i++)
		assert_true(ct.bucket_ready[i] >= ct.bucket_ready[i - 1]);
	assert_true(ct.bucket_ready[p.nbuckets - 1] <= ct.bwd_s);
	/* with no host gap the GPU time is at least the matrix work at the profile's rate */
	assert_true(ct.fwd_s > tl.fwd_flops / (g.matrix_tflops[MX_FP32] * 1e12));
	assert_true(ct.bwd_s > 1.5 * ct.fwd_s && ct.bwd_s < 3.0 * ct.fwd_s);
	compute_timeline_free(&ct);
	bucket_plan_free(&p);
	tensor_list_free(&tl);
}

/* how much of backward's start-up a host frac faster or slower shows: the clamp's edges */
static void test_startup_swing(void **state)
{
	struct compute_timeline ct = { .host_fwd_s = 10, .gpu_fwd_s = 10.5, .bwd_start_s = 1 };

	(void)state;
	/* at 10% the host runs 9..11 s: from none of the start-up (9 + 1 < 10.5) to all */
	assert_float_equal(timeline_startup_swing_s(&ct, 0.10), 1, 1e-12);
	/* at 2%, 9.8..10.2 s: 0.3 to 0.7 s of it shows */
	assert_float_equal(timeline_startup_swing_s(&ct, 0.02), 0.4, 1e-12);
	/* the GPU far ahead hides it either way, a host far behind shows all of it either way */
	ct.gpu_fwd_s = 15;
	assert_float_equal(timeline_startup_swing_s(&ct, 0.10), 0, 1e-12);
	ct.gpu_fwd_s = 5;
	assert_float_equal(timeline_startup_swing_s(&ct, 0.10), 0, 1e-12);
	/* no start-up (CUDA graphs): nothing to move */
	ct.gpu_fwd_s = 10.5;
	ct.bwd_start_s = 0;
	assert_float_equal(timeline_startup_swing_s(&ct, 0.10), 0, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_timeline),
		cmocka_unit_test(test_model_timeline),
		cmocka_unit_test(test_startup_swing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
