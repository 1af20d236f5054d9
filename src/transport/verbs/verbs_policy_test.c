/* The verbs decisions held against NCCL's net_ib, without a NIC (verbs_policy.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "transport/verbs/verbs_policy.h"
#include "util/common.h"

/* NCCL reg.cc: LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ, + RELAXED_ORDERING when enabled. */
static void test_access(void **state)
{
	(void)state;
	assert_int_equal(verbs_mr_access(false),
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	assert_int_equal(verbs_mr_access(true), verbs_mr_access(false) | IBV_ACCESS_RELAXED_ORDERING);
	/* optional: libibverbs drops it where unsupported instead of failing the MR */
	assert_true(IBV_ACCESS_RELAXED_ORDERING >= IBV_ACCESS_OPTIONAL_FIRST);
}

/* NCCL connect.cc ncclIbQpRtr: RoCE always global; IB only across subnets or on demand. */
static void test_ah_global(void **state)
{
	static const uint8_t a[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
	static const uint8_t b[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9};
	static const uint8_t c[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 1, 9, 9, 9, 9, 9, 9, 9, 9};

	(void)state;
	assert_true(verbs_ah_global(IBV_LINK_LAYER_ETHERNET, a, b, 0));
	assert_false(verbs_ah_global(IBV_LINK_LAYER_INFINIBAND, a, b, 0));
	assert_true(verbs_ah_global(IBV_LINK_LAYER_INFINIBAND, a, c, 0));
	assert_true(verbs_ah_global(IBV_LINK_LAYER_INFINIBAND, a, b, IBV_QPF_GRH_REQUIRED));
}

/* NCCL's RTS attributes, with our one deliberate difference (retry_cnt 6, see the header). */
static void test_qp_attrs(void **state)
{
	(void)state;
	assert_int_equal(VERBS_QP_TIMEOUT, 20);
	assert_int_equal(VERBS_QP_RNR_RETRY, 7);
	assert_int_equal(VERBS_QP_MIN_RNR_TIMER, 12);
	assert_int_equal(VERBS_QP_RD_ATOMIC, 1);
	assert_int_equal(VERBS_QP_HOP_LIMIT, 255);
	assert_true(VERBS_QP_RETRY < 7);
	/* 4.096 us x 2^timeout per try, retry + 1 tries, inside the 60 s default timeout */
	assert_true(4.096e-6 * (1 << VERBS_QP_TIMEOUT) * (VERBS_QP_RETRY + 1) < 60.0);
}

/* Error completions carry a cause where one is known (NCCL's printIbWcStatusHint and more). */
static void test_wc_hints(void **state)
{
	(void)state;
	assert_non_null(strstr(verbs_wc_hint(IBV_WC_LOC_PROT_ERR), "ACS"));
	assert_non_null(strstr(verbs_wc_hint(IBV_WC_RETRY_EXC_ERR), "no ACK"));
	assert_non_null(strstr(verbs_wc_hint(IBV_WC_WR_FLUSH_ERR), "earlier error"));
	assert_string_equal(verbs_wc_hint(IBV_WC_SUCCESS), "");
}

/* The IB spec's local ACK timeout: 4.096 us x 2^t a try, retry_cnt + 1 tries. */
static void test_rc_budget(void **state)
{
	(void)state;
	/* qp_timeout 18 (the Soft-RoCE bed): 1.074 s a try, 7 tries */
	assert_int_equal(verbs_rc_budget_ns(18, 6), 7 * 1073741824ull);
	/* 0 is the default exponent 20: 4.29 s a try, ~30 s, inside the 60 s launch timeout */
	assert_int_equal(verbs_rc_budget_ns(0, VERBS_QP_RETRY), verbs_rc_budget_ns(20, 6));
	assert_true(verbs_rc_budget_ns(0, VERBS_QP_RETRY) > 30000000000ull);
	assert_true(verbs_rc_budget_ns(0, VERBS_QP_RETRY) < 30100000000ull);
	/* given up at twice the promise, never sooner than 5 s */
	assert_int_equal(verbs_lost_after_ns(verbs_rc_budget_ns(18, 6)), 14 * 1073741824ull);
	assert_int_equal(verbs_lost_after_ns(verbs_rc_budget_ns(8, 6)), 5000000000ull);
}

/* The watchdog counts time without a completion only while work is outstanding. */
static void test_qwatch(void **state)
{
	struct verbs_qwatch w = {0};

	(void)state;
	assert_int_equal(verbs_qwatch_look(&w, 0, 0, 100), 0); /* empty: nothing to wait on */
	assert_int_equal(verbs_qwatch_look(&w, 0, 2, 200), 0); /* work seen: the count starts */
	assert_int_equal(verbs_qwatch_look(&w, 0, 2, 900), 700);
	assert_int_equal(verbs_qwatch_look(&w, 0, 5, 1000), 800); /* more posted: still stuck */
	assert_int_equal(verbs_qwatch_look(&w, 1, 4, 1100), 0);	/* a completion: moving */
	assert_int_equal(verbs_qwatch_look(&w, 1, 4, 1500), 400);
	assert_int_equal(verbs_qwatch_look(&w, 5, 0, 1600), 0); /* drained */
	/* long idle, then work again with no completion in between: counted from now */
	assert_int_equal(verbs_qwatch_look(&w, 5, 1, 90000), 0);
	assert_int_equal(verbs_qwatch_look(&w, 5, 1, 90050), 50);
	/* what the timeout line reads: the same count, w untouched */
	assert_int_equal(verbs_qwatch_stuck(&w, 5, 1, 90070), 70);
	assert_int_equal(verbs_qwatch_stuck(&w, 6, 1, 90070), 0);
	assert_int_equal(w.since, 90000);
}

static void test_mtu_enum(void **state)
{
	static const struct {
		int bytes;
		enum ibv_mtu m;
	} rows[] = {{4096, IBV_MTU_4096}, {9000, IBV_MTU_4096}, {2048, IBV_MTU_2048},
		    {3000, IBV_MTU_2048}, {1024, IBV_MTU_1024}, {512, IBV_MTU_512},
		    {256, IBV_MTU_256}, {100, IBV_MTU_256}};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		assert_int_equal(verbs_mtu_enum(rows[i].bytes), rows[i].m);
	assert_int_equal(verbs_mtu_bytes(IBV_MTU_4096), 4096);
	assert_int_equal(verbs_mtu_bytes(IBV_MTU_256), 256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_access),   cmocka_unit_test(test_ah_global),
	    cmocka_unit_test(test_qp_attrs), cmocka_unit_test(test_wc_hints),
	    cmocka_unit_test(test_mtu_enum), cmocka_unit_test(test_rc_budget),
	    cmocka_unit_test(test_qwatch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
