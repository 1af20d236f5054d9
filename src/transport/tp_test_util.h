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

/* ---- bodies shared by tcp_test.c and shm_test.c ---- */

static const size_t tpt_sizes[] = {1, 7, 4093, 65536, 65537, 300001, 1048577, 8u << 20};
#define TPT_NSIZES (sizeof(tpt_sizes) / sizeof(tpt_sizes[0]))

enum tpt_order {
	TPT_RECV_FIRST, /* every receive posted before any send */
	TPT_SEND_FIRST, /* every send posted before any receive */
	TPT_MIXED,	/* receives in reverse tag order, interleaved with sends */
};

static inline int tpt_post_retry(struct tpt_rank *r, bool send, int peer, uint64_t tag,
				 struct tp_mr *mr, size_t off, size_t len, uint64_t cookie,
				 struct tp_completion *cs, int *ncs)
{
	for (;;) {
		int rc = send ? r->t.ops->post_send(&r->t, peer, tag, mr, off, len, cookie)
			      : r->t.ops->post_recv(&r->t, peer, tag, mr, off, len, cookie);
		int n;

		if (rc != -EAGAIN)
			return rc;
		n = r->t.ops->poll(&r->t, cs + *ncs, 16);
		if (n < 0)
			return n;
		*ncs += n;
	}
}

/* All-to-all of every size in tpt_sizes, posted in *(enum tpt_order *)arg order. */
static inline int tpt_body_exchange(struct tpt_rank *r, void *arg)
{
	enum tpt_order order = *(enum tpt_order *)arg;
	int me = r->rank, n = r->nranks, ncs = 0, want = 2 * (n - 1) * (int)TPT_NSIZES;
	size_t offs[TPT_NSIZES + 1], per_peer;
	struct tp_completion *cs = calloc((size_t)want + 32, sizeof(*cs));
	struct tp_mr *smr, *rmr;
	char *sbuf, *rbuf;
	uint64_t end;

	offs[0] = 0;
	for (size_t k = 0; k < TPT_NSIZES; k++)
		offs[k + 1] = offs[k] + tpt_sizes[k];
	per_peer = offs[TPT_NSIZES];
	sbuf = malloc(per_peer * (size_t)n);
	rbuf = calloc(per_peer, (size_t)n);
	TP_CHECK(sbuf && rbuf && cs);
	for (int p = 0; p < n; p++)
		for (size_t k = 0; k < TPT_NSIZES; k++)
			for (size_t i = 0; i < tpt_sizes[k]; i++)
				sbuf[p * per_peer + offs[k] + i] =
				    (char)tpt_byte(me, p, 1000u * order + k, i);
	TP_CHECK(r->t.ops->mr_reg(&r->t, sbuf, per_peer * n, MEM_HOST, &smr) == 0);
	TP_CHECK(r->t.ops->mr_reg(&r->t, rbuf, per_peer * n, MEM_HOST, &rmr) == 0);

	for (int pass = 0; pass < 2; pass++) {
		for (int p = 0; p < n; p++) {
			if (p == me)
				continue;
			for (size_t j = 0; j < TPT_NSIZES; j++) {
				bool send = (order == TPT_SEND_FIRST) == (pass == 0);
				size_t k = j;

				if (order == TPT_MIXED) {
					/* pass 0: recv of reverse index then send of index j */
					if (pass == 1)
						break;
					k = TPT_NSIZES - 1 - j;
					TP_CHECK(tpt_post_retry(r, false, p, 1000u * order + k, rmr,
								p * per_peer + offs[k],
								tpt_sizes[k], (uint64_t)p << 8 | k,
								cs, &ncs) == 0);
					k = j;
					send = true;
				}
				TP_CHECK(tpt_post_retry(r, send, p, 1000u * order + k,
							send ? smr : rmr, p * per_peer + offs[k],
							tpt_sizes[k],
							(uint64_t)send << 16 | (uint64_t)p << 8 | k,
							cs, &ncs) == 0);
			}
		}
	}
	end = time_now_ns() + 20000000000ull;
	while (ncs < want) {
		int got = r->t.ops->poll(&r->t, cs + ncs, want - ncs);

		TP_CHECK(got >= 0);
		ncs += got;
		TP_CHECK(time_now_ns() < end);
		if (!got)
			sched_yield();
	}
	for (int i = 0; i < want; i++) {
		size_t k = cs[i].cookie & 0xff;

		TP_CHECK(cs[i].status == 0);
		TP_CHECK(cs[i].len == tpt_sizes[k]);
		TP_CHECK(cs[i].is_send == !!(cs[i].cookie >> 16));
		TP_CHECK(cs[i].peer == (int)((cs[i].cookie >> 8) & 0xff));
	}
	for (int p = 0; p < n; p++)
		for (size_t k = 0; p != me && k < TPT_NSIZES; k++)
			for (size_t i = 0; i < tpt_sizes[k]; i++)
				TP_CHECK((uint8_t)rbuf[p * per_peer + offs[k] + i] ==
					 tpt_byte(p, me, 1000u * order + k, i));
	r->t.ops->mr_dereg(&r->t, smr);
	r->t.ops->mr_dereg(&r->t, rmr);
	free(sbuf);
	free(rbuf);
	free(cs);
	return tpt_barrier(r) == 0 ? 0 : 1;
}

/* 10000 small messages on 5 reused tags, more than the request pools hold (-EAGAIN path):
 * receives with one tag must match sends with that tag in post order. */
static inline int tpt_body_many(struct tpt_rank *r, void *arg)
{
	enum { N = 10000, MAXLEN = 300 };
	bool sender = r->rank == 0;
	int peer = 1 - r->rank, ncs = 0;
	char *buf = calloc(N, MAXLEN);
	struct tp_completion *cs = calloc(N + 32, sizeof(*cs));
	struct tp_mr *mr;
	uint64_t end;

	(void)arg;
	TP_CHECK(buf && cs);
	for (size_t i = 0; sender && i < N; i++)
		for (size_t k = 0; k < MAXLEN; k++)
			buf[i * MAXLEN + k] = (char)tpt_byte(0, 1, i, k);
	TP_CHECK(r->t.ops->mr_reg(&r->t, buf, (size_t)N * MAXLEN, MEM_HOST, &mr) == 0);
	for (size_t i = 0; i < N; i++)
		TP_CHECK(tpt_post_retry(r, sender, peer, i % 5, mr, i * MAXLEN, i * 37 % MAXLEN + 1,
					i, cs, &ncs) == 0);
	end = time_now_ns() + 20000000000ull;
	while (ncs < N) {
		int got = r->t.ops->poll(&r->t, cs + ncs, N - ncs);

		TP_CHECK(got >= 0 && time_now_ns() < end);
		ncs += got;
		if (!got)
			sched_yield();
	}
	for (int i = 0; i < N; i++)
		TP_CHECK(cs[i].status == 0 && cs[i].len == cs[i].cookie * 37 % MAXLEN + 1);
	for (size_t i = 0; !sender && i < N; i++)
		for (size_t k = 0; k < i * 37 % MAXLEN + 1; k++)
			TP_CHECK((uint8_t)buf[i * MAXLEN + k] == tpt_byte(0, 1, i, k));
	r->t.ops->mr_dereg(&r->t, mr);
	free(buf);
	free(cs);
	return tpt_barrier(r) == 0 ? 0 : 1;
}

/* Rank 0 sends 100 B where rank 1 posted 200 B (-EMSGSIZE on both), then a good one. */
static inline int tpt_body_msgsize(struct tpt_rank *r, void *arg)
{
	static char buf[256];
	struct tp_completion c;
	struct tp_mr *mr;
	bool sender = r->rank == 0;
	int peer = 1 - r->rank;

	(void)arg;
	for (int i = 0; i < 64; i++)
		buf[i] = sender ? (char)(i * 3 + 1) : 0;
	TP_CHECK(r->t.ops->mr_reg(&r->t, buf, sizeof(buf), MEM_HOST, &mr) == 0);
	if (sender) {
		TP_CHECK(r->t.ops->post_send(&r->t, peer, 5, mr, 0, 100, 5) == 0);
		TP_CHECK(r->t.ops->post_send(&r->t, peer, 6, mr, 0, 64, 6) == 0);
	} else {
		TP_CHECK(r->t.ops->post_recv(&r->t, peer, 5, mr, 0, 200, 5) == 0);
		TP_CHECK(r->t.ops->post_recv(&r->t, peer, 6, mr, 0, 64, 6) == 0);
	}
	for (int i = 0; i < 2; i++) {
		TP_CHECK(tpt_wait1(r, &c, 5000) == 1);
		TP_CHECK(c.status == (c.cookie == 5 ? -EMSGSIZE : 0));
	}
	for (int i = 0; !sender && i < 64; i++)
		TP_CHECK(buf[i] == (char)(i * 3 + 1));
	r->t.ops->mr_dereg(&r->t, mr);
	return tpt_barrier(r) == 0 ? 0 : 1;
}

struct tpt_kill {
	int timeout_ms;
	bool midway; /* die in the middle of a 64 MiB transfer, not before it */
};

/* Rank 1 dies (idle, or midway through a send); rank 0's poll must fail with -ECONNRESET
 * well within the timeout. */
static inline int tpt_body_killed(struct tpt_rank *r, void *arg)
{
	const struct tpt_kill *k = arg;
	size_t len = k->midway ? 64u << 20 : 4096;
	char *buf = calloc(1, len);
	struct tp_completion c;
	struct tp_mr *mr;
	uint64_t t0;
	int rc;

	TP_CHECK(buf && r->t.ops->mr_reg(&r->t, buf, len, MEM_HOST, &mr) == 0);
	TP_CHECK(tpt_barrier(r) == 0);
	if (r->rank == 1 && k->midway) {
		TP_CHECK(r->t.ops->post_send(&r->t, 0, 1, mr, 0, len, 1) == 0);
		t0 = time_now_ns();
		while (time_now_ns() - t0 < 2000000) /* move a few MiB, never all 64 */
			TP_CHECK(r->t.ops->poll(&r->t, &c, 1) == 0);
	}
	if (r->rank == 1)
		raise(SIGKILL);
	t0 = time_now_ns();
	rc = r->t.ops->post_recv(&r->t, 1, 1, mr, 0, len, 1);
	TP_CHECK(rc == 0 || rc == -ECONNRESET);
	if (rc == 0)
		rc = tpt_wait1(r, &c, k->timeout_ms);
	fprintf(stderr, "killed peer (%s) seen after %.1f ms: %s\n", k->midway ? "midway" : "idle",
		(time_now_ns() - t0) / 1e6, strerror(-rc));
	TP_CHECK(rc == -ECONNRESET);
	TP_CHECK(time_now_ns() - t0 < (uint64_t)k->timeout_ms * 1000000ull);
	r->t.ops->mr_dereg(&r->t, mr);
	free(buf);
	return 0;
}

/* Rank 0 waits on a receive that never comes and raises its abort flag: poll fails. */
static inline int tpt_body_abort(struct tpt_rank *r, void *arg)
{
	static char buf[64];
	struct tp_completion c;
	struct tp_mr *mr;
	uint64_t t0;
	int rc = 0;

	(void)arg;
	TP_CHECK(r->t.ops->mr_reg(&r->t, buf, sizeof(buf), MEM_HOST, &mr) == 0);
	if (r->rank == 0) {
		TP_CHECK(r->t.ops->post_recv(&r->t, 1, 9, mr, 0, sizeof(buf), 9) == 0);
		TP_CHECK(tpt_wait1(r, &c, 50) == -ETIMEDOUT);
		r->abort_flag = 1;
		t0 = time_now_ns();
		while (rc == 0 && time_now_ns() - t0 < 2000000000ull)
			rc = r->t.ops->poll(&r->t, &c, 1);
		TP_CHECK(rc == -ECANCELED);
		TP_CHECK(r->t.ops->poll(&r->t, &c, 1) == -ECANCELED);
	}
	r->t.ops->mr_dereg(&r->t, mr);
	return tpt_barrier(r) == 0 ? 0 : 1;
}

/* 64 MiB point to point, one way (acknowledged) and both ways at once; printed only. */
static inline int tpt_body_bw(struct tpt_rank *r, void *arg)
{
	const size_t len = 64u << 20;
	const int iters = 5;
	const char *name = arg;
	int peer = 1 - r->rank;
	char *sbuf = malloc(len), *rbuf = malloc(len);
	struct tp_completion c;
	struct tp_mr *smr, *rmr;
	uint64_t t0, t_uni = 0, t_bi = 0;

	TP_CHECK(sbuf && rbuf);
	memset(sbuf, r->rank + 1, len);
	memset(rbuf, 0, len);
	TP_CHECK(r->t.ops->mr_reg(&r->t, sbuf, len, MEM_HOST, &smr) == 0);
	TP_CHECK(r->t.ops->mr_reg(&r->t, rbuf, len, MEM_HOST, &rmr) == 0);
	for (int it = 0; it <= iters; it++) {
		TP_CHECK(tpt_barrier(r) == 0);
		t0 = time_now_ns();
		if (r->rank == 0) {
			TP_CHECK(r->t.ops->post_send(&r->t, peer, 2 * it, smr, 0, len, 0) == 0);
			TP_CHECK(r->t.ops->post_recv(&r->t, peer, 2 * it + 1, rmr, 0, 8, 1) == 0);
		} else {
			TP_CHECK(r->t.ops->post_recv(&r->t, peer, 2 * it, rmr, 0, len, 0) == 0);
			TP_CHECK(tpt_wait1(r, &c, 20000) == 1 && c.status == 0);
			TP_CHECK(r->t.ops->post_send(&r->t, peer, 2 * it + 1, smr, 0, 8, 1) == 0);
		}
		for (int k = r->rank == 0 ? 0 : 1; k < 2; k++)
			TP_CHECK(tpt_wait1(r, &c, 20000) == 1 && c.status == 0);
		if (it)
			t_uni += time_now_ns() - t0;
	}
	for (int it = 0; it <= iters; it++) {
		TP_CHECK(tpt_barrier(r) == 0);
		t0 = time_now_ns();
		TP_CHECK(r->t.ops->post_recv(&r->t, peer, 100 + it, rmr, 0, len, 0) == 0);
		TP_CHECK(r->t.ops->post_send(&r->t, peer, 100 + it, smr, 0, len, 1) == 0);
		for (int k = 0; k < 2; k++)
			TP_CHECK(tpt_wait1(r, &c, 20000) == 1 && c.status == 0);
		if (it)
			t_bi += time_now_ns() - t0;
	}
	TP_CHECK((uint8_t)rbuf[len - 1] == (uint8_t)(peer + 1));
	if (r->rank == 0) {
		struct tp_stats st;

		r->t.ops->stats(&r->t, &st);
		printf("%s 2 ranks 64 MiB: one way %.2f GB/s, both ways %.2f GB/s per direction, "
		       "transport CPU %.2f s/GB\n",
		       name, (double)len * iters / t_uni, (double)len * iters / t_bi,
		       st.cpu_ns / 1e9 / ((st.bytes_sent + st.bytes_recv) / 1e9));
		fflush(stdout); /* children leave through _exit() */
	}
	r->t.ops->mr_dereg(&r->t, smr);
	r->t.ops->mr_dereg(&r->t, rmr);
	free(sbuf);
	free(rbuf);
	return tpt_barrier(r) == 0 ? 0 : 1;
}

#endif
