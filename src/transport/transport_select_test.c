/* Pair selection: preference order, both ends must agree, unreachable pairs named. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "transport/transport_select.h"
#include "util/common.h"

#define B(k) (1u << (k))

static void test_candidates(void **state)
{
	int kinds[TP_KIND_COUNT], n, i;

	(void)state;
	n = transport_select_candidates(TP_AUTO, kinds, TP_KIND_COUNT);
	assert_int_equal(n, (int)transport_count());
	for (i = 0; i < n; i++) {
		assert_int_equal(kinds[i], transport_at(i)->kind); /* registry order */
		assert_int_not_equal(kinds[i], TP_NCCL);
	}
	n = transport_select_candidates(TP_TCP, kinds, TP_KIND_COUNT);
	assert_int_equal(n, 1);
	assert_int_equal(kinds[0], TP_TCP);
	assert_int_equal(transport_select_candidates(TP_NCCL, kinds, TP_KIND_COUNT), 0);
	assert_int_equal(transport_select_candidates(TP_AUTO, kinds, 1), 1);
}

/* 4 ranks, two hosts {0,1} {2,3}: shm inside a host, roce across, tcp everywhere. */
static void test_two_hosts(void **state)
{
	const int kinds[] = { TP_CUDAIPC, TP_SHM, TP_IB, TP_ROCE, TP_TCP };
	uint32_t can[16];
	int pk[16], a, b, bad_a = -1, bad_b = -1;

	(void)state;
	for (a = 0; a < 4; a++) {
		for (b = 0; b < 4; b++) {
			bool same = a / 2 == b / 2;

			can[a * 4 + b] = a == b ? 0 : B(TP_TCP) | (same ? B(TP_SHM) : B(TP_ROCE));
		}
	}
	assert_int_equal(transport_select_pairs(kinds, 5, 4, can, pk, &bad_a, &bad_b), 0);
	for (a = 0; a < 4; a++) {
		for (b = 0; b < 4; b++) {
			int want = a == b ? -1 : a / 2 == b / 2 ? TP_SHM : TP_ROCE;

			assert_int_equal(pk[a * 4 + b], want);
		}
	}
	/* one end without roce: that pair falls back to tcp, both ends alike */
	can[3 * 4 + 0] &= ~B(TP_ROCE);
	assert_int_equal(transport_select_pairs(kinds, 5, 4, can, pk, &bad_a, &bad_b), 0);
	assert_int_equal(pk[0 * 4 + 3], TP_TCP);
	assert_int_equal(pk[3 * 4 + 0], TP_TCP);
	assert_int_equal(pk[1 * 4 + 3], TP_ROCE);
}

static void test_unreachable(void **state)
{
	const int shm_only[] = { TP_SHM };
	uint32_t can[9];
	int pk[9], a, bad_a = -1, bad_b = -1;

	(void)state;
	for (a = 0; a < 9; a++)
		can[a] = a % 4 ? B(TP_SHM) : 0; /* diagonal 0, 4, 8 */
	assert_int_equal(transport_select_pairs(shm_only, 1, 3, can, pk, &bad_a, &bad_b), 0);
	can[1 * 3 + 2] = 0; /* rank 1 cannot reach rank 2 */
	assert_int_equal(transport_select_pairs(shm_only, 1, 3, can, pk, &bad_a, &bad_b),
			 -EHOSTUNREACH);
	assert_int_equal(bad_a, 1);
	assert_int_equal(bad_b, 2);
	/* a single rank has no pairs */
	assert_int_equal(transport_select_pairs(shm_only, 1, 1, can, pk, &bad_a, &bad_b), 0);
	assert_int_equal(pk[0], -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_candidates),
		cmocka_unit_test(test_two_hosts),
		cmocka_unit_test(test_unreachable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
