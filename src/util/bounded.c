/*
 * Bounded calls (util/bounded.h): one detached thread per call, a condition variable on
 * the monotonic clock, and a hand-over of the call's argument to whichever of the thread
 * and its caller ends last. bounded_run is bounded_start then bounded_wait.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "util/bounded.h"
#include "util/common.h"
#include "util/timeutil.h"

struct bounded_job {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;       /* the call returned */
	bool abandoned;  /* its caller gave up: the thread frees everything */
	const struct bounded_ops *ops;
	void *arg;
};

/* calls given up on and still under way (bounded_pending) */
static int pending;

int bounded_pending(void)
{
	return __atomic_load_n(&pending, __ATOMIC_SEQ_CST);
}

static void job_free(struct bounded_job *j)
{
	pthread_cond_destroy(&j->cond);
	pthread_mutex_destroy(&j->lock);
	free(j);
}

static void *job_main(void *p)
{
	struct bounded_job *j = p;
	bool abandoned;

	j->ops->call(j->arg);
	pthread_mutex_lock(&j->lock);
	j->done = true;
	abandoned = j->abandoned;
	pthread_cond_signal(&j->cond);
	pthread_mutex_unlock(&j->lock);
	if (abandoned) {
		j->ops->drop(j->arg);
		job_free(j);
		__atomic_sub_fetch(&pending, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

struct bounded_job *bounded_start(const struct bounded_ops *ops, void *arg)
{
	struct bounded_job *j = calloc(1, sizeof(*j));
	pthread_condattr_t ca;
	pthread_attr_t ta;
	sigset_t all, old;
	pthread_t t;
	int rc;

	if (!j) { /* no memory for the hand-over: the call, unbounded, on this thread */
		ops->call(arg);
		return NULL;
	}
	j->ops = ops;
	j->arg = arg;
	pthread_mutex_init(&j->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* time_now_ns's clock */
	pthread_cond_init(&j->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_attr_init(&ta);
	pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
	/* a stop signal delivered to a thread asleep in the kernel would wait with it */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, &ta, job_main, j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&ta);
	if (rc) { /* no thread to spare: the call, unbounded, on this one */
		job_free(j);
		ops->call(arg);
		return NULL;
	}
	return j;
}

int bounded_wait(struct bounded_job *j, uint64_t deadline_ns, volatile const sig_atomic_t *stop)
{
	int rc = 0;

	if (!j) /* bounded_start made the call itself */
		return 0;
	pthread_mutex_lock(&j->lock);
	for (;;) {
		uint64_t now = time_now_ns(), until = deadline_ns;
		struct timespec ts;

		if (j->done)
			break;
		if (stop && *stop && rc != -EINTR) { /* stopped: the grace ends the wait */
			rc = -EINTR;
			deadline_ns = GS_MIN(deadline_ns, now + j->ops->stop_grace_ns);
			until = deadline_ns;
		}
		if (now >= deadline_ns) {
			rc = rc ? rc : -ETIMEDOUT;
			break;
		}
		if (stop && rc != -EINTR)
			until = GS_MIN(until, now + BOUNDED_STOP_POLL_NS);
		ts = time_ns_ts(until);
		pthread_cond_timedwait(&j->cond, &j->lock, &ts);
	}
	if (!j->done) {
		/* under the lock: the thread cannot see done before abandoned is set, so arg
		 * is still whole for abandon() */
		if (j->ops->abandon)
			j->ops->abandon(j->arg);
		j->abandoned = true;
		__atomic_add_fetch(&pending, 1, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&j->lock);
		return rc;
	}
	pthread_mutex_unlock(&j->lock);
	job_free(j);
	return 0;
}

int bounded_run(const struct bounded_ops *ops, void *arg, uint64_t deadline_ns,
		volatile const sig_atomic_t *stop)
{
	return bounded_wait(bounded_start(ops, arg), deadline_ns, stop);
}
