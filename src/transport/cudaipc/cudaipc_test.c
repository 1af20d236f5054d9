/*
 * cudaipc transport tests without a GPU: forked ranks run the real protocol (control
 * segments, CTS matching, FIN, mapping cache, dead peer, abort) over an emulated device
 * whose "device memory" is a shared mapping made before fork, so an IPC handle can be
 * the address itself, and whose copies finish a few polls after they are queued.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "transport/cudaipc/cudaipc_priv.h"
#include "transport/tp_test_cases.h"
#include "util/common.h"

extern const struct transport_ops cudaipc_ops;

#define ARENA_BYTES    (1ull << 30)
#define EMU_MAX_ALLOCS 256

/* Test-only process state: the arena (inherited by the forked ranks) and this
 * process's emulated allocations. */
static char *arena;
static struct {
	char *base;
	size_t bytes;
} emu_allocs[EMU_MAX_ALLOCS];
static int emu_nallocs, emu_opens, emu_closes;
static size_t emu_bump;

struct emu_event {
	int polls_left;
};

static bool emu_available(void)
{
	return true;
}

/* Rank r allocates from its own slice of the arena. */
static void *emu_alloc(int rank, int nranks, size_t bytes)
{
	size_t slice = ARENA_BYTES / (size_t)nranks, off = GS_ALIGN_UP(emu_bump, 4096);
	char *p = arena + (size_t)rank * slice + off;

	if (off + bytes > slice || emu_nallocs == EMU_MAX_ALLOCS)
		return NULL;
	emu_bump = off + bytes;
	emu_allocs[emu_nallocs].base = p;
	emu_allocs[emu_nallocs++].bytes = bytes;
	return p;
}

static int emu_range(const void *p, void **base, size_t *bytes)
{
	for (int i = 0; i < emu_nallocs; i++)
		if ((const char *)p >= emu_allocs[i].base &&
		    (const char *)p < emu_allocs[i].base + emu_allocs[i].bytes) {
			*base = emu_allocs[i].base;
			*bytes = emu_allocs[i].bytes;
			return 0;
		}
	return -EINVAL;
}

static int emu_export(void *base, struct gpu_ipc_handle *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->bytes, &base, sizeof(base));
	memcpy(h->bytes + 8, "emu-ipc", 8);
	return 0;
}

static int emu_open(const struct gpu_ipc_handle *h, void **ptr)
{
	if (memcmp(h->bytes + 8, "emu-ipc", 8))
		return -EINVAL;
	memcpy(ptr, h->bytes, sizeof(*ptr));
	emu_opens++;
	return 0;
}

static int emu_close(void *ptr GS_UNUSED)
{
	emu_closes++;
	return 0;
}

static struct gpu_stream *emu_stream_create(void)
{
	return (struct gpu_stream *)calloc(1, 8);
}

static void emu_stream_destroy(struct gpu_stream *s)
{
	free(s);
}

static int emu_copy(void *dst, const void *src, size_t bytes, struct gpu_stream *s GS_UNUSED)
{
	memcpy(dst, src, bytes);
	return 0;
}

static struct gpu_event *emu_event_create(void)
{
	return (struct gpu_event *)calloc(1, sizeof(struct emu_event));
}

static void emu_event_destroy(struct gpu_event *e)
{
	free(e);
}

static int emu_event_record(struct gpu_event *e, struct gpu_stream *s GS_UNUSED)
{
	((struct emu_event *)e)->polls_left = 2; /* the copy "runs" for two queries */
	return 0;
}

static int emu_event_query(struct gpu_event *e)
{
	struct emu_event *ev = (struct emu_event *)e;

	return ev->polls_left-- > 0 ? -EBUSY : 0;
}

static const struct cipc_dev emu_dev = {
    .available = emu_available,
    .mem_range = emu_range,
    .ipc_export = emu_export,
    .ipc_open = emu_open,
    .ipc_close = emu_close,
    .stream_create = emu_stream_create,
    .stream_destroy = emu_stream_destroy,
    .copy = emu_copy,
    .event_create = emu_event_create,
    .event_destroy = emu_event_destroy,
    .event_record = emu_event_record,
    .event_query = emu_event_query,
};

static int emu_open_t(struct transport *t, const struct transport_env *env)
{
	return cudaipc_open_with(t, env, &emu_dev);
}

static struct transport_ops emu_ops;

static void run_ok(int nranks, tpt_body body, void *arg)
{
	struct transport_opts o = {.kind = TP_CUDAIPC};
	int st[TPT_MAX_RANKS];

	tpt_run(&emu_ops, nranks, &o, 5000, body, arg, st);
	for (int i = 0; i < nranks; i++) {
		assert_true(WIFEXITED(st[i]));
		assert_int_equal(WEXITSTATUS(st[i]), 0);
	}
}

/*
 * Every size to every peer, receives in separate allocations per peer (so several
 * mappings are used), at an offset inside them; posting order from arg.
 */
static int body_exchange(struct tpt_rank *r, void *arg)
{
	enum tpt_order order = *(enum tpt_order *)arg;
	int me = r->rank, n = r->nranks, ncs = 0, want = 2 * (n - 1) * (int)TPT_NSIZES;
	size_t offs[TPT_NSIZES + 1];
	struct tp_completion *cs = calloc((size_t)want + 32, sizeof(*cs));
	struct tp_mr *smr, *rmr[TPT_MAX_RANKS];
	char *sbuf, *rbuf[TPT_MAX_RANKS];

	offs[0] = 0;
	for (size_t k = 0; k < TPT_NSIZES; k++)
		offs[k + 1] = offs[k] + tpt_sizes[k];
	sbuf = emu_alloc(me, n, offs[TPT_NSIZES] * n);
	TP_CHECK(sbuf && cs);
	for (int p = 0; p < n; p++)
		for (size_t k = 0; k < TPT_NSIZES; k++)
			for (size_t i = 0; i < tpt_sizes[k]; i++)
				sbuf[p * offs[TPT_NSIZES] + offs[k] + i] =
				    (char)tpt_byte(me, p, 1000u * order + k, i);
	TP_CHECK(r->t.ops->mr_reg(&r->t, sbuf, offs[TPT_NSIZES] * n, MEM_CUDA, &smr) == 0);
	for (int p = 0; p < n; p++) {
		/* 100 bytes of allocation before the registered range: offsets must carry */
		rbuf[p] = emu_alloc(me, n, offs[TPT_NSIZES] + 100);
		TP_CHECK(rbuf[p]);
		memset(rbuf[p], 0, offs[TPT_NSIZES] + 100);
		rbuf[p] += 100;
		TP_CHECK(r->t.ops->mr_reg(&r->t, rbuf[p], offs[TPT_NSIZES], MEM_CUDA, &rmr[p]) ==
			 0);
	}
	for (int pass = 0; pass < 2; pass++)
		for (int p = 0; p < n; p++)
			for (size_t j = 0; p != me && j < TPT_NSIZES; j++) {
				bool send = (order == TPT_SEND_FIRST) == (pass == 0);
				size_t k = order == TPT_MIXED && !send ? TPT_NSIZES - 1 - j : j;
				uint64_t tag = 1000u * order + k;

				TP_CHECK(
				    tpt_post_retry(r, send, p, tag, send ? smr : rmr[p],
						   send ? p * offs[TPT_NSIZES] + offs[k] : offs[k],
						   tpt_sizes[k],
						   (uint64_t)send << 16 | (uint64_t)p << 8 | k, cs,
						   &ncs) == 0);
			}
	TP_CHECK(tpt_wait_n(r, cs, &ncs, want) == 0);
	for (int i = 0; i < want; i++) {
		size_t k = cs[i].cookie & 0xff;

		TP_CHECK(cs[i].status == 0 && cs[i].len == tpt_sizes[k]);
		TP_CHECK(cs[i].is_send == !!(cs[i].cookie >> 16));
		TP_CHECK(cs[i].peer == (int)((cs[i].cookie >> 8) & 0xff));
	}
	for (int p = 0; p < n; p++)
		for (size_t k = 0; p != me && k < TPT_NSIZES; k++)
			for (size_t i = 0; i < tpt_sizes[k]; i++)
				TP_CHECK((uint8_t)rbuf[p][offs[k] + i] ==
					 tpt_byte(p, me, 1000u * order + k, i));
	/* each peer mapped each of my receive allocations once: n - 1 opens per peer here */
	TP_CHECK(emu_opens == n - 1);
	r->t.ops->mr_dereg(&r->t, smr);
	for (int p = 0; p < n; p++)
		r->t.ops->mr_dereg(&r->t, rmr[p]);
	free(cs);
	return tpt_barrier(r) == 0 ? 0 : 1;
}

/* 10000 small messages on 5 tags (more than CTS queue, events and requests hold), into
 * 100 distinct allocations (more than the mapping cache): FIFO per tag, evictions. */
static int body_many(struct tpt_rank *r, void *arg GS_UNUSED)
{
	enum { N = 10000, MAXLEN = 300, NALLOC = 100 };
	bool sender = r->rank == 0;
	int peer = 1 - r->rank, ncs = 0;
	struct tp_completion *cs = calloc(N + 32, sizeof(*cs));
	struct tp_mr *mr[NALLOC];
	char *buf[NALLOC];

	TP_CHECK(cs);
	for (int a = 0; a < NALLOC; a++) {
		buf[a] = emu_alloc(r->rank, 2, (size_t)(N / NALLOC) * MAXLEN);
		TP_CHECK(buf[a]);
		TP_CHECK(r->t.ops->mr_reg(&r->t, buf[a], (size_t)(N / NALLOC) * MAXLEN, MEM_CUDA,
					  &mr[a]) == 0);
	}
	for (size_t i = 0; sender && i < N; i++)
		for (size_t k = 0; k < MAXLEN; k++)
			buf[i % NALLOC][i / NALLOC * MAXLEN + k] = (char)tpt_byte(0, 1, i, k);
	for (size_t i = 0; i < N; i++)
		TP_CHECK(tpt_post_retry(r, sender, peer, i % 5, mr[i % NALLOC], i / NALLOC * MAXLEN,
					i * 37 % MAXLEN + 1, i, cs, &ncs) == 0);
	TP_CHECK(tpt_wait_n(r, cs, &ncs, N) == 0);
	for (int i = 0; i < N; i++)
		TP_CHECK(cs[i].status == 0 && cs[i].len == cs[i].cookie * 37 % MAXLEN + 1);
	for (size_t i = 0; !sender && i < N; i++)
		for (size_t k = 0; k < i * 37 % MAXLEN + 1; k++)
			TP_CHECK((uint8_t)buf[i % NALLOC][i / NALLOC * MAXLEN + k] ==
				 tpt_byte(0, 1, i, k));
	/* the sender mapped all 100, evicting: at least 100 opens, 100 - CIPC_MAPS closes */
	TP_CHECK(!sender || (emu_opens >= NALLOC && emu_closes >= NALLOC - CIPC_MAPS));
	for (int a = 0; a < NALLOC; a++)
		r->t.ops->mr_dereg(&r->t, mr[a]);
	free(cs);
	return tpt_barrier(r) == 0 ? 0 : 1;
}

/* The common message-size checks on device memory; host memory cannot be registered. */
static int body_msgsize(struct tpt_rank *r, void *arg GS_UNUSED)
{
	static char host[64];
	char *buf = emu_alloc(r->rank, 2, 256);
	struct tp_mr *hmr = NULL;

	TP_CHECK(buf);
	TP_CHECK(r->t.ops->mr_reg(&r->t, host, sizeof(host), MEM_HOST, &hmr) == -ENOTSUP);
	return tpt_msgsize(r, buf, MEM_CUDA, -EMSGSIZE);
}

/* The held-tag case (tp_test_util.h) on device memory. */
static int body_held_tag(struct tpt_rank *r, void *arg GS_UNUSED)
{
	enum { N = 3 * CIPC_CAP };
	char *buf = emu_alloc(r->rank, 2, (size_t)(N + 1) * TPT_HELD_LEN);

	TP_CHECK(buf);
	return tpt_held_tag(r, buf, MEM_CUDA, N);
}

/* Rank 1 dies; rank 0's poll on a receive from it fails with -ECONNRESET in time. */
static int body_killed(struct tpt_rank *r, void *arg)
{
	int timeout_ms = *(int *)arg, rc;
	char *buf = emu_alloc(r->rank, 2, 4096);
	struct tp_completion c;
	struct tp_mr *mr;

	TP_CHECK(buf && r->t.ops->mr_reg(&r->t, buf, 4096, MEM_CUDA, &mr) == 0);
	TP_CHECK(tpt_barrier(r) == 0);
	if (r->rank == 1)
		raise(SIGKILL);
	rc = r->t.ops->post_recv(&r->t, 1, 1, mr, 0, 4096, 1);
	if (rc == 0)
		rc = tpt_wait1(r, &c, timeout_ms);
	TP_CHECK(rc == -ECONNRESET);
	return 0;
}

/* The abort case (tp_test_util.h) on device memory. */
static int body_abort(struct tpt_rank *r, void *arg GS_UNUSED)
{
	char *buf = emu_alloc(r->rank, 2, 64);

	TP_CHECK(buf);
	return tpt_abort(r, buf, MEM_CUDA);
}

static void test_exchange(void **state)
{
	static const struct {
		int nranks;
		enum tpt_order order;
	} cases[] = {{2, TPT_RECV_FIRST}, {2, TPT_SEND_FIRST}, {2, TPT_MIXED},
		     {3, TPT_MIXED},	  {4, TPT_SEND_FIRST}, {4, TPT_RECV_FIRST}};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		enum tpt_order order = cases[i].order;

		run_ok(cases[i].nranks, body_exchange, &order);
	}
	assert_int_equal(tpt_count_segments(), 0);
}

static void test_many_small(void **state)
{
	(void)state;
	run_ok(2, body_many, NULL);
}

static void test_msgsize(void **state)
{
	(void)state;
	run_ok(2, body_msgsize, NULL);
}

static void test_held_tag(void **state)
{
	(void)state;
	run_ok(2, body_held_tag, NULL);
}

static void test_killed_peer(void **state)
{
	struct transport_opts o = {.kind = TP_CUDAIPC};
	int timeout_ms = 3000, st[2];

	(void)state;
	tpt_run(&emu_ops, 2, &o, timeout_ms, body_killed, &timeout_ms, st);
	assert_true(WIFEXITED(st[0]));
	assert_int_equal(WEXITSTATUS(st[0]), 0);
	assert_true(WIFSIGNALED(st[1]));
	assert_int_equal(tpt_count_segments(), 0);
}

static void test_abort(void **state)
{
	(void)state;
	run_ok(2, body_abort, NULL);
}

static void test_connect_timeout(void **state)
{
	struct transport_opts o = {.kind = TP_CUDAIPC};
	double ms = 0;

	(void)state;
	assert_int_equal(tpt_connect_alone(&emu_ops, 0, 300, &o, &ms), -ETIMEDOUT);
	assert_true(ms >= 290 && ms < 1500);
	assert_int_equal(tpt_count_segments(), 0);
}

/* The real ops: asked for by name and on one host only; never for tcp/auto runs. */
static void test_can_connect(void **state)
{
	int hosts[3] = {7, 7, 9};
	bool use[3] = {false, true, true};
	struct transport_opts o = {.kind = TP_SHM};
	struct transport_env env = {
	    .rank = 0, .nranks = 3, .host_of_rank = hosts, .use_peer = use, .opts = &o};

	(void)state;
	assert_false(cudaipc_ops.can_connect(&env, 1)); /* not asked for: no GPU probe */
	o.kind = TP_AUTO;
	assert_false(cudaipc_ops.can_connect(&env, 1));
	o.kind = TP_CUDAIPC;
	assert_false(cudaipc_ops.can_connect(&env, 0)); /* self */
	assert_false(cudaipc_ops.can_connect(&env, 2)); /* other host */
	/* the registry hands out cudaipc's table, completed: the same ops */
	assert_ptr_equal(transport_find(TP_CUDAIPC)->can_connect, cudaipc_ops.can_connect);
	assert_ptr_equal(transport_find(TP_CUDAIPC)->post_send, cudaipc_ops.post_send);
	assert_ptr_equal(transport_by_name("cudaipc"), transport_find(TP_CUDAIPC));
}

static int setup(void **state)
{
	(void)state;
	arena = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED)
		return -1;
	emu_ops = cudaipc_ops;
	emu_ops.open = emu_open_t;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	munmap(arena, ARENA_BYTES);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exchange),	    cmocka_unit_test(test_many_small),
	    cmocka_unit_test(test_msgsize),	    cmocka_unit_test(test_held_tag),
	    cmocka_unit_test(test_killed_peer),	    cmocka_unit_test(test_abort),
	    cmocka_unit_test(test_connect_timeout), cmocka_unit_test(test_can_connect),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
