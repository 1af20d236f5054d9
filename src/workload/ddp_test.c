/*
 * The DDP iteration loop with fake ops: where verification's untimed work sits, and a
 * comm thread that never returns from its AllReduce given up on within its bound.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/test_capture.h"
#include "util/timeutil.h"
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

/* A model of three 16-element tensors, one bucket each (64 B a bucket), no compute. */
struct loop {
	struct workload_opts w;
	struct tensor_list tl;
	struct bucket_plan plan;
	struct compute_timeline ct;
	float grads[64];
};

static void loop_build(struct loop *l)
{
	struct gpu_profile g;
	struct cost_params cp;

	memset(l, 0, sizeof(*l));
	snprintf(l->w.model, sizeof(l->w.model), "custom");
	snprintf(l->w.layers, sizeof(l->w.layers), "a:16, b:16, c:16");
	snprintf(l->w.gpu_profile, sizeof(l->w.gpu_profile), "h200");
	l->w.launch_gap_ns = UINT64_MAX;
	l->w.warmup = 2;
	l->w.iterations = 3;
	assert_int_equal(model_build(&l->w, &l->tl), 0);
	assert_int_equal(bucket_plan_build(&l->tl, 64, 64, DT_F32, &l->plan), 0);
	assert_int_equal(compute_params_resolve(&l->w, &g, &cp), 0);
	assert_int_equal(compute_timeline_build(&l->tl, &l->plan, &cp, &l->ct), 0);
}

static void loop_free(struct loop *l)
{
	compute_timeline_free(&l->ct);
	bucket_plan_free(&l->plan);
	tensor_list_free(&l->tl);
}

static void run(int verify, struct fake *f, uint32_t *nbuckets)
{
	struct ddp_ops ops = { .arg = f, .allreduce = fake_allreduce, .fill = fake_fill,
			       .check = fake_check, .realign = fake_realign,
			       .on_iter = fake_on_iter, .timeout_ns = 10000000000ull };
	struct ddp_result res;
	struct loop l;

	loop_build(&l);
	memset(f, 0, sizeof(*f));
	assert_int_equal(ddp_run(&l.w, &l.plan, &l.ct, l.grads, &ops, 0, 2, 1, verify, &res), 0);
	assert_false(res.comm_stuck);
	*nbuckets = l.plan.nbuckets;
	ddp_result_free(&res);
	loop_free(&l);
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

/*
 * An AllReduce that never returns (a transport or GPU call that hangs): the comm thread
 * enters the second bucket's, says in its record that it waits on a receive from peer
 * 1, and blocks on a pipe until the test lets it go. The others return at once.
 */
struct hang {
	struct activity act; /* the comm thread's record */
	int pipe[2];	     /* the hung call reads it */
	int calls;	     /* AllReduces begun (comm thread only) */
	bool aborts;	     /* the job aborts as the call hangs (a peer timed out) */
	volatile int abort;  /* the job's abort flag */
	atomic_int back;     /* the hung call returned */
};

static int hang_allreduce(void *arg, void *buf, uint64_t count, enum dtype dt)
{
	struct hang *h = arg;
	char c;

	(void)buf, (void)count, (void)dt;
	if (++h->calls != 2)
		return 0;
	act_set(&h->act, ACT_RECV, 1, 7, time_now_ns());
	h->abort = h->aborts;
	while (read(h->pipe[0], &c, 1) < 0)
		;
	atomic_store(&h->back, 1);
	return -ECANCELED;
}

/* The stuck comm thread's line, whole, in log: its three figures in seconds. */
static void expect_stuck_line(const char *log, double *bound, double *began, double *in)
{
	const char *l = strstr(log, "the comm thread did not return");
	int n = 0;

	if (!l)
		fail_msg("no line on the stuck comm thread in:\n%s", log);
	assert_int_equal(sscanf(l, "the comm thread did not return within twice the timeout (%lf s) of being told to stop: it is in the AllReduce of bucket 1, begun %lf s ago, and has been waiting on recv from peer 1 in allreduce seq 7 for %lf s; Connection timed out\n%n",
				bound, began, in, &n), 3);
	if (!n)
		fail_msg("the line does not end as expected:\n%s", l);
}

/*
 * The comm thread does not return: ddp_run, once it stopped waiting for the buckets
 * (they timed out, twice the timeout since the last one done; or the job aborted, seen
 * at the next look), waits for it as long again (twice the timeout), then fails
 * -ETIMEDOUT, with one line naming what its record says it is in, and reports it stuck
 * (its caller keeps what the call reaches). Once the call comes back, the thread frees
 * the state it was handed: a sanitizer build sees no use after free and no leak.
 */
static void test_comm_stuck(void **state)
{
	static struct hang h; /* the detached thread may use it after the test returns */
	struct ddp_ops ops = { .arg = &h, .allreduce = hang_allreduce, .abort_flag = &h.abort,
			       .timeout_ns = 200000000ull, .comm_act = &h.act };
	double began, bound, in, took, lo;
	char log[4096];
	struct ddp_result res;
	struct capture c;
	struct loop l;
	uint64_t t0;

	(void)state;
	for (int aborted = 0; aborted < 2; aborted++) {
		loop_build(&l);
		memset(&h, 0, sizeof(h));
		assert_int_equal(pipe(h.pipe), 0);
		h.aborts = aborted;
		capture_begin(&c);
		t0 = time_now_ns();
		assert_int_equal(ddp_run(&l.w, &l.plan, &l.ct, l.grads, &ops, 0, 2, 1, 0, &res),
				 -ETIMEDOUT);
		took = (time_now_ns() - t0) / 1e9;
		capture_end(&c, log, sizeof(log));
		assert_true(res.comm_stuck);
		assert_null(res.iter);
		expect_stuck_line(log, &bound, &began, &in);
		/* the buckets' wait (0.4 s, or a look: 0.1 s), then the thread's: not sooner;
		 * and not much later (a busy host: 1 s) */
		assert_true(bound == 0.4);
		lo = aborted ? 0.4 : 0.8;
		assert_true(began >= lo && began < lo + 1);
		assert_true(in >= lo && in < lo + 1);
		assert_true(took >= lo && took < lo + 1);
		/* without the abort, the wait for the buckets said first that it timed out */
		assert_int_equal(!strstr(log, "waiting for bucket 1 of 3"), aborted);
		fprintf(stderr, "%s: ddp_run returned in %.2f s\n", aborted ? "aborted" : "timed out",
			took);
		/* the plan and the loop go: the thread needs neither to come back */
		loop_free(&l);
		assert_int_equal(write(h.pipe[1], "x", 1), 1);
		for (t0 = time_now_ns(); !atomic_load(&h.back); usleep(1000))
			assert_true(time_now_ns() - t0 < 5000000000ull);
		usleep(50000); /* it frees its state, then returns */
		close(h.pipe[0]);
		close(h.pipe[1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verify_realigns),
		cmocka_unit_test(test_comm_stuck),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
