/* RDMA decisions without a device: GID choice as NCCL, RoCE MTU, path MTU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "transport/rdma_policy.h"
#include "util/common.h"

static struct rdma_gid gid(int index, int type, const char *hex)
{
	struct rdma_gid g = {.index = index, .type = type};

	for (int i = 0; i < 16 && hex[2 * i]; i++) {
		unsigned b;

		sscanf(hex + 2 * i, "%2x", &b);
		g.raw[i] = (uint8_t)b;
	}
	return g;
}

#define LL   "fe800000000000000a0027fffe8e1c6d"
#define V4   "00000000000000000000ffff0a000105"
#define V6   "20010db8000000000000000000000001"
#define ZERO "00000000000000000000000000000000"

/* NCCL's default (RoCE v2, AF_INET) wins over table order; empty entries never win. */
static void test_gid_pick(void **state)
{
	struct rdma_gid mlx[] = {gid(0, RDMA_GID_ROCE_V1, LL), gid(1, RDMA_GID_ROCE_V2, LL),
				 gid(2, RDMA_GID_ROCE_V1, V4), gid(3, RDMA_GID_ROCE_V2, V4)};
	struct rdma_gid v6[] = {gid(0, RDMA_GID_ROCE_V2, LL), gid(1, RDMA_GID_ROCE_V2, V6)};
	struct rdma_gid ll[] = {gid(0, RDMA_GID_ROCE_V1, LL), gid(1, RDMA_GID_ROCE_V2, LL),
				gid(2, RDMA_GID_ROCE_V2, ZERO)};
	struct rdma_gid none[] = {gid(0, RDMA_GID_ROCE_V2, ZERO)};
	char buf[64];

	(void)state;
	assert_int_equal(rdma_gid_pick(mlx, 4), 3);
	assert_int_equal(rdma_gid_score(&mlx[3]), 4);
	assert_int_equal(rdma_gid_pick(v6, 2), 1);
	assert_int_equal(rdma_gid_pick(ll, 3), 1);
	assert_int_equal(rdma_gid_score(&ll[1]), 2);
	assert_int_equal(rdma_gid_pick(none, 1), -1);
	assert_string_equal(rdma_gid_str(mlx[3].raw, buf, sizeof(buf)), "::ffff:10.0.1.5");
}

static void test_mtu(void **state)
{
	static const struct {
		int netdev, iboe;
	} iboe[] = {{1500, 1024}, {9000, 4096}, {4200, 4096}, {4096, 2048}, {4183, 2048},
		    {4184, 4096}, {576, 256}, {300, 0}};
	static const struct {
		int local, remote, req, want;
	} path[] = {{4096, 4096, 0, 4096}, {4096, 2048, 0, 2048}, {4096, 4096, 1024, 1024},
		    {1024, 4096, 2048, 1024}, {4096, 4096, 3000, 2048}};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(iboe); i++)
		assert_int_equal(rdma_iboe_mtu(iboe[i].netdev), iboe[i].iboe);
	for (size_t i = 0; i < ARRAY_SIZE(path); i++)
		assert_int_equal(rdma_path_mtu(path[i].local, path[i].remote, path[i].req),
				 path[i].want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gid_pick),
	    cmocka_unit_test(test_mtu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
