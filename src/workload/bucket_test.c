/* DDP bucket assignment: hand-checked cases, per-dtype limits, ResNet-50 at 25 MiB. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "workload/bucket.h"
#include "workload/model.h"
#include "workload/test_custom.h"

#define MIB (1024ull * 1024ull)

/* Bucket i holds exactly the tensors idx[0..n) and bytes. */
static void check_bucket(const struct bucket_plan *p, uint32_t i, uint64_t bytes, uint64_t limit,
			 const uint32_t *idx, uint32_t n)
{
	uint32_t j;

	assert_true(i < p->nbuckets);
	assert_int_equal(p->b[i].bytes, bytes);
	assert_int_equal(p->b[i].size_limit, limit);
	assert_int_equal(p->b[i].ntensors, n);
	for (j = 0; j < n; j++)
		assert_int_equal(p->tensors[p->b[i].first + j], idx[j]);
}

static void test_hand_cases(void **state)
{
	static const uint32_t dc[] = { 3, 2 }, ba[] = { 1, 0 }, d[] = { 3 }, cb[] = { 2, 1 },
			      a[] = { 0 }, dcba[] = { 3, 2, 1, 0 };
	struct tensor_list tl;
	struct bucket_plan p;
	uint32_t i;

	(void)state;
	/* f32: a 400 B, b 800 B, c 1200 B, d 1600 B; ready order d, c, b, a */
	test_build_custom("a:100, b:200, c:300, d:400", &tl);

	assert_int_equal(bucket_plan_build(&tl, 2000, 0, DT_F32, &p), 0);
	assert_int_equal(p.nbuckets, 2);
	check_bucket(&p, 0, 2800, 2000, dc, 2); /* the closing tensor overflows the cap */
	check_bucket(&p, 1, 1200, 2000, ba, 2); /* leftover */
	assert_int_equal(p.bytes, 4000);
	bucket_plan_free(&p);

	/* first bucket 1000 B: d alone, then c + b reach exactly 2000 (>= closes) */
	assert_int_equal(bucket_plan_build(&tl, 2000, 1000, DT_F32, &p), 0);
	assert_int_equal(p.nbuckets, 3);
	check_bucket(&p, 0, 1600, 1000, d, 1);
	check_bucket(&p, 1, 2000, 2000, cb, 2);
	check_bucket(&p, 2, 400, 2000, a, 1);
	bucket_plan_free(&p);

	/* bf16 halves the sizes: 200, 400, 600, 800 -> d+c = 1400, b+a = 600 at cap 1400 */
	assert_int_equal(bucket_plan_build(&tl, 1400, 0, DT_BF16, &p), 0);
	assert_int_equal(p.nbuckets, 2);
	check_bucket(&p, 0, 1400, 1400, dc, 2);
	check_bucket(&p, 1, 600, 1400, ba, 2);
	assert_int_equal(p.b[0].dtype, DT_BF16);
	bucket_plan_free(&p);

	/* cap 0: one bucket per tensor */
	assert_int_equal(bucket_plan_build(&tl, 0, 0, DT_F32, &p), 0);
	assert_int_equal(p.nbuckets, 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(p.b[i].ntensors, 1);
		assert_int_equal(p.tensors[i], 3 - i);
	}
	bucket_plan_free(&p);

	/* a cap above everything: one bucket, closed as leftover */
	assert_int_equal(bucket_plan_build(&tl, 25 * MIB, 1 * MIB, DT_F32, &p), 0);
	assert_int_equal(p.nbuckets, 1);
	check_bucket(&p, 0, 4000, 1 * MIB, dcba, 4);
	bucket_plan_free(&p);

	assert_int_equal(bucket_plan_build(&tl, 2000, 0, DT_COUNT, &p), -EINVAL);
	tensor_list_free(&tl);
}

static void test_mixed_dtypes(void **state)
{
	static const uint32_t b0[] = { 5 }, b1[] = { 4, 2 }, b2[] = { 3, 1 }, b3[] = { 0 };
	struct tensor_list tl;
	struct bucket_plan p;

	(void)state;
	/* six tensors of 100 elements; ready order t5..t0; t4 and t2 have bf16 gradients */
	test_build_custom("t0:100, t1:100, t2:100, t3:100, t4:100, t5:100", &tl);
	tl.t[4].dtype = DT_BF16;
	tl.t[2].dtype = DT_BF16;
	/*
	 * Limits {300, 600}, each dtype walking its own: t5 (f32 400 >= 300) closes alone;
	 * t4 (bf16 200) stays open; t3 (f32 400 < 600); t2 closes bf16 at 400 >= 300;
	 * t1 closes f32 at 800 >= 600; t0 is left over.
	 */
	assert_int_equal(bucket_plan_build(&tl, 600, 300, DT_F32, &p), 0);
	assert_int_equal(p.nbuckets, 4);
	check_bucket(&p, 0, 400, 300, b0, 1);
	check_bucket(&p, 1, 400, 300, b1, 2);
	check_bucket(&p, 2, 800, 600, b2, 2);
	check_bucket(&p, 3, 400, 600, b3, 1);
	assert_int_equal(p.b[1].dtype, DT_BF16);
	assert_int_equal(p.b[2].dtype, DT_F32);
	assert_int_equal(p.bytes, 4 * 400 + 2 * 200);
	bucket_plan_free(&p);

	/* Both dtypes left open: leftovers in order of first appearance (f32 first). */
	assert_int_equal(bucket_plan_build(&tl, 1 * MIB, 0, DT_F32, &p), 0);
	assert_int_equal(p.nbuckets, 2);
	assert_int_equal(p.b[0].dtype, DT_F32);
	assert_int_equal(p.b[0].ntensors, 4);
	assert_int_equal(p.b[1].dtype, DT_BF16);
	assert_int_equal(p.b[1].ntensors, 2);
	bucket_plan_free(&p);
	tensor_list_free(&tl);
}

/* Properties any DDP plan has: coverage, order, closing rule. */
static void check_plan_invariants(const struct tensor_list *tl, const struct bucket_plan *p)
{
	uint64_t total = 0;
	uint32_t i, j, k = 0;

	assert_int_equal(p->ntensors, tl->n);
	for (i = 0; i < p->nbuckets; i++) {
		const struct bucket *b = &p->b[i];
		uint64_t bytes = 0, last = 0;

		for (j = 0; j < b->ntensors; j++) {
			/* single dtype: buckets are consecutive runs of the ready order */
			assert_int_equal(p->tensors[b->first + j], tl->ready[k++]);
			last = tl->t[p->tensors[b->first + j]].numel * 4;
			bytes += last;
		}
		assert_int_equal(bytes, b->bytes);
		if (i + 1 < p->nbuckets) {
			assert_true(b->bytes >= b->size_limit);
			assert_true(b->bytes - last < b->size_limit);
		} else {
			assert_true(b->bytes - last < b->size_limit);
		}
		total += bytes;
	}
	assert_int_equal(total, tl->numel * 4);
}

static void test_resnet50_25mib(void **state)
{
	struct tensor_list tl;
	struct workload_opts w;
	struct bucket_plan p;

	(void)state;
	memset(&w, 0, sizeof(w));
	snprintf(w.model, sizeof(w.model), "resnet50");
	assert_int_equal(model_build(&w, &tl), 0);

	assert_int_equal(bucket_plan_build(&tl, 25 * MIB, 0, DT_F32, &p), 0);
	check_plan_invariants(&tl, &p);
	/* 102.2 MB of f32 gradients in 25 MiB buckets, each closing past the cap */
	assert_int_equal(p.nbuckets, 4);
	assert_int_equal(p.bytes, 25557032ull * 4);
	assert_string_equal(tl.t[p.tensors[0]].name, "fc.bias");
	assert_string_equal(tl.t[p.tensors[p.ntensors - 1]].name, "conv1.weight");
	bucket_plan_free(&p);

	/* DDP's default (bucket_cap_mb unset): a 1 MiB first bucket, fc.bias + fc.weight */
	assert_int_equal(bucket_plan_build(&tl, 25 * MIB, 1 * MIB, DT_F32, &p), 0);
	check_plan_invariants(&tl, &p);
	assert_int_equal(p.b[0].ntensors, 2);
	assert_int_equal(p.b[0].bytes, (2048ull * 1000 + 1000) * 4);
	assert_int_equal(p.b[0].size_limit, 1 * MIB);
	assert_int_equal(p.b[1].size_limit, 25 * MIB);
	bucket_plan_free(&p);
	tensor_list_free(&tl);
}

/*
 * rebuilt_bucket_sizes that PyTorch DDP reports for torchvision models with its default
 * caps (25 MiB, 1 MiB first bucket), f32, as a public network benchmark replays them.
 */
static void test_ddp_observed_sizes(void **state)
{
	static const uint64_t resnet50[] = { 8196000, 31502336, 26255360, 26550272, 9724160 };
	static const uint64_t vit_h_layer[] = { 26229760, 26234880, 26245120 };
	struct tensor_list tl;
	struct workload_opts w;
	struct bucket_plan p;
	uint32_t i;

	(void)state;
	memset(&w, 0, sizeof(w));
	snprintf(w.model, sizeof(w.model), "resnet50");
	assert_int_equal(model_build(&w, &tl), 0);
	assert_int_equal(bucket_plan_build(&tl, 25 * MIB, 1 * MIB, DT_F32, &p), 0);
	assert_int_equal(p.nbuckets, ARRAY_SIZE(resnet50));
	for (i = 0; i < p.nbuckets; i++)
		assert_int_equal(p.b[i].bytes, resnet50[i]);
	bucket_plan_free(&p);
	tensor_list_free(&tl);

	/* vit_h_14: the head, 32 layers of three buckets each, then the stem */
	snprintf(w.model, sizeof(w.model), "vit_h_14");
	assert_int_equal(model_build(&w, &tl), 0);
	assert_int_equal(bucket_plan_build(&tl, 25 * MIB, 1 * MIB, DT_F32, &p), 0);
	assert_int_equal(p.nbuckets, 1 + 32 * 3 + 1);
	assert_int_equal(p.b[0].bytes, 5124000);
	for (i = 1; i <= 32 * 3; i++)
		assert_int_equal(p.b[i].bytes, vit_h_layer[(i - 1) % 3]);
	assert_int_equal(p.b[p.nbuckets - 1].bytes, 4346880);
	bucket_plan_free(&p);
	tensor_list_free(&tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_cases),
		cmocka_unit_test(test_mixed_dtypes),
		cmocka_unit_test(test_resnet50_25mib),
		cmocka_unit_test(test_ddp_observed_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
