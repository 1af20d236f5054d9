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
	/* one vocabulary: every kind has one row with a name and help */
	for (int k = 0; k < TP_KIND_COUNT; k++) {
		size_t i, nrows = 0;

		for (i = 0; transport_kind_at(i); i++) {
			if (transport_kind_at(i)->kind != k)
				continue;
			nrows++;
			assert_string_equal(transport_kind_at(i)->name, transport_kind_name(k));
			assert_true(strlen(transport_kind_at(i)->help) > 0);
		}
		assert_int_equal(nrows, 1);
	}
	/* each transport's ops name is its kind's name in that one vocabulary */
	for (size_t i = 0; transport_at(i); i++)
		assert_string_equal(transport_at(i)->name, transport_kind_name(transport_at(i)->kind));
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
		/* complete at registration: callers never test an op for NULL */
		assert_non_null(o->chunk_auto);
		assert_non_null(o->post_recv_reduce);
		assert_non_null(o->wait);
		assert_non_null(o->peer_on_cpu);
		assert_non_null(o->coll_begin);
		assert_non_null(o->path_info);
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
	assert_false(full.peer_on_cpu(&t, 0));
	assert_int_equal(full.stats(&t, &st), -ENOTSUP);
	/* optional ops say "not this transport"; chunk_auto gives the default */
	assert_int_equal(full.post_recv_reduce(&t, 1, 0, mr, 0, 0, DT_F32, NULL, 0), -EOPNOTSUPP);
	assert_int_equal(full.wait(&t, 1), -EOPNOTSUPP);
	assert_int_equal(full.pending(&t, 1, NULL, 0), -EOPNOTSUPP);
	assert_int_equal(full.chunk_auto(1 << 20, 2), TP_CHUNK_DEFAULT);
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
