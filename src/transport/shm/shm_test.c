/* shm transport tests: forked ranks on one host (exchange, lengths, dead peer, abort, leaks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "transport/shm/shm_pair.h"
#include "transport/tp_test_cases.h"

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

static void test_bandwidth(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .shm_ring = 8u << 20, .slot_size = 1u << 20};

	(void)state;
	run_ok(2, &o, tpt_body_bw, "shm");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exchange),	cmocka_unit_test(test_many_small),
	    cmocka_unit_test(test_msgsize),	cmocka_unit_test(test_held_tag),
	    cmocka_unit_test(test_killed_peer), cmocka_unit_test(test_connect_timeout),
	    cmocka_unit_test(test_abort),	cmocka_unit_test(test_can_connect),
	    cmocka_unit_test(test_bandwidth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
