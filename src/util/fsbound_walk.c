/*
 * Bounded walks (util/fsbound.h): the caller's function as one job of fsbound.c's
 * runner, and the notes of where it is, made from the helpers it calls (topo/'s and
 * util/sysread.c's readers), which reach the job through the thread it runs on: the
 * walk is its thread, and these helpers serve callers outside walks too.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/fsbound.h"
#include "util/fsbound_int.h"

/* The walk this thread runs, NULL on any other thread. */
static __thread struct fsb_job *walk_cur;

void fsb_note(const char *op, const char *obj)
{
	struct fsb_job *j = walk_cur;
	size_t n;

	if (!j)
		return;
	/* a walk makes thousands: a copy, no printf */
	n = strnlen(obj, sizeof(j->note) - 1);
	pthread_mutex_lock(&j->at_lock);
	memcpy(j->note, obj, n);
	j->note[n] = '\0';
	j->at_op = op;
	j->at_obj = j->note;
	pthread_mutex_unlock(&j->at_lock);
}

static int job_walk(struct fsb_job *j)
{
	walk_cur = j;
	j->walk_fn(j->walk_arg);
	walk_cur = NULL;
	return 0;
}

int fsb_walk(void (*fn)(void *arg), void *arg, void (*drop)(void *arg), const char *what,
	     uint64_t timeout_ns, char *why, size_t whylen)
{
	struct fsb_job *j;
	int ret;

	if (walk_cur) { /* a walk within a walk: the outer one's thread and bound */
		fn(arg);
		return 0;
	}
	j = fsb_job_new(job_walk, why, whylen);
	if (!j) {
		drop(arg);
		return -ENOMEM;
	}
	j->walk_fn = fn;
	j->walk_drop = drop;
	j->walk_arg = arg;
	/* the name a walk given up on before its first note goes by; cut, it is still
	 * the right one to name */
	snprintf(j->path, sizeof(j->path), "%s", what);
	ret = fsb_job_run(j, timeout_ns, why, whylen);
	if (ret)
		return ret;
	j->walk_arg = NULL; /* the caller's again */
	fsb_job_free(j);
	return 0;
}
