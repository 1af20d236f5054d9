/*
 * Test-only cases shared by the host transport tests (tcp_test.c, shm_test.c,
 * cudaipc_test.c): bodies run by the forked ranks of tp_test_util.h's harness, and the
 * checks around them. Several take their buffer and memory kind, so cudaipc runs them
 * on its emulated device memory.
 */
#ifndef GS_TRANSPORT_TP_TEST_CASES_H
#define GS_TRANSPORT_TP_TEST_CASES_H

#include <dirent.h>

#include "transport/tp_test_util.h"

static const size_t tpt_sizes[] = {1, 7, 4093, 65536, 65537, 300001, 1048577, 8u << 20};
#define TPT_NSIZES (sizeof(tpt_sizes) / sizeof(tpt_sizes[0]))

enum tpt_order {
	TPT_RECV_FIRST, /* every receive posted before any send */
	TPT_SEND_FIRST, /* every send posted before any receive */
	TPT_MIXED,	/* receives in reverse tag order, interleaved with sends */
};

/* The end of an exchange body: both registrations and buffers go, then the ranks meet. */
static inline int tpt_exchange_end(struct tpt_rank *r, struct tp_mr *smr, struct tp_mr *rmr,
				   void *sbuf, void *rbuf, void *cs)
{
	r->t.ops->mr_dereg(&r->t, smr);
	r->t.ops->mr_dereg(&r->t, rmr);
	free(sbuf);
	free(rbuf);
	free(cs);
	return tpt_barrier(r) == 0 ? 0 : 1;
}

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

/* Poll until *ncs completions are in cs (20 s at most); 0 or the error. */
static inline int tpt_wait_n(struct tpt_rank *r, struct tp_completion *cs, int *ncs, int want)
{
	uint64_t end = time_now_ns() + 20000000000ull;

	while (*ncs < want) {
		int got = r->t.ops->poll(&r->t, cs + *ncs, want - *ncs);

		if (got < 0)
			return got;
		*ncs += got;
		if (time_now_ns() > end)
			return -ETIMEDOUT;
		if (!got)
			sched_yield();
	}
	return 0;
}

/*
 * One receive on tag 7 stays unmatched while n receives on tag 8 are announced and
 * finish around it (announce order != finish order; n beyond the CTS queue's capacity);
 * then tag 7 is sent and must land. buf holds (n + 1) * TPT_HELD_LEN bytes of kind.
 */
#define TPT_HELD_LEN 64
static inline int tpt_held_tag(struct tpt_rank *r, char *buf, enum mem_kind kind, int n)
{
	bool sender = r->rank == 0;
	int peer = 1 - r->rank, ncs = 0, want = sender ? n : n + 1;
	size_t bytes = (size_t)(n + 1) * TPT_HELD_LEN;
	struct tp_completion *cs = calloc((size_t)n + 32, sizeof(*cs));
	struct tp_mr *mr;

	TP_CHECK(cs);
	for (size_t i = 0; sender && i < bytes; i++)
		buf[i] = (char)tpt_byte(0, 1, i / TPT_HELD_LEN, i % TPT_HELD_LEN);
	TP_CHECK(r->t.ops->mr_reg(&r->t, buf, bytes, kind, &mr) == 0);
	if (!sender)
		TP_CHECK(tpt_post_retry(r, false, peer, 7, mr, (size_t)n * TPT_HELD_LEN,
					TPT_HELD_LEN, (uint64_t)n, cs, &ncs) == 0);
	for (int i = 0; i < n; i++)
		TP_CHECK(tpt_post_retry(r, sender, peer, 8, mr, (size_t)i * TPT_HELD_LEN,
					TPT_HELD_LEN, (uint64_t)i, cs, &ncs) == 0);
	if (sender) {
		TP_CHECK(tpt_wait_n(r, cs, &ncs, n) == 0); /* all of tag 8 land before tag 7 */
		TP_CHECK(tpt_post_retry(r, true, peer, 7, mr, (size_t)n * TPT_HELD_LEN,
					TPT_HELD_LEN, (uint64_t)n, cs, &ncs) == 0);
		want = n + 1;
	}
	TP_CHECK(tpt_wait_n(r, cs, &ncs, want) == 0);
	for (int i = 0; i < want; i++)
		TP_CHECK(cs[i].status == 0 && cs[i].len == TPT_HELD_LEN);
	TP_CHECK(cs[want - 1].cookie == (uint64_t)n); /* tag 7 finished last */
	for (size_t i = 0; !sender && i < bytes; i++)
		TP_CHECK((uint8_t)buf[i] == tpt_byte(0, 1, i / TPT_HELD_LEN, i % TPT_HELD_LEN));
	r->t.ops->mr_dereg(&r->t, mr);
	free(cs);
	return tpt_barrier(r) == 0 ? 0 : 1;
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
	return tpt_exchange_end(r, smr, rmr, sbuf, rbuf, cs);
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

/* 100 B sent where 200 B were posted: -EMSGSIZE on the receive and send_status on the
 * send (-EMSGSIZE, or 0 where a small send completes once written: tcp), then a good
 * one; a post beyond the region is refused. buf (size >= 256, in memory of kind) is the
 * region. */
static inline int tpt_msgsize(struct tpt_rank *r, char *buf, enum mem_kind kind, int send_status)
{
	struct tp_completion c;
	struct tp_mr *mr;
	bool sender = r->rank == 0;
	int peer = 1 - r->rank;

	for (int i = 0; i < 64; i++)
		buf[i] = sender ? (char)(i * 3 + 1) : 0;
	TP_CHECK(r->t.ops->mr_reg(&r->t, buf, 256, kind, &mr) == 0);
	TP_CHECK(r->t.ops->post_send(&r->t, peer, 1, mr, 200, 100, 1) == -EINVAL); /* overrun */
	if (sender) {
		TP_CHECK(r->t.ops->post_send(&r->t, peer, 5, mr, 0, 100, 5) == 0);
		TP_CHECK(r->t.ops->post_send(&r->t, peer, 6, mr, 0, 64, 6) == 0);
	} else {
		TP_CHECK(r->t.ops->post_recv(&r->t, peer, 5, mr, 0, 200, 5) == 0);
		TP_CHECK(r->t.ops->post_recv(&r->t, peer, 6, mr, 0, 64, 6) == 0);
	}
	for (int i = 0; i < 2; i++) {
		TP_CHECK(tpt_wait1(r, &c, 5000) == 1);
		TP_CHECK(c.status == (c.cookie != 5 ? 0 : sender ? send_status : -EMSGSIZE));
	}
	for (int i = 0; !sender && i < 64; i++)
		TP_CHECK(buf[i] == (char)(i * 3 + 1));
	r->t.ops->mr_dereg(&r->t, mr);
	return tpt_barrier(r) == 0 ? 0 : 1;
}

/* arg: NULL, or the int the mismatched send completes with (tpt_msgsize) */
static inline int tpt_body_msgsize(struct tpt_rank *r, void *arg)
{
	static char buf[256];

	return tpt_msgsize(r, buf, MEM_HOST, arg ? *(const int *)arg : -EMSGSIZE);
}

/* Segments of this process's test jobs left in /dev/shm: /gradsync-<job>-..., job ids
 * start with our pid (tpt_run). */
static inline int tpt_count_segments(void)
{
	char prefix[64];
	struct dirent *d;
	DIR *dir = opendir("/dev/shm");
	int n = 0;

	snprintf(prefix, sizeof(prefix), "gradsync-%011llx", (unsigned long long)getpid());
	if (!dir)
		return 0;
	while ((d = readdir(dir)))
		n += strncmp(d->d_name, prefix, strlen(prefix)) == 0;
	closedir(dir);
	return n;
}

struct tpt_kill {
	int timeout_ms;
	bool midway; /* die in the middle of a 64 MiB transfer, not before it */
};

/* Rank 1 dies (idle, or midway through a send); rank 0's poll must fail with -ECONNRESET
 * well within the timeout. Midway is a race the test cannot win every time: where the
 * receiver copies on its own (shm's direct copy reads the sender's pages), a sender kept
 * off its CPU after its post can find the whole 64 MiB taken before it dies (seen on this
 * 2-core VM under load in most runs). Then the death is checked on a second receive, and
 * the run says so. */
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
		while (time_now_ns() - t0 < 2000000) { /* move a few MiB, rarely all 64 */
			rc = r->t.ops->poll(&r->t, &c, 1);
			TP_CHECK(rc == 0 || (rc == 1 && c.is_send && c.status == 0));
			if (rc == 1)
				break;
		}
	}
	if (r->rank == 1)
		raise(SIGKILL);
	t0 = time_now_ns();
	rc = r->t.ops->post_recv(&r->t, 1, 1, mr, 0, len, 1);
	TP_CHECK(rc == 0 || rc == -ECONNRESET);
	if (rc == 0)
		rc = tpt_wait1(r, &c, k->timeout_ms);
	if (k->midway && rc == 1 && c.status == 0 && c.len == len) {
		fprintf(stderr, "killed peer (midway): the whole message came before the kill; "
				"checking on a second receive\n");
		rc = r->t.ops->post_recv(&r->t, 1, 2, mr, 0, len, 2);
		TP_CHECK(rc == 0 || rc == -ECONNRESET);
		if (rc == 0)
			rc = tpt_wait1(r, &c, k->timeout_ms);
	}
	fprintf(stderr, "killed peer (%s) seen after %.1f ms: %s\n", k->midway ? "midway" : "idle",
		(time_now_ns() - t0) / 1e6, strerror(-rc));
	TP_CHECK(rc == -ECONNRESET);
	TP_CHECK(time_now_ns() - t0 < (uint64_t)k->timeout_ms * 1000000ull);
	r->t.ops->mr_dereg(&r->t, mr);
	free(buf);
	return 0;
}

/* Rank 0 waits on a receive that never comes and raises its abort flag: poll fails, and
 * keeps failing. buf: 64 bytes of kind. */
static inline int tpt_abort(struct tpt_rank *r, char *buf, enum mem_kind kind)
{
	struct tp_completion c;
	struct tp_mr *mr;
	uint64_t t0;
	int rc = 0;

	TP_CHECK(r->t.ops->mr_reg(&r->t, buf, 64, kind, &mr) == 0);
	if (r->rank == 0) {
		TP_CHECK(r->t.ops->post_recv(&r->t, 1, 9, mr, 0, 64, 9) == 0);
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

static inline int tpt_body_abort(struct tpt_rank *r, void *arg)
{
	static char buf[64];

	(void)arg;
	return tpt_abort(r, buf, MEM_HOST);
}

/*
 * A message that arrived before the job began to abort is still delivered: rank 1's send
 * completed (the peer that then died in its teardown), rank 0 polls only after the flag
 * went up. The poll hands over the receive, whole; the next poll reports the abort.
 */
static inline int tpt_body_abort_after_arrival(struct tpt_rank *r, void *arg)
{
	static char buf[64];
	struct tp_completion c = { 0 };
	struct tp_mr *mr;
	uint64_t t0;
	int rc = 0;

	(void)arg;
	memset(buf, r->rank == 1 ? 0x5c : 0, sizeof(buf));
	TP_CHECK(r->t.ops->mr_reg(&r->t, buf, sizeof(buf), MEM_HOST, &mr) == 0);
	if (r->rank == 0)
		TP_CHECK(r->t.ops->post_recv(&r->t, 1, 7, mr, 0, sizeof(buf), 7) == 0);
	TP_CHECK(tpt_barrier(r) == 0);
	if (r->rank == 1) {
		TP_CHECK(r->t.ops->post_send(&r->t, 0, 7, mr, 0, sizeof(buf), 8) == 0);
		TP_CHECK(tpt_wait1(r, &c, 5000) == 1 && c.status == 0 && c.cookie == 8);
	}
	TP_CHECK(tpt_barrier(r) == 0);
	if (r->rank == 0) {
		/* in flight is not arrived: a sent message may still be on its way (loopback
		 * delivery deferred to softirq under load); 50 ms lands it */
		struct timespec land = {.tv_nsec = 50000000};

		nanosleep(&land, NULL);
		r->abort_flag = 1;
		t0 = time_now_ns();
		while (rc == 0 && time_now_ns() - t0 < 2000000000ull)
			rc = r->t.ops->poll(&r->t, &c, 1);
		TP_CHECK(rc == 1 && c.cookie == 7 && c.status == 0 && c.len == sizeof(buf));
		for (size_t i = 0; i < sizeof(buf); i++)
			TP_CHECK(buf[i] == 0x5c);
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
