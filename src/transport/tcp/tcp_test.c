/* tcp transport tests: forked ranks over loopback (exchange, lengths, eager credit, dead
 * peer, abort). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "transport/tcp/tcp_priv.h"
#include "transport/tp_test_cases.h"

extern const struct transport_ops tcp_ops;

static void run_ok(int nranks, const struct transport_opts *o, tpt_body body, void *arg)
{
	int st[TPT_MAX_RANKS];

	tpt_run(&tcp_ops, nranks, o, 5000, body, arg, st);
	for (int i = 0; i < nranks; i++) {
		assert_true(WIFEXITED(st[i]));
		assert_int_equal(WEXITSTATUS(st[i]), 0);
	}
}

static void test_exchange(void **state)
{
	/* table: ranks x streams x posting order */
	static const struct {
		int nranks, streams;
		enum tpt_order order;
	} cases[] = {
	    {2, 2, TPT_RECV_FIRST}, {2, 2, TPT_SEND_FIRST}, {2, 1, TPT_MIXED},
	    {3, 12, TPT_MIXED},	    {4, 2, TPT_SEND_FIRST}, {4, 2, TPT_RECV_FIRST},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct transport_opts o = {.kind = TP_TCP, .streams = cases[i].streams};
		enum tpt_order order = cases[i].order;

		run_ok(cases[i].nranks, &o, tpt_body_exchange, &order);
	}
}

static void test_sockbuf_and_interface(void **state)
{
	struct transport_opts o = {.kind = TP_TCP, .streams = 2, .sockbuf = 4u << 20};
	enum tpt_order order = TPT_MIXED;

	(void)state;
	snprintf(o.tcp_interface, sizeof(o.tcp_interface), "127.0.0.1");
	run_ok(2, &o, tpt_body_exchange, &order);
	snprintf(o.tcp_interface, sizeof(o.tcp_interface), "lo");
	run_ok(2, &o, tpt_body_exchange, &order);
}

static void test_many_small(void **state)
{
	struct transport_opts o = {
	    .kind = TP_TCP, .streams = 3, .shm_ring = 1u << 20, .slot_size = 65536};

	(void)state;
	run_ok(2, &o, tpt_body_many, NULL);
}

static void test_msgsize(void **state)
{
	struct transport_opts o = {.kind = TP_TCP, .streams = 2};
	int eager_send = 0; /* 100 B goes eager: complete once written */

	(void)state;
	run_ok(2, &o, tpt_body_msgsize, &eager_send);
}

/*
 * Lengths on both sides of the eager limit (TCP_EAGER_MAX, 64KiB): a small send meeting
 * a large receive fails the receive (the send completed when written: it reads 0), a
 * large send meeting a small receive fails both ends with -EMSGSIZE (its RTS is
 * refused), and matching pairs posted after them, one eager and one large, still
 * arrive intact; arg: the receiver posts first (1) or last (0). Posting last, it posts
 * once the sender's RTS (TCP_RTS_AFTER_NS) are in: they wait for their receives.
 */
static int body_eager_mismatch(struct tpt_rank *r, void *arg)
{
	enum { NP = 4 };
	static const size_t send_len[NP] = {32u << 10, 100u << 10, 48u << 10, 100u << 10};
	static const size_t recv_len[NP] = {100u << 10, 32u << 10, 48u << 10, 100u << 10};
	static const size_t off[NP] = {0, 0, 0, 128u << 10};
	bool recv_first = *(const int *)arg, sender = r->rank == 0;
	size_t len = 256u << 10;
	char *buf = calloc(1, len);
	struct tp_completion cs[NP];
	struct tp_mr *mr;
	int peer = 1 - r->rank, ncs = 0;

	TP_CHECK(buf && r->t.ops->mr_reg(&r->t, buf, len, MEM_HOST, &mr) == 0);
	for (size_t i = 0; sender && i < len; i++)
		buf[i] = (char)(i * 7 + 3);
	if (!sender && !recv_first)
		TP_CHECK(tpt_barrier(r) == 0);
	for (int k = 0; k < NP; k++)
		TP_CHECK((sender
			      ? r->t.ops->post_send(&r->t, peer, 10 + k, mr, off[k], send_len[k], k)
			      : r->t.ops->post_recv(&r->t, peer, 10 + k, mr, off[k], recv_len[k],
						    k)) == 0);
	if (sender && !recv_first) {
		uint64_t end = time_now_ns() + 3 * TCP_RTS_AFTER_NS;

		while (time_now_ns() < end) {
			int n = r->t.ops->poll(&r->t, cs + ncs, NP - ncs);

			TP_CHECK(n >= 0);
			ncs += n;
		}
		TP_CHECK(tpt_barrier(r) == 0);
	}
	TP_CHECK(tpt_wait_n(r, cs, &ncs, NP) == 0);
	for (int k = 0; k < NP; k++)
		TP_CHECK(cs[k].status ==
			 (cs[k].cookie >= 2 || (sender && cs[k].cookie == 0) ? 0 : -EMSGSIZE));
	for (size_t i = 0; !sender && i < send_len[2]; i++)
		TP_CHECK(buf[i] == (char)(i * 7 + 3));
	for (size_t i = off[3]; !sender && i < off[3] + send_len[3]; i++)
		TP_CHECK(buf[i] == (char)(i * 7 + 3));
	r->t.ops->mr_dereg(&r->t, mr);
	free(buf);
	return tpt_barrier(r) == 0 ? 0 : 1;
}

static void test_eager_mismatch(void **state)
{
	struct transport_opts o = {.kind = TP_TCP, .streams = 2};

	(void)state;
	for (int recv_first = 0; recv_first < 2; recv_first++)
		for (int p = TP_PROGRESS_THREAD; p <= TP_PROGRESS_INLINE; p++) {
			o.progress = p;
			run_ok(2, &o, body_eager_mismatch, &recv_first);
		}
}

/*
 * The read path's edges (tcp_progress.c stream_read): both ranks send and receive at
 * once, as an AllReduce step does, lengths on both sides of one stage read (8 KiB, with
 * a CTS and a header before it), of the eager limit and of a direct read, odd ones,
 * several rounds in flight; every byte checked. First each length alone, both ways at
 * once (nothing behind it: what a read staged must be parsed without a later event),
 * then all at once. A read that stops at a short return must still see every later byte
 * (edge-triggered epoll).
 */
static int body_stage_edges(struct tpt_rank *r, void *arg)
{
	static const size_t lens[] = {1,	  64,	       8096,	     8127,  8128,
				      8129,	  8192,	       8193,	     12289, 16389,
				      65535,	  65536,       65537,	     70001, 524289};
	enum { ROUNDS = 40, NL = sizeof(lens) / sizeof(lens[0]) };
	size_t offs[NL + 1] = {0}, per;
	int peer = 1 - r->rank, ncs = 0, want = 2 * ROUNDS * NL;
	struct tp_completion *cs = calloc((size_t)want + 32, sizeof(*cs));
	char *sbuf, *rbuf;
	struct tp_mr *smr, *rmr;

	(void)arg;
	for (size_t k = 0; k < NL; k++)
		offs[k + 1] = offs[k] + lens[k];
	per = offs[NL];
	sbuf = malloc(per * ROUNDS);
	rbuf = calloc(per, ROUNDS);
	TP_CHECK(cs && sbuf && rbuf);
	for (size_t q = 0; q < ROUNDS; q++)
		for (size_t k = 0; k < NL; k++)
			for (size_t i = 0; i < lens[k]; i++)
				sbuf[q * per + offs[k] + i] =
				    (char)tpt_byte(r->rank, peer, q * NL + k, i);
	TP_CHECK(r->t.ops->mr_reg(&r->t, sbuf, per * ROUNDS, MEM_HOST, &smr) == 0);
	TP_CHECK(r->t.ops->mr_reg(&r->t, rbuf, per * ROUNDS, MEM_HOST, &rmr) == 0);
	for (size_t k = 0; k < NL; k++) {
		int n0 = ncs;

		TP_CHECK(tpt_post_retry(r, false, peer, 1000 + k, rmr, offs[k], lens[k], k, cs,
					&ncs) == 0);
		TP_CHECK(tpt_post_retry(r, true, peer, 1000 + k, smr, offs[k], lens[k], k, cs,
					&ncs) == 0);
		TP_CHECK(tpt_wait_n(r, cs, &ncs, n0 + 2) == 0);
		ncs = n0;
	}
	for (size_t q = 0; q < ROUNDS; q++) {
		for (size_t k = 0; k < NL; k++) {
			uint64_t tag = q * NL + k;
			size_t off = q * per + offs[k];

			TP_CHECK(tpt_post_retry(r, false, peer, tag, rmr, off, lens[k], tag, cs,
						&ncs) == 0);
			TP_CHECK(tpt_post_retry(r, true, peer, tag, smr, off, lens[k], tag, cs,
						&ncs) == 0);
		}
	}
	TP_CHECK(tpt_wait_n(r, cs, &ncs, want) == 0);
	for (int i = 0; i < want; i++)
		TP_CHECK(cs[i].status == 0 && cs[i].len == lens[cs[i].cookie % NL]);
	for (size_t q = 0; q < ROUNDS; q++)
		for (size_t k = 0; k < NL; k++)
			for (size_t i = 0; i < lens[k]; i++)
				TP_CHECK((uint8_t)rbuf[q * per + offs[k] + i] ==
					 tpt_byte(peer, r->rank, q * NL + k, i));
	return tpt_exchange_end(r, smr, rmr, sbuf, rbuf, cs);
}

/* A 2-rank body over 1 and 2 streams, with the progress thread and inline. */
static void run_ok_modes(tpt_body body)
{
	for (int streams = 1; streams <= 2; streams++)
		for (int p = TP_PROGRESS_THREAD; p <= TP_PROGRESS_INLINE; p++) {
			struct transport_opts o = {
			    .kind = TP_TCP, .streams = streams, .progress = p};

			run_ok(2, &o, body, NULL);
		}
}

static void test_stage_edges(void **state)
{
	(void)state;
	run_ok_modes(body_stage_edges);
}

/*
 * The last frames of an exchange arrive in the read that finishes a payload, and nothing
 * follows them: rank 0 writes a 40000 B eager message (its tail is a direct read, longer
 * than one stage read) and two small ones behind it in one sendmsg, then goes quiet;
 * rank 1 only polls once all of it sits in its socket. Edge-triggered epoll reports that
 * arrival once, so the two small messages complete only if the read that took the
 * payload parses the stage behind it; a version that waits for a later socket event
 * times out here (bounded wait), where body_stage_edges' traffic would rescue it.
 */
static int body_quiet_tail(struct tpt_rank *r, void *arg)
{
	static const size_t lens[] = {40000, 100, 1};
	enum { NM = sizeof(lens) / sizeof(lens[0]) };
	size_t offs[NM + 1] = {0};
	bool sender = r->rank == 0;
	struct tp_completion cs[NM];
	int peer = 1 - r->rank, ncs = 0;
	char *buf;
	struct tp_mr *mr;

	(void)arg;
	for (int k = 0; k < NM; k++)
		offs[k + 1] = offs[k] + lens[k];
	buf = calloc(1, offs[NM]);
	TP_CHECK(buf && r->t.ops->mr_reg(&r->t, buf, offs[NM], MEM_HOST, &mr) == 0);
	for (size_t i = 0; sender && i < offs[NM]; i++)
		buf[i] = (char)tpt_byte(0, 1, 0, i);
	if (!sender) {
		uint64_t end = time_now_ns() + 100000000ull;

		for (int k = 0; k < NM; k++)
			TP_CHECK(r->t.ops->post_recv(&r->t, peer, 1 + k, mr, offs[k], lens[k], k) ==
				 0);
		/* posted before anything came (no CTS: these are eager-sized) */
		while (time_now_ns() < end)
			TP_CHECK(r->t.ops->poll(&r->t, cs, NM) == 0);
	}
	TP_CHECK(tpt_barrier(r) == 0);
	if (sender) {
		for (int k = 0; k < NM; k++)
			TP_CHECK(r->t.ops->post_send(&r->t, peer, 1 + k, mr, offs[k], lens[k], k) ==
				 0);
		/* complete = written */
		for (int k = 0; k < NM; k++)
			TP_CHECK(tpt_wait1(r, &cs[k], 2000) == 1 && cs[k].status == 0);
	}
	TP_CHECK(tpt_barrier(r) == 0); /* everything rank 0 sends is on its way */
	for (int k = 0; !sender && k < NM; k++) {
		TP_CHECK(tpt_wait1(r, &cs[ncs], 2000) == 1);
		TP_CHECK(cs[ncs].status == 0 && cs[ncs].len == lens[cs[ncs].cookie]);
		ncs++;
	}
	for (size_t i = 0; !sender && i < offs[NM]; i++)
		TP_CHECK((uint8_t)buf[i] == tpt_byte(0, 1, 0, i));
	r->t.ops->mr_dereg(&r->t, mr);
	free(buf);
	return tpt_barrier(r) == 0 ? 0 : 1;
}

static void test_quiet_tail(void **state)
{
	(void)state;
	run_ok_modes(body_quiet_tail);
}

/*
 * Eager credit: rank 0 sends NM messages of the eager limit, same tags in turn (tag k %
 * 4), before rank 1 posts a receive. Only what fits the window (TCP_EAGER_WINDOW, payload
 * and header) may complete meanwhile; the rest wait for the credit rank 1 returns once
 * it posts (in CREDIT frames: nothing else goes back), and every message lands in the
 * receive of its place in its tag's order. Then a one-way flow of NS small messages into
 * receives posted first, many windows' worth: only CREDIT frames keep it going.
 */
static int body_credit(struct tpt_rank *r, void *arg)
{
	enum { NM = 48, NS = 1200, SL = 4096 };
	const size_t big = TCP_EAGER_MAX,
		     fits = TCP_EAGER_WINDOW / (big + sizeof(struct tcp_frame_hdr));
	size_t len = NM * big + NS * SL;
	bool sender = r->rank == 0;
	struct tp_completion *cs = calloc(NM + NS, sizeof(*cs));
	char *buf = malloc(len);
	int peer = 1 - r->rank, ncs = 0;
	struct tp_mr *mr;

	(void)arg;
	TP_CHECK(cs && buf && r->t.ops->mr_reg(&r->t, buf, len, MEM_HOST, &mr) == 0);
	for (size_t i = 0; i < len; i++)
		buf[i] = sender ? (char)tpt_byte(0, 1, i / big, i % big) : 0;
	if (sender) {
		uint64_t end = time_now_ns() + 300000000ull;

		for (int k = 0; k < NM; k++)
			TP_CHECK(r->t.ops->post_send(&r->t, peer, k % 4, mr, k * big, big, k) == 0);
		while (time_now_ns() < end) {
			int n = r->t.ops->poll(&r->t, cs + ncs, NM - ncs);

			TP_CHECK(n >= 0);
			ncs += n;
		}
		fprintf(
		    stderr,
		    "credit: %d of %d eager sends completed before any receive (window fits %zu)\n",
		    ncs, NM, fits);
		TP_CHECK(ncs >= 1 && (size_t)ncs <= fits);
		for (int i = 0; i < ncs; i++) /* in their post order */
			TP_CHECK(cs[i].cookie == (uint64_t)i && cs[i].status == 0);
	}
	TP_CHECK(tpt_barrier(r) == 0);
	for (int k = 0; !sender && k < NM; k++)
		TP_CHECK(r->t.ops->post_recv(&r->t, peer, k % 4, mr, k * big, big, k) == 0);
	TP_CHECK(tpt_wait_n(r, cs, &ncs, NM) == 0);
	for (int i = 0; i < NM; i++)
		TP_CHECK(cs[i].status == 0 && cs[i].len == big);
	for (size_t i = 0; !sender && i < NM * big; i++)
		TP_CHECK((uint8_t)buf[i] == tpt_byte(0, 1, i / big, i % big));
	/* the one-way flow: receives first, then the sends, no barrier between */
	ncs = 0;
	for (int k = 0; !sender && k < NS; k++)
		TP_CHECK(tpt_post_retry(r, false, peer, 100 + k, mr, NM * big + k * SL, SL, k, cs,
					&ncs) == 0);
	TP_CHECK(tpt_barrier(r) == 0);
	for (int k = 0; sender && k < NS; k++)
		TP_CHECK(tpt_post_retry(r, true, peer, 100 + k, mr, NM * big + k * SL, SL, k, cs,
					&ncs) == 0);
	TP_CHECK(tpt_wait_n(r, cs, &ncs, NS) == 0);
	for (int i = 0; i < NS; i++)
		TP_CHECK(cs[i].status == 0 && cs[i].len == SL);
	for (size_t i = NM * big; !sender && i < len; i++)
		TP_CHECK((uint8_t)buf[i] == tpt_byte(0, 1, i / big, i % big));
	r->t.ops->mr_dereg(&r->t, mr);
	free(buf);
	free(cs);
	return tpt_barrier(r) == 0 ? 0 : 1;
}

static void test_credit(void **state)
{
	(void)state;
	run_ok_modes(body_credit);
}

/*
 * A peer killed while eager sends to it wait for credit (it posted no receive): the
 * sends that wait fail with the reset, seen within the timeout, not after it.
 */
static int body_killed_credit(struct tpt_rank *r, void *arg)
{
	enum { NM = 48 };
	size_t big = TCP_EAGER_MAX;
	char *buf = calloc(NM, big);
	struct tp_completion c;
	struct tp_mr *mr;
	uint64_t t0;
	int rc = 0, got = 0;

	(void)arg;
	TP_CHECK(buf && r->t.ops->mr_reg(&r->t, buf, NM * big, MEM_HOST, &mr) == 0);
	TP_CHECK(tpt_barrier(r) == 0);
	if (r->rank == 1) {
		usleep(100000); /* rank 0's sends are in its socket and waiting for credit */
		raise(SIGKILL);
	}
	for (int k = 0; k < NM; k++)
		TP_CHECK(r->t.ops->post_send(&r->t, 1, k, mr, k * big, big, k) == 0);
	t0 = time_now_ns();
	while (rc >= 0 && time_now_ns() - t0 < 3000000000ull) {
		rc = r->t.ops->poll(&r->t, &c, 1);
		got += rc > 0;
	}
	fprintf(stderr, "killed peer (credit) seen after %.1f ms, %d sends completed: %s\n",
		(time_now_ns() - t0) / 1e6, got, strerror(-rc));
	TP_CHECK(rc == -ECONNRESET && got < NM);
	r->t.ops->mr_dereg(&r->t, mr);
	free(buf);
	return 0;
}

/* Two ranks, rank 1 kills itself inside body: rank 0 must pass, rank 1 die by SIGKILL. */
static void run_killed(const struct transport_opts *o, int timeout_ms, tpt_body body, void *arg)
{
	int st[2];

	tpt_run(&tcp_ops, 2, o, timeout_ms, body, arg, st);
	assert_true(WIFEXITED(st[0]));
	assert_int_equal(WEXITSTATUS(st[0]), 0);
	assert_true(WIFSIGNALED(st[1]));
	assert_int_equal(WTERMSIG(st[1]), SIGKILL);
}

static void test_killed_credit(void **state)
{
	struct transport_opts o = {.kind = TP_TCP, .streams = 2};

	(void)state;
	for (int p = TP_PROGRESS_THREAD; p <= TP_PROGRESS_INLINE; p++) {
		o.progress = p;
		run_killed(&o, 5000, body_killed_credit, NULL);
	}
}

static void test_killed_peer(void **state)
{
	struct transport_opts o = {.kind = TP_TCP, .streams = 2};
	struct tpt_kill kills[] = {{3000, false}, {3000, true}};

	(void)state;
	for (size_t i = 0; i < sizeof(kills) / sizeof(kills[0]); i++)
		run_killed(&o, kills[i].timeout_ms, tpt_body_killed, &kills[i]);
}

/* A peer that opened but never connects: connect fails at the timeout, not before or long after. */
static void test_connect_timeout(void **state)
{
	struct transport_opts o = {.kind = TP_TCP, .streams = 2};
	double ms = 0;

	(void)state;
	assert_int_equal(tpt_connect_alone(&tcp_ops, 1, 300, &o, &ms), -ETIMEDOUT);
	assert_true(ms >= 290 && ms < 1500);
}

static void test_abort(void **state)
{
	struct transport_opts o = {.kind = TP_TCP, .streams = 2};

	(void)state;
	run_ok(2, &o, tpt_body_abort, NULL);
}

/* A message in before the abort is delivered: inline progress and the thread's. */
static void test_abort_after_arrival(void **state)
{
	struct transport_opts o = {.kind = TP_TCP, .streams = 2};

	(void)state;
	run_ok(2, &o, tpt_body_abort_after_arrival, NULL);
	o.progress = TP_PROGRESS_THREAD;
	run_ok(2, &o, tpt_body_abort_after_arrival, NULL);
}

static void test_bad_interface(void **state)
{
	struct transport_opts o = {.kind = TP_TCP, .streams = 2};
	int hosts[2] = {0, 0};
	bool use[2] = {false, true};
	struct transport_env env = {.rank = 0,
				    .nranks = 2,
				    .host_of_rank = hosts,
				    .use_peer = use,
				    .timeout_ms = 100,
				    .opts = &o};
	struct transport t = {.ops = &tcp_ops};

	(void)state;
	snprintf(o.tcp_interface, sizeof(o.tcp_interface), "nosuchif0");
	assert_int_equal(tcp_ops.open(&t, &env), -ENODEV);
	o.streams = 65;
	assert_int_equal(tcp_ops.open(&t, &env), -EINVAL);
}

static void test_bandwidth(void **state)
{
	struct transport_opts o = {.kind = TP_TCP, .streams = 2};

	(void)state;
	run_ok(2, &o, tpt_body_bw, "tcp");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exchange),	cmocka_unit_test(test_sockbuf_and_interface),
	    cmocka_unit_test(test_many_small),	cmocka_unit_test(test_msgsize),
	    cmocka_unit_test(test_killed_peer), cmocka_unit_test(test_connect_timeout),
	    cmocka_unit_test(test_abort),	cmocka_unit_test(test_abort_after_arrival),
	    cmocka_unit_test(test_bad_interface),
	    cmocka_unit_test(test_bandwidth),	cmocka_unit_test(test_eager_mismatch),
	    cmocka_unit_test(test_stage_edges), cmocka_unit_test(test_quiet_tail),
	    cmocka_unit_test(test_credit),	cmocka_unit_test(test_killed_credit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
