/*
 * Bounded library calls (util/callbound.h): the caller's group as one bounded_run job whose
 * thread carries the note of the call under way, and the stop signals around the wait as
 * fsbound takes them (fsbound_stop.c), so that a command ends alike whichever it waited on.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/bounded.h"
#include "util/callbound.h"
#include "util/fsbound.h"
#include "util/fsbound_int.h"
#include "util/timeutil.h"
#include "util/units.h"

struct cb_job {
	void (*fn)(void *arg);
	void (*drop)(void *arg);
	void *arg;
	/* where it is: set on the thread, read by abandon at the deadline */
	pthread_mutex_t lock;
	const char *op;            /* NULL before the first note */
	char obj[64];
	/* the caller's, valid until bounded_run returns: abandon fills it */
	struct callbound_at *at;
};

/* The group this thread runs, NULL on any other thread. */
static __thread struct cb_job *cb_cur;

bool callbound_test_hang(const char *op)
{
	const char *e = getenv("GRADSYNC_TEST_HANG");
	size_t n = strlen(op);

	/* a comma-separated list of call names, each matched whole */
	for (; e && *e; e = strchr(e, ',') ? strchr(e, ',') + 1 : NULL)
		if (!strncmp(e, op, n) && (e[n] == ',' || !e[n]))
			return true;
	return false;
}

void callbound_note(const char *op, const char *obj)
{
	struct cb_job *j = cb_cur;

	if (!j)
		return;
	pthread_mutex_lock(&j->lock);
	j->op = op;
	snprintf(j->obj, sizeof(j->obj), "%s", obj);
	pthread_mutex_unlock(&j->lock);
	/* the test hook's wedged driver: asleep for good, every signal blocked on this
	 * thread (bounded.c); the process's exit ends it */
	while (callbound_test_hang(op))
		time_sleep_ns(3600 * 1000000000ull);
}

static void job_call(void *arg)
{
	struct cb_job *j = arg;

	cb_cur = j;
	j->fn(j->arg);
	cb_cur = NULL;
}

static void job_abandon(void *arg)
{
	struct cb_job *j = arg;

	pthread_mutex_lock(&j->lock);
	if (j->op) {
		j->at->op = j->op;
		snprintf(j->at->obj, sizeof(j->at->obj), "%s", j->obj);
	}
	pthread_mutex_unlock(&j->lock);
}

static void job_free(struct cb_job *j)
{
	pthread_mutex_destroy(&j->lock);
	free(j);
}

/* On the thread, when a call given up on returns at last. */
static void job_drop(void *arg)
{
	struct cb_job *j = arg;

	j->drop(j->arg);
	job_free(j);
}

static const struct bounded_ops job_ops = {
	.call = job_call, .abandon = job_abandon, .drop = job_drop,
	/* a call about to return (a device's attributes) hands its results back */
	.stop_grace_ns = FSB_STOP_GRACE_NS,
};

int callbound_run(void (*fn)(void *arg), void *arg, void (*drop)(void *arg), const char *what,
		  uint64_t timeout_ns, struct callbound_at *at, char *why, size_t whylen)
{
	struct cb_job *j;
	struct fsb_stop stop;
	char t[32];
	int ret, sig;

	at->op = "start"; /* given up on before its first note: what it was to work on */
	snprintf(at->obj, sizeof(at->obj), "%s", what);
	if (cb_cur) { /* a group within a group: the outer one's thread and bound */
		fn(arg);
		return 0;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		drop(arg);
		snprintf(why, whylen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	ret = fsb_stop_begin(&stop, why, whylen);
	if (ret) { /* a stop signal fsbound took already: the command is ending */
		free(j);
		drop(arg);
		return ret;
	}
	j->fn = fn;
	j->drop = drop;
	j->arg = arg;
	j->at = at;
	pthread_mutex_init(&j->lock, NULL);
	ret = bounded_run(&job_ops, j, time_now_ns() + timeout_ns, stop.flag);
	sig = fsb_stop_end(&stop, ret);
	if (ret == -EINTR) {
		snprintf(why, whylen, "stopped by SIG%s while %s was pending",
			 sigabbrev_np(sig) ?: "?", at->op);
		return ret;
	}
	if (ret) {
		snprintf(why, whylen, "%s did not return within %s", at->op,
			 units_fmt_duration(timeout_ns, t, sizeof(t)));
		return ret;
	}
	job_free(j);
	return 0;
}
