/*
 * The DDP iteration loop: compute on the caller's thread, bucket AllReduces on a
 * comm thread fed in bucket order, every wait bounded: the AllReduces' by the timeout,
 * the wait for them by twice that (wait_all), and the wait for the comm thread to
 * return by the same (comm_stop), after which a thread that never returned is left
 * running with the state it uses.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/verify.h"
#include "util/activity.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "workload/ddp.h"

/* The longest the compute thread goes without looking at the abort flag. */
#define DDP_ABORT_LOOK_NS 100000000ull

/*
 * State shared by the compute thread and the comm thread of one ddp_run, on the heap:
 * when the comm thread does not return, ddp_run hands it over (abandoned) and the
 * thread frees it if it ever does.
 */
struct ddp_state {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint32_t posted;          /* buckets handed to the comm thread in this iteration */
	uint32_t done;            /* buckets completed in this iteration */
	bool stop;                /* the comm thread exits */
	bool exited;              /* the comm thread left its loop: it returns at once */
	bool abandoned;           /* ddp_run gave up on it: the thread owns this state */
	uint64_t busy_since;      /* time_now_ns() its current AllReduce began; 0: idle */
	int err;                  /* first comm error */
	const struct bucket_plan *plan;
	const struct ddp_ops *ops;
	char *grads;
	uint64_t *bucket_off;     /* element offset of each bucket */
	uint64_t numel;           /* every bucket's elements */
	uint64_t iter_start;
	struct ddp_bucket_times *times; /* the current iteration's row */
};

static void abs_deadline(struct timespec *ts, uint64_t ns_from_now)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ns_from_now / 1000000000ull;
	ts->tv_nsec += ns_from_now % 1000000000ull;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

static void state_free(struct ddp_state *st)
{
	pthread_cond_destroy(&st->cond);
	pthread_mutex_destroy(&st->lock);
	free(st->bucket_off);
	free(st->times);
	free(st);
}

/* The state of one ddp_run (its lock, its condition on CLOCK_MONOTONIC, each bucket's
 * offset and times), NULL on ENOMEM. */
static struct ddp_state *state_new(const struct bucket_plan *plan, const struct ddp_ops *ops,
				   void *grads)
{
	struct ddp_state *st = calloc(1, sizeof(*st));
	pthread_condattr_t ca;
	uint64_t off = 0;

	if (!st)
		return NULL;
	*st = (struct ddp_state){ .plan = plan, .ops = ops, .grads = grads };
	st->bucket_off = calloc(plan->nbuckets, sizeof(*st->bucket_off));
	st->times = calloc(plan->nbuckets, sizeof(*st->times));
	for (uint32_t b = 0; st->bucket_off && b < plan->nbuckets; b++) {
		st->bucket_off[b] = off;
		off += plan->b[b].numel;
	}
	st->numel = off;
	pthread_mutex_init(&st->lock, NULL);
	/* deadlines are CLOCK_MONOTONIC (abs_deadline): the condition must wait on that clock */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (!st->bucket_off || !st->times) {
		state_free(st);
		return NULL;
	}
	return st;
}

/*
 * Buckets run in order: `done` is the next bucket to reduce. The compute thread resets
 * posted/done at an iteration's start, when the previous iteration's buckets are all
 * done, so the comm thread is idle then. Its one unbounded wait is for the compute
 * thread's next post or stop, which ddp_run always sends. Once an AllReduce returns it
 * touches nothing but *st (the bucket's size is read before): a thread ddp_run gave up
 * on may come back after the caller freed the plan.
 */
static void *comm_thread(void *arg)
{
	struct ddp_state *st = arg;
	bool abandoned;

	pthread_mutex_lock(&st->lock);
	for (;;) {
		const struct bucket *b;
		unsigned long long bytes;
		uint32_t next;
		int ret;

		while (!st->stop && !st->err && st->done >= st->posted)
			pthread_cond_wait(&st->cond, &st->lock);
		if (st->stop || st->err)
			break;
		next = st->done;
		b = &st->plan->b[next];
		bytes = b->bytes;
		st->busy_since = time_now_ns();
		st->times[next].start = st->busy_since - st->iter_start;
		pthread_mutex_unlock(&st->lock);
		ret = st->ops->allreduce(st->ops->arg,
					 st->grads + st->bucket_off[next] * dtype_size(b->dtype),
					 b->numel, b->dtype);
		pthread_mutex_lock(&st->lock);
		st->busy_since = 0;
		st->times[next].end = time_now_ns() - st->iter_start;
		if (ret) {
			log_err(LOG_WORKLOAD, "allreduce of bucket %u (%llu bytes): %s", next, bytes,
				strerror(-ret));
			st->err = ret;
		}
		st->done = next + 1;
		pthread_cond_broadcast(&st->cond);
	}
	st->exited = true;
	pthread_cond_broadcast(&st->cond);
	abandoned = st->abandoned;
	pthread_mutex_unlock(&st->lock);
	/* nobody else holds it any more (comm_stop detached us) */
	if (abandoned)
		state_free(st);
	return NULL;
}

static void post_bucket(struct ddp_state *st, uint32_t b)
{
	pthread_mutex_lock(&st->lock);
	st->times[b].ready = time_now_ns() - st->iter_start;
	st->posted = b + 1;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
}

/*
 * Sleep until iteration time t_ns, looking at the abort flag every DDP_ABORT_LOOK_NS: a
 * modelled pass may last seconds, and a rank that sleeps through the job's abort is one
 * rank 0's probe would take for stuck (util/activity.h). -ECONNABORTED on the abort.
 */
static int play_until(const struct ddp_ops *ops, uint64_t iter_start, uint64_t t_ns)
{
	uint64_t end = iter_start + t_ns, now;

	while ((now = time_now_ns()) < end) {
		struct timespec ts = time_ns_ts(GS_MIN(end, now + DDP_ABORT_LOOK_NS));

		if (ops->abort_flag && *ops->abort_flag)
			return -ECONNABORTED;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL); /* EINTR: again */
	}
	return 0;
}

/* Compute of [from, to) of a pass: on the GPU through ops->compute, else by sleeping. */
static int play(const struct workload_opts *w, const struct ddp_ops *ops,
		const struct compute_timeline *ct, uint64_t iter_start, uint64_t base_ns,
		uint64_t end_ns, int backward, uint32_t *layer_pos)
{
	if (w->compute == COMPUTE_NONE)
		return 0;
	if (w->compute == COMPUTE_SLEEP || !ops->compute)
		return play_until(ops, iter_start, end_ns);
	/* GPU: run the layers whose modelled span ends by end_ns */
	while (*layer_pos < ct->nlayers) {
		uint32_t l = backward ? ct->nlayers - 1 - *layer_pos : *layer_pos;
		double s = backward ? ct->layer_bwd_s[l] : ct->layer_fwd_s[l];
		double end = backward ? ct->layer_bwd_end[l] : 0;
		int ret;

		if (backward && base_ns + end * 1e9 > (double)end_ns + 1)
			break;
		ret = ops->compute(ops->arg, l, backward, s);
		if (ret)
			return ret;
		(*layer_pos)++;
	}
	return ops->compute_wait ? ops->compute_wait(ops->arg) : 0;
}

/*
 * Wait until the comm thread has done every bucket or failed. Each bucket's AllReduce
 * bounds its own waits and, when one stalls, fails naming the peer it waits on: this
 * wait is only the backstop behind it, so that the precise reason comes first (at the
 * same bound, it fired first and named nobody). It allows a bucket twice the timeout,
 * counted from the last bucket done: one collective may take up to the timeout before
 * its stall timer starts.
 */
static int wait_all(struct ddp_state *st, uint32_t nbuckets)
{
	uint64_t bound = 2 * st->ops->timeout_ns;
	struct timespec dl;
	bool waited_out;
	uint32_t seen;
	int ret = 0;

	abs_deadline(&dl, bound);
	pthread_mutex_lock(&st->lock);
	seen = st->done;
	while (st->done < nbuckets && !st->err && !ret) {
		struct timespec slice;

		if (st->ops->abort_flag && *st->ops->abort_flag) {
			ret = -ECONNABORTED;
			break;
		}
		if (st->done != seen) {
			seen = st->done;
			abs_deadline(&dl, bound);
		}
		/* wake up now and then to look at the abort flag */
		abs_deadline(&slice, DDP_ABORT_LOOK_NS);
		if (slice.tv_sec > dl.tv_sec ||
		    (slice.tv_sec == dl.tv_sec && slice.tv_nsec > dl.tv_nsec))
			slice = dl;
		if (pthread_cond_timedwait(&st->cond, &st->lock, &slice) == ETIMEDOUT &&
		    (slice.tv_sec == dl.tv_sec && slice.tv_nsec == dl.tv_nsec))
			ret = -ETIMEDOUT;
	}
	/* an AllReduce's own -ETIMEDOUT (it named the peer) is not this wait's */
	waited_out = ret == -ETIMEDOUT;
	if (!ret)
		ret = st->err;
	pthread_mutex_unlock(&st->lock);
	if (waited_out)
		log_err(LOG_WORKLOAD, "timed out after %.3gs waiting for bucket %u of %u: its AllReduce neither finished nor failed",
			(double)bound / 1e9, st->done, nbuckets);
	return ret;
}

/* The line for a comm thread that did not return within bound of being told to stop,
 * from the AllReduce of bucket it began busy_ns ago: what its activity record says it
 * is in (NULL: no record). */
static void comm_stuck_say(const struct activity *a, uint64_t bound, uint32_t bucket,
			   uint64_t busy_ns)
{
	struct act_snap s = { .what = ACT_NONE };
	char what[128], in[176] = "";

	if (a)
		act_read(a, ACT_THREAD_COMM, time_now_ns(), &s);
	if (act_in_case(s.what))
		snprintf(in, sizeof(in), ", and has been %s for %.1f s",
			 act_describe(&s, what, sizeof(what)), s.age_ms / 1e3);
	log_err(LOG_WORKLOAD, "the comm thread did not return within twice the timeout (%.1f s) of being told to stop: it is in the AllReduce of bucket %u, begun %.1f s ago%s; %s",
		bound / 1e9, bucket, busy_ns / 1e9, in, strerror(ETIMEDOUT));
}

/*
 * Stop the comm thread and wait for it to return, bounded as wait_all bounds a bucket:
 * twice the timeout (the AllReduce it is in has had every wait's own timeout to fail,
 * and an abort its next look; idle, it returns at once). Counted from now, not from the
 * AllReduce's start: a rank that gives up on it leaves the job, and must stay long
 * enough after the abort for rank 0's probe to name what it is stuck in. 0 once it
 * returned (the caller frees st). -ETIMEDOUT when it did not (a transport or GPU call
 * that never returns): it is detached and keeps st, which it frees if it ever comes
 * back, and everything its AllReduce reaches must stay allocated (ddp.h,
 * ddp_result.comm_stuck); one line names what it is in, from its activity record.
 */
static int comm_stop(struct ddp_state *st, pthread_t tid)
{
	const struct ddp_ops *ops = st->ops;
	uint64_t bound = 2 * ops->timeout_ns, deadline = time_now_ns() + bound, since;
	uint32_t bucket;
	bool gone;

	pthread_mutex_lock(&st->lock);
	st->stop = true;
	pthread_cond_broadcast(&st->cond);
	while (!st->exited && time_now_ns() < deadline) {
		struct timespec ts = time_ns_ts(deadline);

		pthread_cond_timedwait(&st->cond, &st->lock, &ts);
	}
	gone = st->exited;
	st->abandoned = !gone;
	bucket = st->done;
	since = st->busy_since;
	/* from here on, when abandoned, st is the thread's: not touched again */
	pthread_mutex_unlock(&st->lock);
	if (gone) {
		/* out of its loop, with nothing left but to return: a join of an instant */
		pthread_join(tid, NULL);
		return 0;
	}
	pthread_detach(tid);
	comm_stuck_say(ops->comm_act, bound, bucket, time_now_ns() - since);
	return -ETIMEDOUT;
}

static int one_iteration(const struct workload_opts *w, const struct compute_timeline *ct,
			 struct ddp_state *st, struct ddp_iter *it)
{
	const struct bucket_plan *plan = st->plan;
	uint64_t fwd_ns = w->compute == COMPUTE_NONE ? 0 : (uint64_t)(ct->fwd_s * 1e9);
	uint32_t b, pos = 0;
	int ret;

	pthread_mutex_lock(&st->lock);
	st->posted = 0;
	st->done = 0;
	st->iter_start = time_now_ns();
	pthread_mutex_unlock(&st->lock);
	it->start_abs = st->iter_start;

	ret = play(w, st->ops, ct, st->iter_start, 0, fwd_ns, 0, &pos);
	it->fwd_end = time_now_ns() - st->iter_start;
	pos = 0;
	for (b = 0; !ret && b < plan->nbuckets; b++) {
		uint64_t ready = w->compute == COMPUTE_NONE
					 ? 0
					 : it->fwd_end + (uint64_t)(ct->bucket_ready[b] * 1e9);

		ret = play(w, st->ops, ct, st->iter_start, it->fwd_end, ready, 1, &pos);
		if (w->overlap)
			post_bucket(st, b);
	}
	if (!ret && w->compute != COMPUTE_NONE)
		ret = play(w, st->ops, ct, st->iter_start, it->fwd_end,
			   it->fwd_end + (uint64_t)(ct->bwd_s * 1e9), 1, &pos);
	it->bwd_end = time_now_ns() - st->iter_start;
	if (!w->overlap)
		for (b = 0; b < plan->nbuckets; b++)
			post_bucket(st, b);
	if (!ret)
		ret = wait_all(st, plan->nbuckets);
	it->end = time_now_ns() - st->iter_start;
	return ret;
}

int ddp_run(const struct workload_opts *w, const struct bucket_plan *plan,
	    const struct compute_timeline *ct, void *grads, const struct ddp_ops *ops, int rank,
	    int nranks, uint64_t seed, int verify, struct ddp_result *res)
{
	struct ddp_state *st = state_new(plan, ops, grads);
	int total = w->warmup + w->iterations, i, ret = 0;
	uint64_t off = 0, first = 0;
	pthread_t tid;

	memset(res, 0, sizeof(*res));
	res->first_wrong = -1;
	res->iterations = w->iterations;
	res->nbuckets = plan->nbuckets;
	res->iter = calloc(w->iterations, sizeof(*res->iter));
	res->bucket = calloc((size_t)w->iterations * plan->nbuckets, sizeof(*res->bucket));
	if (!res->iter || !res->bucket || !st) {
		ret = -ENOMEM;
		goto out_free;
	}
	off = st->numel;
	ret = -pthread_create(&tid, NULL, comm_thread, st);
	if (ret) {
		log_err(LOG_WORKLOAD, "pthread_create comm thread: %s", strerror(-ret));
		goto out_free;
	}
	for (i = 0; i < total && !ret; i++) {
		struct ddp_iter it;
		bool measured = i >= w->warmup;

		if (verify && i == w->warmup) {
			if (ops->fill)
				ret = ops->fill(ops->arg, off, plan->grad_dtype, seed, rank, nranks);
			else
				verify_fill(grads, off, 0, plan->grad_dtype, REDOP_AVG, seed, rank,
					    nranks);
			if (!ret && ops->realign)
				ret = ops->realign(ops->arg);
			if (ret)
				break;
		}
		ret = one_iteration(w, ct, st, &it);
		if (!ret && ops->on_iter)
			ops->on_iter(ops->arg, i, total, w->warmup, &it);
		if (ret || !measured)
			continue;
		res->iter[i - w->warmup] = it;
		memcpy(&res->bucket[(size_t)(i - w->warmup) * plan->nbuckets], st->times,
		       plan->nbuckets * sizeof(*st->times));
		if (verify && i == w->warmup) {
			if (ops->check)
				ret = ops->check(ops->arg, off, plan->grad_dtype, seed, nranks,
						 &res->wrong, &first);
			else
				res->wrong = verify_check(grads, off, 0, plan->grad_dtype, REDOP_AVG,
							  seed, nranks, &first);
			if (!ret && ops->realign && i + 1 < total)
				ret = ops->realign(ops->arg);
			if (ret)
				break;
			if (res->wrong) {
				res->first_wrong = (int64_t)first;
				log_err(LOG_WORKLOAD, "verification: %llu wrong elements, first at %llu",
					(unsigned long long)res->wrong, (unsigned long long)first);
			}
		}
	}
	if (comm_stop(st, tid)) {
		/* the thread keeps st; the caller keeps what its AllReduce reaches */
		res->comm_stuck = true;
		ret = -ETIMEDOUT;
		st = NULL;
	}
out_free:
	if (st)
		state_free(st);
	if (ret)
		ddp_result_free(res);
	return ret;
}

void ddp_result_free(struct ddp_result *res)
{
	free(res->iter);
	free(res->bucket);
	res->iter = NULL;
	res->bucket = NULL;
}

void ddp_logging_fields(const struct ddp_result *res, struct ddp_logging *out)
{
	int n = res->iterations;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < n; i++) {
		const struct ddp_iter *it = &res->iter[i];
		const struct ddp_bucket_times *bt = &res->bucket[(size_t)i * res->nbuckets];
		double comm_start = 0, comm_end = 0;

		for (uint32_t b = 0; b < res->nbuckets; b++) {
			if (!b || (double)bt[b].start < comm_start)
				comm_start = (double)bt[b].start;
			if ((double)bt[b].end > comm_end)
				comm_end = (double)bt[b].end;
		}
		out->avg_forward_compute_time += (double)it->fwd_end;
		out->avg_backward_compute_time += (double)it->bwd_end - (double)it->fwd_end;
		out->avg_backward_comm_time += comm_end - comm_start;
		out->avg_backward_compute_comm_overlap_time += (double)it->bwd_end - comm_start;
	}
	if (n > 0) {
		out->avg_forward_compute_time /= n;
		out->avg_backward_compute_time /= n;
		out->avg_backward_comm_time /= n;
		out->avg_backward_compute_comm_overlap_time /= n;
	}
}
