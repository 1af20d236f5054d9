/*
 * Test-only harness shared by the host transport tests: fork N rank processes that
 * open one transport, all-gather endpoints through socketpairs to the parent, and run
 * a body. Children never use cmocka (its longjmp would resume the runner in the
 * child): TP_CHECK prints and exits non-zero, and the parent asserts exit codes.
 */
#ifndef GS_TRANSPORT_TP_TEST_UTIL_H
#define GS_TRANSPORT_TP_TEST_UTIL_H

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/transport.h"
#include "util/timeutil.h"

#define TPT_MAX_RANKS 4

#define TP_CHECK(cond)                                                                             \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank check failed %s:%d: %s\n", __FILE__, __LINE__,       \
				#cond);                                                            \
			_exit(1);                                                                  \
		}                                                                                  \
	} while (0)

struct tpt_rank {
	int rank;
	int nranks;
	int sock; /* to the parent */
	struct transport t;
	struct transport_env env;
	struct transport_opts opts;
	int host_of_rank[TPT_MAX_RANKS];
	bool use_peer[TPT_MAX_RANKS];
	volatile int abort_flag;
};

typedef int (*tpt_body)(struct tpt_rank *r, void *arg);

/* Child side: all-gather one TRANSPORT_EP_MAX record per rank through the parent. */
static inline int tpt_allgather(struct tpt_rank *r, const void *mine, void *all)
{
	size_t want = (size_t)r->nranks * TRANSPORT_EP_MAX, got = 0;

	if (write(r->sock, mine, TRANSPORT_EP_MAX) != TRANSPORT_EP_MAX)
		return -EIO;
	while (got < want) {
		ssize_t n = read(r->sock, (char *)all + got, want - got);

		if (n <= 0)
			return -EIO;
		got += (size_t)n;
	}
	return 0;
}

static inline int tpt_barrier(struct tpt_rank *r)
{
	static char mine[TRANSPORT_EP_MAX], all[TPT_MAX_RANKS * TRANSPORT_EP_MAX];

	return tpt_allgather(r, mine, all);
}

/* Poll until one completion arrives or timeout; returns poll's result (1, or -errno). */
static inline int tpt_wait1(struct tpt_rank *r, struct tp_completion *c, int timeout_ms)
{
	uint64_t end = time_now_ns() + (uint64_t)timeout_ms * 1000000ull;

	for (;;) {
		int n = r->t.ops->poll(&r->t, c, 1);

		if (n != 0)
			return n;
		if (time_now_ns() > end)
			return -ETIMEDOUT;
		sched_yield();
	}
}

static inline void tpt_child(struct tpt_rank *r, tpt_body body, void *arg)
{
	static char ep[TRANSPORT_EP_MAX], eps[TPT_MAX_RANKS * TRANSPORT_EP_MAX];
	size_t len = sizeof(ep);
	int rc;

	alarm(60); /* a hung rank dies instead of hanging the suite */
	memset(ep, 0, sizeof(ep));
	TP_CHECK(r->t.ops->open(&r->t, &r->env) == 0);
	TP_CHECK(r->t.ops->endpoint(&r->t, ep, &len) == 0 && len <= TRANSPORT_EP_MAX);
	TP_CHECK(tpt_allgather(r, ep, eps) == 0);
	TP_CHECK(r->t.ops->connect(&r->t, eps) == 0);
	rc = body(r, arg);
	r->t.ops->close(&r->t);
	_exit(rc);
}

/*
 * Parent side: fork nranks children and relay all-gathers until every child hung up.
 * status[i] receives each child's wait status.
 */
static inline void tpt_run(const struct transport_ops *ops, int nranks,
			   const struct transport_opts *opts, int timeout_ms, tpt_body body,
			   void *arg, int *status)
{
	static uint64_t seq;
	int socks[TPT_MAX_RANKS];
	pid_t pids[TPT_MAX_RANKS];
	char *all = calloc((size_t)nranks, TRANSPORT_EP_MAX);
	uint64_t job = ((uint64_t)getpid() << 20) ^ (++seq << 8) ^ (time_now_ns() & 0xff);

	for (int i = 0; i < nranks; i++) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
			abort();
		pids[i] = fork();
		if (pids[i] == 0) {
			struct tpt_rank *r = calloc(1, sizeof(*r));

			for (int j = 0; j < i; j++)
				close(socks[j]);
			close(sv[0]);
			r->rank = i;
			r->nranks = nranks;
			r->sock = sv[1];
			r->opts = *opts;
			for (int j = 0; j < nranks; j++) {
				r->host_of_rank[j] = 0;
				r->use_peer[j] = j != i;
			}
			r->env = (struct transport_env){.rank = i,
							.nranks = nranks,
							.local_rank = i,
							.host_of_rank = r->host_of_rank,
							.use_peer = r->use_peer,
							.job_id = job,
							.timeout_ms = timeout_ms,
							.opts = &r->opts,
							.numa_node = -1,
							.abort_flag = &r->abort_flag};
			r->t.ops = ops;
			tpt_child(r, body, arg);
		}
		close(sv[1]);
		socks[i] = sv[0];
	}
	for (bool live = true; live;) {
		for (int i = 0; i < nranks && live; i++) {
			size_t got = 0;

			while (got < TRANSPORT_EP_MAX) {
				ssize_t n = read(socks[i], all + i * TRANSPORT_EP_MAX + got,
						 TRANSPORT_EP_MAX - got);

				if (n <= 0) {
					live = false;
					break;
				}
				got += (size_t)n;
			}
		}
		for (int i = 0; i < nranks && live; i++)
			if (write(socks[i], all, (size_t)nranks * TRANSPORT_EP_MAX) < 0)
				live = false;
	}
	for (int i = 0; i < nranks; i++)
		close(socks[i]);
	for (int i = 0; i < nranks; i++)
		waitpid(pids[i], &status[i], 0);
	free(all);
}

/* Byte pattern unique to (src, dst, tag, offset): catches misplaced and torn data. */
static inline uint8_t tpt_byte(int src, int dst, uint64_t tag, size_t i)
{
	return (uint8_t)(src * 131 + dst * 17 + tag * 7 + i + (i >> 8) * 3);
}

/* In one process: rank `me` connects while the other rank opened but never connects;
 * returns connect's result and its duration in *ms. */
static inline int tpt_connect_alone(const struct transport_ops *ops, int me, int timeout_ms,
				    const struct transport_opts *o, double *ms)
{
	static char eps[2 * TRANSPORT_EP_MAX];
	int hosts[2] = {0, 0};
	bool use0[2] = {false, true}, use1[2] = {true, false};
	struct transport_env env[2];
	struct transport t[2] = {{.ops = ops}, {.ops = ops}};
	uint64_t job = ((uint64_t)getpid() << 20) | 0xfff00, t0;
	int rc;

	for (int i = 0; i < 2; i++) {
		size_t len = TRANSPORT_EP_MAX;

		env[i] = (struct transport_env){.rank = i,
						.nranks = 2,
						.local_rank = i,
						.host_of_rank = hosts,
						.use_peer = i ? use1 : use0,
						.job_id = job,
						.timeout_ms = timeout_ms,
						.opts = o,
						.numa_node = -1};
		if (ops->open(&t[i], &env[i]) ||
		    ops->endpoint(&t[i], eps + i * TRANSPORT_EP_MAX, &len))
			return -EIO;
	}
	t0 = time_now_ns();
	rc = ops->connect(&t[me], eps);
	*ms = (time_now_ns() - t0) / 1e6;
	ops->close(&t[0]);
	ops->close(&t[1]);
	return rc;
}

#endif
