/* shm transport tests: forked ranks on one host (exchange, lengths, dead peer, abort, leaks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <sys/mman.h>

#include "transport/host_mr.h"
#include "transport/shm/shm_priv.h"
#include "transport/tp_test_cases.h"
#include "util/shmem.h"
#include "util/test_capture.h"

extern const struct transport_ops shm_ops;

static void run_ok(int nranks, const struct transport_opts *o, tpt_body body, void *arg)
{
	int st[TPT_MAX_RANKS];

	tpt_run(&shm_ops, nranks, o, 5000, body, arg, st);
	for (int i = 0; i < nranks; i++) {
		assert_true(WIFEXITED(st[i]));
		assert_int_equal(WEXITSTATUS(st[i]), 0);
	}
}

static void test_exchange(void **state)
{
	/* table: ranks x ring geometry x posting order */
	static const struct {
		int nranks;
		uint64_t ring, slot;
		enum tpt_order order;
	} cases[] = {
	    {2, 4u << 20, 512u << 10, TPT_RECV_FIRST}, {2, 4u << 20, 512u << 10, TPT_SEND_FIRST},
	    {2, 64u << 10, 4096, TPT_MIXED}, /* tiny ring: many wraps, 2048 slots per 8 MiB */
	    {3, 8u << 20, 1u << 20, TPT_MIXED},	       {4, 8u << 20, 1u << 20, TPT_SEND_FIRST},
	    {4, 2u << 20, 1u << 20, TPT_RECV_FIRST},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct transport_opts o = {
		    .kind = TP_SHM, .shm_ring = cases[i].ring, .slot_size = cases[i].slot};
		enum tpt_order order = cases[i].order;

		run_ok(cases[i].nranks, &o, tpt_body_exchange, &order);
	}
	assert_int_equal(tpt_count_segments(), 0);
}

static void test_many_small(void **state)
{
	struct transport_opts o = {
	    .kind = TP_SHM, .streams = 3, .shm_ring = 1u << 20, .slot_size = 65536};

	(void)state;
	run_ok(2, &o, tpt_body_many, NULL);
}

static void test_msgsize(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .shm_ring = 4u << 20, .slot_size = 1u << 20};

	(void)state;
	run_ok(2, &o, tpt_body_msgsize, NULL);
}

/* The held-tag case (tp_test_util.h) on host memory, 3x the CTS queue's capacity. */
static int body_held_tag(struct tpt_rank *r, void *arg)
{
	enum { N = 3 * SHM_PAIR_CTS_CAP };
	char *buf = calloc(N + 1, TPT_HELD_LEN);

	(void)arg;
	TP_CHECK(buf);
	return tpt_held_tag(r, buf, MEM_HOST, N);
}

static void test_held_tag(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .shm_ring = 64u << 10, .slot_size = 4096};

	(void)state;
	run_ok(2, &o, body_held_tag, NULL);
}

static void test_killed_peer(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .shm_ring = 4u << 20, .slot_size = 1u << 20};
	struct tpt_kill kills[] = {{3000, false}, {3000, true}};
	int st[2];

	(void)state;
	for (size_t i = 0; i < sizeof(kills) / sizeof(kills[0]); i++) {
		tpt_run(&shm_ops, 2, &o, kills[i].timeout_ms, tpt_body_killed, &kills[i], st);
		assert_true(WIFEXITED(st[0]));
		assert_int_equal(WEXITSTATUS(st[0]), 0);
		assert_true(WIFSIGNALED(st[1]));
		assert_int_equal(WTERMSIG(st[1]), SIGKILL);
	}
	assert_int_equal(tpt_count_segments(), 0); /* names were unlinked at connect */
}

/* A peer that opened but never connects: connect fails at the timeout, not before or long after. */
static void test_connect_timeout(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .streams = 2};
	double ms = 0;

	(void)state;
	assert_int_equal(tpt_connect_alone(&shm_ops, 0, 300, &o, &ms), -ETIMEDOUT);
	assert_true(ms >= 290 && ms < 1500);
	assert_int_equal(tpt_count_segments(), 0); /* the unattached ring was unlinked at close */
}

static void test_abort(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .shm_ring = 4u << 20, .slot_size = 1u << 20};

	(void)state;
	run_ok(2, &o, tpt_body_abort, NULL);
}

/* A message in its slot before the abort is delivered. */
static void test_abort_after_arrival(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .shm_ring = 4u << 20, .slot_size = 1u << 20};

	(void)state;
	run_ok(2, &o, tpt_body_abort_after_arrival, NULL);
}

static void test_can_connect(void **state)
{
	int hosts[3] = {7, 7, 9};
	bool use[3] = {false, true, true};
	struct transport_opts o = {.kind = TP_SHM, .slot_size = 100};
	struct transport_env env = {.rank = 0,
				    .nranks = 3,
				    .host_of_rank = hosts,
				    .use_peer = use,
				    .timeout_ms = 100,
				    .opts = &o};
	struct transport t = {.ops = &shm_ops};

	(void)state;
	assert_true(shm_ops.can_connect(&env, 1));
	assert_false(shm_ops.can_connect(&env, 2));
	assert_false(shm_ops.can_connect(&env, 0));
	assert_int_equal(shm_ops.open(&t, &env), -EINVAL); /* slot below 4 KiB */
	o.slot_size = 0;
	assert_int_equal(shm_ops.open(&t, &env), -EHOSTUNREACH); /* rank 2 is elsewhere */
	assert_int_equal(tpt_count_segments(), 0);
}

/* The policy: slots below the crossover and whenever either side cannot map. */
static void test_use_direct(void **state)
{
	static const struct {
		int copy;
		uint64_t len;
		bool shared, reachable, want;
	} cases[] = {
	    {TP_SHM_COPY_AUTO, SHM_DIRECT_MIN, true, true, true},
	    {TP_SHM_COPY_AUTO, SHM_DIRECT_MIN - 4, true, true, false},
	    {TP_SHM_COPY_AUTO, 4096, true, true, false},
	    {TP_SHM_COPY_AUTO, 64u << 20, false, true, false},
	    {TP_SHM_COPY_AUTO, 64u << 20, true, false, false},
	    {TP_SHM_COPY_DIRECT, 4, true, true, true},
	    {TP_SHM_COPY_DIRECT, 4, false, true, false},
	    {TP_SHM_COPY_DIRECT, 0, true, true, false},
	    {TP_SHM_COPY_SLOTS, 64u << 20, true, true, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(shm_use_direct(cases[i].copy, cases[i].len, cases[i].shared,
						cases[i].reachable),
				 cases[i].want);
}

/* The chunk policy: 512 KiB pieces through the slots while a collective stays cached (to
 * 16 MiB with 2 ranks, 4 MiB with more), then SHM_DIRECT_MIN pieces that go direct; never
 * smaller for more bytes. */
static void test_chunk_auto(void **state)
{
	(void)state;
	assert_int_equal(shm_ops.chunk_auto(4096, 2), 512u << 10); /* TP_CHUNK_CACHED */
	assert_int_equal(shm_ops.chunk_auto(16ull << 20, 2), 512u << 10);
	assert_int_equal(shm_ops.chunk_auto((16ull << 20) + 4, 2), SHM_DIRECT_MIN);
	assert_int_equal(shm_ops.chunk_auto(4ull << 20, 4), 512u << 10);
	assert_int_equal(shm_ops.chunk_auto((4ull << 20) + 4, 4), SHM_DIRECT_MIN);
	assert_true(shm_use_direct(TP_SHM_COPY_AUTO, shm_ops.chunk_auto(1ull << 30, 3), true,
				   true));
	assert_false(shm_use_direct(TP_SHM_COPY_AUTO, shm_ops.chunk_auto(1 << 20, 3), true,
				    true));
	for (int n = 2; n <= 8; n++)
		for (uint64_t b = 4096; b < (1ull << 30); b *= 2)
			assert_true(shm_ops.chunk_auto(b, n) <= shm_ops.chunk_auto(2 * b, n));
}

/* The streaming-copy policy: plain copies in collectives below SHM_STREAM_MIN (and
 * outside any: 0) and wherever ranks outnumber CPUs, streaming from it. */
static void test_use_stream(void **state)
{
	static const struct {
		uint64_t coll_bytes;
		bool crowded, want;
	} cases[] = {
	    {0, false, false},
	    {4096, false, false},
	    {4u << 20, false, false},
	    {SHM_STREAM_MIN - 4, false, false},
	    {SHM_STREAM_MIN, false, true},
	    {64u << 20, false, true},
	    {SHM_STREAM_MIN, true, false},
	    {64u << 20, true, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(shm_use_stream(cases[i].coll_bytes, cases[i].crowded),
				 cases[i].want);
}

/*
 * The slot cursor: a take (T) publishes one message, a release (R) frees the oldest, as
 * the ring's FIFO does. A slot handed out is never one still held, and an empty ring
 * starts over at slot 0.
 */
static void test_slot_take(void **state)
{
	static const struct {
		const char *ops;
		const char *want; /* the slot of each T */
	} cases[] = {
	    {"TRTRTR", "000"},		/* one at a time: always slot 0 */
	    {"TTTR", "012"},		/* held ones in turn */
	    {"TTTRTTR", "01230"},	/* one freed, not empty: on in turn */
	    {"TTTRRRT", "0120"},	/* drained: slot 0 again */
	    {"TTTTRTRT", "012301"},	/* wraps over the freed ones */
	    {"TTTTRRTRRT", "012301"},	/* wraps, then not yet empty */
	    {"TTTTRRTRRRT", "012300"}, /* wraps, then drained */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t next = 0, held[4], head = 0, tail = 0;
		const char *w = cases[i].want;

		for (const char *op = cases[i].ops; *op; op++) {
			if (*op == 'R') {
				tail++;
				continue;
			}
			assert_true(head - tail < 4);
			held[head % 4] = shm_slot_take(&next, 4, head == tail);
			for (uint32_t k = tail; k < head; k++)
				assert_int_not_equal(held[k % 4], held[head % 4]);
			assert_int_equal(held[head % 4], (uint32_t)(*w++ - '0'));
			head++;
		}
		assert_int_equal(*w, 0);
	}
}

static void red_f32(void *dst, const void *src, uint64_t count, enum dtype dt)
{
	float *d = dst;
	const float *s = src;

	(void)dt;
	for (uint64_t i = 0; i < count; i++)
		d[i] += s[i];
}

#define DIRECT_NSIZES 5
/* the last a copy past SHM_STREAM_MIN at an odd offset, with a head and tail short of
 * a line: the streaming copy's edges */
static const size_t direct_sizes[DIRECT_NSIZES] = {4096, 20000, 262144, 1u << 20,
						   (1u << 20) + 4100};

/*
 * Every rank sends each size to every peer from a shmem buffer, received half by copy and
 * half by reduce into a private one; then checks the values and how many descs each
 * message took in its ring (1 direct, len / slot through slots): arg is the expected mode.
 * Under shm_copy = direct the messages belong to a collective of SHM_STREAM_MIN bytes,
 * so direct copies stream there (gs_copy_stream) and are plain under auto.
 */
static int body_direct(struct tpt_rank *r, void *arg)
{
	int copy = *(int *)arg, me = r->rank, n = r->nranks, ncs = 0;
	int want = 2 * (n - 1) * DIRECT_NSIZES;
	size_t per_peer = 0, offs[DIRECT_NSIZES];
	struct tp_completion *cs = calloc((size_t)want + 8, sizeof(*cs));
	struct shm_priv *s = r->t.priv;
	struct tp_mr *smr, *rmr;
	float *sbuf, *rbuf;
	uint64_t descs = 0, end;

	for (int k = 0; k < DIRECT_NSIZES; k++) {
		offs[k] = per_peer;
		per_peer += direct_sizes[k] / sizeof(float);
	}
	sbuf = shmem_alloc(per_peer * n * sizeof(float));
	rbuf = calloc(per_peer * n, sizeof(float));
	TP_CHECK(sbuf && rbuf && cs);
	for (size_t i = 0; i < per_peer * n; i++) {
		sbuf[i] = (float)(me * 1000 + (int)(i % 977));
		rbuf[i] = 0.5f;
	}
	TP_CHECK(r->t.ops->mr_reg(&r->t, sbuf, per_peer * n * sizeof(float), MEM_HOST, &smr) == 0);
	TP_CHECK(r->t.ops->mr_reg(&r->t, rbuf, per_peer * n * sizeof(float), MEM_HOST, &rmr) == 0);
	TP_CHECK(smr->shared && !rmr->shared);
	if (copy == TP_SHM_COPY_DIRECT)
		r->t.ops->coll_begin(&r->t, SHM_STREAM_MIN);
	TP_CHECK(s->stream == (copy == TP_SHM_COPY_DIRECT));
	for (int p = 0; p < n; p++)
		for (int k = 0; p != me && k < DIRECT_NSIZES; k++) {
			size_t off = (p * per_peer + offs[k]) * sizeof(float),
			       len = direct_sizes[k];

			if (k % 2)
				TP_CHECK(r->t.ops->post_recv_reduce(&r->t, p, 40 + k, rmr, off, len,
								    DT_F32, red_f32, 1) == 0);
			else
				TP_CHECK(r->t.ops->post_recv(&r->t, p, 40 + k, rmr, off, len, 1) ==
					 0);
			off = (p * per_peer + offs[k]) * sizeof(float);
			TP_CHECK(r->t.ops->post_send(&r->t, p, 40 + k, smr, off, len, 2) == 0);
			descs += shm_use_direct(copy, len, true, true)
				     ? 1
				     : len / s->slot_size + !!(len % s->slot_size);
		}
	end = time_now_ns() + 20000000000ull;
	while (ncs < want) {
		int got = r->t.ops->poll(&r->t, cs + ncs, want - ncs);

		TP_CHECK(got >= 0 && time_now_ns() < end);
		ncs += got;
	}
	for (int i = 0; i < want; i++)
		TP_CHECK(cs[i].status == 0);
	for (int p = 0; p < n; p++)
		for (int k = 0; p != me && k < DIRECT_NSIZES; k++)
			for (size_t i = 0; i < direct_sizes[k] / sizeof(float); i++) {
				/* the sender's element at our offset: rank p's value of index j */
				size_t j = me * per_peer + offs[k] + i;
				float v = (float)(p * 1000 + (int)(j % 977));

				TP_CHECK(rbuf[p * per_peer + offs[k] + i] ==
					 (k % 2 ? v + 0.5f : v));
			}
	/* what we sent went through our tx rings in `descs` descs */
	for (int p = 0; p < n; p++)
		if (p != me)
			descs -= atomic_load(&shm_hdr(&s->c.links[p].tx)->head);
	TP_CHECK(descs == 0);
	r->t.ops->mr_dereg(&r->t, smr);
	r->t.ops->mr_dereg(&r->t, rmr);
	shmem_free(sbuf);
	free(rbuf);
	free(cs);
	return tpt_barrier(r) == 0 ? 0 : 1;
}

static void test_direct(void **state)
{
	static const int copies[] = {TP_SHM_COPY_AUTO, TP_SHM_COPY_DIRECT, TP_SHM_COPY_SLOTS};

	(void)state;
	for (size_t i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
		struct transport_opts o = {.kind = TP_SHM,
					   .shm_ring = 64u << 10,
					   .slot_size = 4096,
					   .shm_copy = copies[i]};
		int copy = copies[i];

		run_ok(3, &o, body_direct, &copy);
	}
	assert_int_equal(tpt_count_segments(), 0);
}

/*
 * wait() sleeps until the peer rings: rank 0 waits for a message rank 1 sends 100 ms
 * later, with a 20 s timeout; it must wake long before that. Then the reverse direction
 * with rank 1 waiting for its send's CTS-less completion.
 */
static int body_wait(struct tpt_rank *r, void *arg)
{
	static char buf[1 << 16];
	struct tp_completion cp;
	struct tp_mr *mr;
	uint64_t t0;
	int got = 0;

	(void)arg;
	r->env.crowded = true; /* wait() sleeps only where ranks outnumber CPUs */
	TP_CHECK(r->t.ops->mr_reg(&r->t, buf, sizeof(buf), MEM_HOST, &mr) == 0);
	if (r->rank == 0) {
		TP_CHECK(r->t.ops->post_recv(&r->t, 1, 5, mr, 0, sizeof(buf), 1) == 0);
		t0 = time_now_ns();
		while (!got && time_now_ns() - t0 < 20000000000ull) {
			TP_CHECK(r->t.ops->wait(&r->t, 20000) == 0);
			got = r->t.ops->poll(&r->t, &cp, 1);
			TP_CHECK(got >= 0);
		}
		/* one sleep, woken by the data: far under the 20 s timeout */
		TP_CHECK(got == 1 && cp.status == 0 && time_now_ns() - t0 < 10000000000ull);
		TP_CHECK(buf[100] == 42);
	} else {
		struct timespec ts = {0, 100000000};

		nanosleep(&ts, NULL);
		memset(buf, 42, sizeof(buf));
		TP_CHECK(r->t.ops->post_send(&r->t, 0, 5, mr, 0, sizeof(buf), 2) == 0);
		TP_CHECK(tpt_wait1(r, &cp, 20000) == 1 && cp.status == 0);
	}
	r->t.ops->mr_dereg(&r->t, mr);
	return tpt_barrier(r) == 0 ? 0 : 1;
}

static void test_wait(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .shm_ring = 1u << 20, .slot_size = 4096};

	(void)state;
	run_ok(2, &o, body_wait, NULL);
}

/* With a CPU per rank wait() declines: the caller spins (comm_idle). */
static int body_wait_uncrowded(struct tpt_rank *r, void *arg)
{
	(void)arg;
	r->env.crowded = false;
	TP_CHECK(r->t.ops->wait(&r->t, 1000) == -EOPNOTSUPP);
	return tpt_barrier(r) == 0 ? 0 : 1;
}

static void test_wait_uncrowded(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .shm_ring = 1u << 20, .slot_size = 4096};

	(void)state;
	run_ok(2, &o, body_wait_uncrowded, NULL);
}

/*
 * peer_on_cpu: both ranks pinned to one CPU exchange a message (progress publishes the
 * CPU); each then sees its peer on that CPU and on no other. The executor yields early
 * on that (comm_idle).
 */
static int body_peer_cpu(struct tpt_rank *r, void *arg)
{
	static char buf[4096];
	struct tp_completion cp;
	struct tp_mr *mr;
	cpu_set_t all, one;
	int cpu = -1, other = -1, peer = 1 - r->rank;

	(void)arg;
	TP_CHECK(sched_getaffinity(0, sizeof(all), &all) == 0);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &all) && cpu < 0)
			cpu = i;
		else if (other < 0 && cpu >= 0 && i != cpu)
			other = i;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	TP_CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
	TP_CHECK(r->t.ops->mr_reg(&r->t, buf, sizeof(buf), MEM_HOST, &mr) == 0);
	TP_CHECK(r->t.ops->post_recv(&r->t, peer, 7, mr, 0, sizeof(buf) / 2, 1) == 0);
	TP_CHECK(r->t.ops->post_send(&r->t, peer, 7, mr, sizeof(buf) / 2, sizeof(buf) / 2, 2) ==
		 0);
	TP_CHECK(tpt_wait1(r, &cp, 20000) == 1 && cp.status == 0);
	TP_CHECK(tpt_wait1(r, &cp, 20000) == 1 && cp.status == 0);
	TP_CHECK(tpt_barrier(r) == 0);
	TP_CHECK(r->t.ops->peer_on_cpu(&r->t, cpu));
	TP_CHECK(!r->t.ops->peer_on_cpu(&r->t, other));
	TP_CHECK(!r->t.ops->peer_on_cpu(&r->t, -1));
	r->t.ops->mr_dereg(&r->t, mr);
	TP_CHECK(sched_setaffinity(0, sizeof(all), &all) == 0);
	return tpt_barrier(r) == 0 ? 0 : 1;
}

static void test_peer_cpu(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .shm_ring = 1u << 20, .slot_size = 4096};

	(void)state;
	run_ok(2, &o, body_peer_cpu, NULL);
}

static void test_bandwidth(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .shm_ring = 8u << 20, .slot_size = 1u << 20};

	(void)state;
	run_ok(2, &o, tpt_body_bw, "shm");
}

/* One rank of a 2-rank job, in this process: env and transport for `rank`. */
struct setup_rank {
	int hosts[2];
	bool use[2];
	struct transport_opts o;
	struct transport_env env;
	struct transport t;
};

static void setup_rank_init(struct setup_rank *s, int rank, uint64_t job)
{
	memset(s, 0, sizeof(*s));
	s->use[!rank] = true;
	s->o = (struct transport_opts){.kind = TP_SHM, .shm_ring = 4u << 20, .slot_size = 1u << 20};
	s->env = (struct transport_env){.rank = rank,
					.nranks = 2,
					.local_rank = rank,
					.host_of_rank = s->hosts,
					.use_peer = s->use,
					.job_id = job,
					.timeout_ms = 2000,
					.opts = &s->o,
					.numa_node = -1};
	s->t.ops = &shm_ops;
}

/* Rank 1 opens (creating the segment rank 0 would attach) and is killed with SIGKILL. */
static void kill_rank1_after_open(uint64_t job)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		static struct setup_rank r1;

		setup_rank_init(&r1, 1, job);
		if (shm_ops.open(&r1.t, &r1.env))
			_exit(3);
		raise(SIGKILL);
		_exit(4);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	/* its segment for rank 0 is left: nobody attached it, its creator is gone */
	assert_int_equal(tpt_count_segments(), 1);
}

/*
 * A rank dies during setup (segments created, endpoints not yet exchanged): the
 * survivor's open removes the segment the dead rank made for it (its creator is gone),
 * its close its own, and the driver's sweep removes what is left when nobody survives.
 */
static void test_rank_dies_in_setup(void **state)
{
	static struct setup_rank r0;
	uint64_t job = ((uint64_t)getpid() << 20) | 0xabc00;

	(void)state;
	kill_rank1_after_open(job);
	setup_rank_init(&r0, 0, job);
	assert_int_equal(shm_ops.open(&r0.t, &r0.env), 0);
	assert_int_equal(tpt_count_segments(), 1); /* ours; the dead creator's swept */
	shm_ops.close(&r0.t); /* setup stopped: the job aborted */
	assert_int_equal(tpt_count_segments(), 0);
	/* every rank killed: the local driver sweeps by job id */
	kill_rank1_after_open(job + 1);
	assert_int_equal(transport_sweep_job(job + 2), 0); /* another job's names stay */
	assert_int_equal(tpt_count_segments(), 1);
	assert_int_equal(transport_sweep_job(job + 1), 1);
	assert_int_equal(tpt_count_segments(), 0);
}

/* A name taken before us is never adopted: the error names the path and its owner. */
static void test_squatted_name(void **state)
{
	static struct setup_rank r1;
	uint64_t job = ((uint64_t)getpid() << 20) | 0xdef00;
	char name[64], log[1024];
	struct capture c;
	int fd, ret;
	struct passwd *pw = getpwuid(geteuid());

	(void)state;
	snprintf(name, sizeof(name), "/gradsync-%016llx-0-1", (unsigned long long)job);
	fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	assert_true(fd >= 0);
	close(fd);
	setup_rank_init(&r1, 1, job);
	capture_begin(&c);
	ret = shm_ops.open(&r1.t, &r1.env);
	capture_end(&c, log, sizeof(log));
	assert_int_equal(ret, -EEXIST);
	if (!ret)
		shm_ops.close(&r1.t);
	print_message("%s", log);
	assert_non_null(strstr(log, "/dev/shm/gradsync-"));
	assert_non_null(strstr(log, "File exists, owned by"));
	assert_non_null(pw);
	assert_non_null(strstr(log, pw->pw_name));
	/* the squatter's object is still there: we did not remove or adopt it */
	fd = shm_open(name, O_RDWR, 0);
	assert_true(fd >= 0);
	close(fd);
	shm_unlink(name);
	assert_int_equal(tpt_count_segments(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exchange),	cmocka_unit_test(test_many_small),
	    cmocka_unit_test(test_msgsize),	cmocka_unit_test(test_held_tag),
	    cmocka_unit_test(test_killed_peer), cmocka_unit_test(test_connect_timeout),
	    cmocka_unit_test(test_abort),	cmocka_unit_test(test_abort_after_arrival),
	    cmocka_unit_test(test_can_connect),
	    cmocka_unit_test(test_use_direct),	cmocka_unit_test(test_direct),
	    cmocka_unit_test(test_wait),	cmocka_unit_test(test_wait_uncrowded),
	    cmocka_unit_test(test_bandwidth),	cmocka_unit_test(test_rank_dies_in_setup),
	    cmocka_unit_test(test_squatted_name), cmocka_unit_test(test_peer_cpu),
	    cmocka_unit_test(test_slot_take),	cmocka_unit_test(test_use_stream),
	    cmocka_unit_test(test_chunk_auto),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
