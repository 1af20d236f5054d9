/* Verbs ops without a device: the table rows, can_connect says no, open fails cleanly. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "transport/verbs/verbs.h"

static bool have_rdma_device(void)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *e;
	bool any = false;

	if (!d)
		return false;
	while ((e = readdir(d)))
		any |= e->d_name[0] != '.';
	closedir(d);
	return any;
}

static void test_ops_rows(void **state)
{
	(void)state;
	assert_string_equal(ib_ops.name, "ib");
	assert_int_equal(ib_ops.kind, TP_IB);
	assert_string_equal(roce_ops.name, "roce");
	assert_int_equal(roce_ops.kind, TP_ROCE);
	assert_non_null(ib_ops.can_connect);
	assert_non_null(ib_ops.open);
	assert_non_null(roce_ops.can_connect);
	assert_non_null(roce_ops.open);
}

/* Every device spelling must be refused the same way when the host has no RDMA device. */
static void test_no_device(void **state)
{
	static const char *const devices[] = {"auto", "", "mlx5_0", "mlx5_0:1", "rxe0:2"};
	const struct transport_ops *const ops[] = {&ib_ops, &roce_ops};
	bool use[2] = {false, true};
	int host[2] = {0, 1};
	size_t i, k;

	(void)state;
	if (have_rdma_device())
		skip();
	for (k = 0; k < 2; k++) {
		for (i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
			struct transport_opts o = {.kind = ops[k]->kind,
						   .gid_index = -1,
						   .qps_per_peer = 1,
						   .qp_depth = 64};
			struct transport_env env = {.rank = 0,
						    .nranks = 2,
						    .host_of_rank = host,
						    .use_peer = use,
						    .timeout_ms = 1000,
						    .opts = &o,
						    .numa_node = -1};
			struct transport t = {.ops = ops[k], .env = &env};
			int ret;

			strcpy(o.device, devices[i]);
			assert_false(ops[k]->can_connect(&env, 1));
			ret = ops[k]->open(&t, &env);
			assert_true(ret == -ENODEV || ret == -ENOTSUP);
			if (ops[k]->close)
				ops[k]->close(&t); /* the contract: safe after a failed open */
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ops_rows),
	    cmocka_unit_test(test_no_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
