/* The DDP iteration loop with fake ops: where verification's untimed work sits. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "workload/ddp.h"
#include "workload/model.h"
#include "workload/timeline.h"

/* What the rank's main thread did, in order, and how many AllReduces had run by then. */
struct fake {
	char log[64];
	int n;
	int at_realign[4];
	int nrealign;
	atomic_int allreduces;
};

static void note(struct fake *f, char c)
{
	if (f->n < (int)sizeof(f->log) - 1)
		f->log[f->n++] = c;
}

static int fake_allreduce(void *arg, void *buf, uint64_t count, enum dtype dt)
{
	struct fake *f = arg;

	(void)buf, (void)count, (void)dt;
	atomic_fetch_add(&f->allreduces, 1);
	return 0;
}

static int fake_fill(void *arg, uint64_t count, enum dtype dt, uint64_t seed, int rank,
		     int nranks)
{
	(void)count, (void)dt, (void)seed, (void)rank, (void)nranks;
	note(arg, 'F');
	return 0;
}

static int fake_check(void *arg, uint64_t count, enum dtype dt, uint64_t seed, int nranks,
		      uint64_t *wrong, uint64_t *first)
{
	(void)count, (void)dt, (void)seed, (void)nranks;
	*wrong = 0;
	*first = 0;
	note(arg, 'C');
	return 0;
}

static int fake_realign(void *arg)
{
	struct fake *f = arg;

	note(f, 'R');
	if (f->nrealign < 4)
		f->at_realign[f->nrealign++] = atomic_load(&f->allreduces);
	return 0;
}

static void fake_on_iter(void *arg, int i, int total, int warmup, const struct ddp_iter *it)
{
	(void)i, (void)total, (void)warmup, (void)it;
	note(arg, 'I');
}

static void run(int verify, struct fake *f, uint32_t *nbuckets)
{
	struct workload_opts w;
	struct tensor_list tl;
	struct bucket_plan plan;
	struct compute_timeline ct;
	struct gpu_profile g;
	struct cost_params cp;
	struct ddp_ops ops = { .arg = f, .allreduce = fake_allreduce, .fill = fake_fill,
			       .check = fake_check, .realign = fake_realign,
			       .on_iter = fake_on_iter, .timeout_ns = 10000000000ull };
	struct ddp_result res;
	float grads[64];

	memset(&w, 0, sizeof(w));
	snprintf(w.model, sizeof(w.model), "custom");
	snprintf(w.layers, sizeof(w.layers), "a:16, b:16, c:16");
	snprintf(w.gpu_profile, sizeof(w.gpu_profile), "h200");
	w.launch_gap_ns = UINT64_MAX;
	w.warmup = 2;
	w.iterations = 3;
	assert_int_equal(model_build(&w, &tl), 0);
	/* 64 B a bucket: every tensor its own bucket */
	assert_int_equal(bucket_plan_build(&tl, 64, 64, DT_F32, &plan), 0);
	assert_int_equal(compute_params_resolve(&w, &g, &cp), 0);
	assert_int_equal(compute_timeline_build(&tl, &plan, &cp, &ct), 0);
	memset(f, 0, sizeof(*f));
	assert_int_equal(ddp_run(&w, &plan, &ct, grads, &ops, 0, 2, 1, verify, &res), 0);
	*nbuckets = plan.nbuckets;
	ddp_result_free(&res);
	compute_timeline_free(&ct);
	bucket_plan_free(&plan);
	tensor_list_free(&tl);
}

/*
 * verify = first: the fill before the first measured iteration and the check after it
 * are each followed by a barrier, so ranks enter the next timed iteration together (a
 * rank whose check ran faster once waited for the others inside its AllReduces, and that
 * wait counted as its communication: max/p50 of 2-5x on 4 ranks).
 */
static void test_verify_realigns(void **state)
{
	struct fake f;
	uint32_t nb;

	(void)state;
	run(1, &f, &nb);
	assert_int_equal(nb, 3);
	/* 2 warmup iterations, fill + barrier, measured 1, check + barrier, measured 2 and 3 */
	assert_string_equal(f.log, "IIFRICRII");
	assert_int_equal(f.nrealign, 2);
	assert_int_equal(f.at_realign[0], 2 * 3); /* the warmups' buckets, none measured */
	assert_int_equal(f.at_realign[1], 3 * 3); /* the first measured iteration's */
	assert_int_equal(atomic_load(&f.allreduces), 5 * 3);

	run(0, &f, &nb); /* no verification: nothing untimed, no barrier */
	assert_string_equal(f.log, "IIIII");
	assert_int_equal(f.nrealign, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verify_realigns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
