/*
 * Bounded library calls (util/callbound.h): each of the caller's groups as one bounded job
 * (all started, then waited for against one deadline) whose thread carries the note of the
 * call under way, and the stop signals around the wait as
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
	if (obj)
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
	if (j->op)
		j->at->op = j->op;
	if (*j->obj) /* else what it works on: notes without an object so far */
		snprintf(j->at->obj, sizeof(j->at->obj), "%s", j->obj);
	pthread_mutex_unlock(&j->lock);
}

static void cb_job_free(struct cb_job *j)
{
	pthread_mutex_destroy(&j->lock);
	free(j);
}

/* On the thread, when a call given up on returns at last. */
static void job_drop(void *arg)
{
	struct cb_job *j = arg;

	j->drop(j->arg);
	cb_job_free(j);
}

static const struct bounded_ops job_ops = {
	.call = job_call, .abandon = job_abandon, .drop = job_drop,
	/* a call about to return (a device's attributes) hands its results back */
	.stop_grace_ns = FSB_STOP_GRACE_NS,
};

/* g's why for an outcome other than 0 (its at filled by abandon). */
static void group_why(struct callbound_group *g, int sig, uint64_t timeout_ns)
{
	char t[32];
	int n;

	if (g->ret == -EINTR) {
		snprintf(g->why, sizeof(g->why), "stopped by SIG%s while %s was pending",
			 sigabbrev_np(sig) ?: "?", g->at.op);
	} else if (g->ret == -ETIMEDOUT) {
		n = snprintf(g->why, sizeof(g->why), "%s did not return within %s", g->at.op,
			     units_fmt_duration(timeout_ns, t, sizeof(t)));
		if (g->hint && n > 0 && (size_t)n < sizeof(g->why))
			snprintf(g->why + n, sizeof(g->why) - (size_t)n, " (%s)", g->hint);
	}
}

/* g on a thread of its own: its job to wait for (NULL: it ran here), or g->ret -ENOMEM
 * with g->arg dropped. */
static struct bounded_job *group_start(struct callbound_group *g, struct cb_job **out)
{
	struct cb_job *j = calloc(1, sizeof(*j));

	*out = j;
	if (!j || !g->arg) { /* no memory for the job, or for the group's own arg */
		free(j);
		*out = NULL;
		if (g->arg)
			g->drop(g->arg);
		g->ret = -ENOMEM;
		snprintf(g->why, sizeof(g->why), "%s", strerror(ENOMEM));
		return NULL;
	}
	j->fn = g->fn;
	j->drop = g->drop;
	j->arg = g->arg;
	j->at = &g->at;
	pthread_mutex_init(&j->lock, NULL);
	return bounded_start(&job_ops, j);
}

int callbound_run_all(struct callbound_group *g, size_t n, uint64_t timeout_ns)
{
	uint64_t deadline = time_now_ns() + timeout_ns;
	struct bounded_job **bj = calloc(n, sizeof(*bj));
	struct cb_job **cj = calloc(n, sizeof(*cj));
	char refused[160] = "";
	struct fsb_stop stop;
	int ret = 0, sig;
	size_t i;

	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		g[i].ret = 0;
		g[i].why[0] = '\0';
		g[i].at.op = "start"; /* given up on before its first note: what it works on */
		snprintf(g[i].at.obj, sizeof(g[i].at.obj), "%s", g[i].what);
	}
	if (cb_cur) { /* groups within a group: the outer one's thread and bound */
		for (i = 0; i < n; i++)
			g[i].fn(g[i].arg);
		goto out_free;
	}
	if (!bj || !cj)
		ret = -ENOMEM;
	else /* a stop signal fsbound took already: the command is ending */
		ret = fsb_stop_begin(&stop, refused, sizeof(refused));
	if (ret) {
		for (i = 0; i < n; i++) {
			if (g[i].arg)
				g[i].drop(g[i].arg);
			g[i].ret = ret;
			snprintf(g[i].why, sizeof(g[i].why), "%s",
				 ret == -EINTR ? refused : strerror(ENOMEM));
		}
		ret = ret == -EINTR ? ret : 0;
		goto out_free;
	}
	/* all started before any is waited for: each runs while the others are waited for */
	for (i = 0; i < n; i++)
		bj[i] = group_start(&g[i], &cj[i]);
	for (i = 0; i < n; i++) {
		if (g[i].ret) /* not started: ENOMEM */
			continue;
		/* once a stop ended one wait, the others had its grace too: taken if done */
		g[i].ret = bounded_wait(bj[i], ret ? time_now_ns() : deadline, stop.flag);
		if (g[i].ret == -EINTR)
			ret = -EINTR;
	}
	sig = fsb_stop_end(&stop, ret);
	for (i = 0; i < n; i++) {
		if (!g[i].ret)
			cb_job_free(cj[i]);
		else
			group_why(&g[i], sig, timeout_ns);
	}
out_free:
	free(cj);
	free(bj);
	return ret;
}

int callbound_run_group(struct callbound_group *g, uint64_t timeout_ns, struct callbound_at *at,
			char *why, size_t whylen)
{
	callbound_run_all(g, 1, timeout_ns);
	*at = g->at;
	snprintf(why, whylen, "%s", g->why);
	return g->ret;
}

int callbound_run(void (*fn)(void *arg), void *arg, void (*drop)(void *arg), const char *what,
		  uint64_t timeout_ns, struct callbound_at *at, char *why, size_t whylen)
{
	struct callbound_group g = { .fn = fn, .arg = arg, .drop = drop, .what = what };

	return callbound_run_group(&g, timeout_ns, at, why, whylen);
}
