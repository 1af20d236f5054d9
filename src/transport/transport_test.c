/* Registry tests: lookup by kind and name, preference order, stubs for missing ops. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "transport/transport.h"

static void test_lookup(void **state)
{
	static const struct {
		int kind;
		const char *name;
	} rows[] = {{TP_TCP, "tcp"}, {TP_SHM, "shm"}};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct transport_ops *o = transport_find(rows[i].kind);

		assert_non_null(o);
		assert_string_equal(o->name, rows[i].name);
		assert_ptr_equal(transport_by_name(rows[i].name), o);
		assert_string_equal(transport_kind_name(rows[i].kind), rows[i].name);
	}
	assert_null(transport_find(TP_AUTO));
	assert_null(transport_by_name("carrier-pigeon"));
	assert_null(transport_by_name(NULL));
	assert_string_equal(transport_kind_name(TP_AUTO), "auto");
	assert_string_equal(transport_kind_name(TP_ROCE), "roce");
	assert_string_equal(transport_kind_name(-1), "unknown");
	assert_string_equal(transport_kind_name(TP_KIND_COUNT), "unknown");
}

static void test_order(void **state)
{
	size_t n = transport_count(), shm = n, tcp = n;

	(void)state;
	assert_true(n >= 2);
	for (size_t i = 0; i < n; i++) {
		const struct transport_ops *o = transport_at(i);

		assert_non_null(o);
		assert_non_null(o->open);
		assert_non_null(o->poll);
		if (o->kind == TP_SHM)
			shm = i;
		if (o->kind == TP_TCP)
			tcp = i;
	}
	assert_null(transport_at(n));
	/* TP_AUTO takes the first that can connect: shm must be preferred over tcp */
	assert_true(shm < tcp && tcp < n);
}

static void test_complete_stubs(void **state)
{
	struct transport_ops partial = {.name = "half", .kind = TP_NCCL}, full;
	struct transport t = {.ops = &full};
	struct transport_env env = {.rank = 0, .nranks = 2};
	struct tp_completion c;
	struct tp_mr *mr = NULL;
	struct tp_stats st;
	size_t len = 0;

	(void)state;
	transport_ops_complete(&full, &partial);
	assert_string_equal(full.name, "half");
	assert_int_equal(full.kind, TP_NCCL);
	assert_false(full.can_connect(&env, 1));
	assert_int_equal(full.open(&t, &env), -ENOTSUP);
	assert_int_equal(full.endpoint(&t, NULL, &len), -ENOTSUP);
	assert_int_equal(full.connect(&t, NULL), -ENOTSUP);
	assert_int_equal(full.mr_reg(&t, NULL, 0, MEM_HOST, &mr), -ENOTSUP);
	full.mr_dereg(&t, mr);
	assert_int_equal(full.post_send(&t, 1, 0, mr, 0, 0, 0), -ENOTSUP);
	assert_int_equal(full.post_recv(&t, 1, 0, mr, 0, 0, 0), -ENOTSUP);
	assert_int_equal(full.poll(&t, &c, 1), -ENOTSUP);
	assert_int_equal(full.path_info(&t, NULL), -ENOTSUP);
	assert_int_equal(full.stats(&t, &st), -ENOTSUP);
	full.close(&t);
	/* complete ops are kept as they are */
	transport_ops_complete(&full, transport_find(TP_TCP));
	assert_ptr_equal(full.open, transport_find(TP_TCP)->open);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lookup),
	    cmocka_unit_test(test_order),
	    cmocka_unit_test(test_complete_stubs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
