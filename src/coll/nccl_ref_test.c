/*
 * NCCL reference without NCCL: an absent libnccl.so.2 is one error and -ENOENT, after
 * the rank still took part in the unique id broadcast; bad arguments are refused.
 * (tests/multigpu/ runs the real library on a GPU.)
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "coll/nccl_ref.h"

struct fake_bs {
	int calls;
	size_t len;
};

static int fake_bcast(void *ctx, void *buf, size_t len)
{
	struct fake_bs *b = ctx;

	(void)buf;
	b->calls++;
	b->len = len;
	return 0;
}

static void test_absent_library(void **state)
{
	struct fake_bs b = {0};
	struct nccl_ref *n = NULL;
	void *probe = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);

	(void)state;
	if (probe) {
		dlclose(probe);
		skip(); /* NCCL is installed here: tests/multigpu covers it */
	}
	for (int rank = 0; rank < 2; rank++) {
		b.calls = 0;
		assert_int_equal(nccl_ref_open(rank, 2, rank, fake_bcast, &b, &n), -ENOENT);
		assert_null(n);
		assert_int_equal(b.calls, 1); /* took part in the broadcast anyway */
		assert_int_equal(b.len, 128); /* sizeof(ncclUniqueId) */
	}
}

static void test_bad_arguments(void **state)
{
	struct fake_bs b = {0};
	struct nccl_ref *n = NULL;

	(void)state;
	assert_int_equal(nccl_ref_open(2, 2, 0, fake_bcast, &b, &n), -EINVAL);
	assert_int_equal(nccl_ref_open(0, 0, 0, fake_bcast, &b, &n), -EINVAL);
	assert_int_equal(nccl_ref_open(0, 2, 0, NULL, &b, &n), -EINVAL);
	assert_int_equal(b.calls, 0);
	assert_int_equal(nccl_ref_allreduce(NULL, NULL, 1, DT_F32, REDOP_SUM, NULL), -EINVAL);
	assert_string_equal(nccl_ref_version(NULL), "");
	nccl_ref_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_absent_library),
	    cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
