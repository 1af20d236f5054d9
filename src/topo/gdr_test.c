/* The GPUDirect RDMA decision on the captured topologies: path class, level, mechanism. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "topo/gdr.h"
#include "topo/test_sysfs.h"
#include "util/common.h"

static const struct {
	const char *fixture;
	int gpu, wire, gdr, level, mode, read, cc, dmabuf;
	const char *nic;
	int ret;
	enum gdr_path_mode want;
	const char *mech, *cls, *reason; /* reason: a substring */
} cases[] = {
	/* tcp and shm always stage */
	{ "dgx-h100", 0, GDR_WIRE_HOST, GPU_ON, GDR_PXB, GDR_MODE_AUTO, GPU_AUTO, 9, 1, "", 0,
	  GDR_PATH_STAGED, "", "", "tcp/shm always stage" },
	{ "dgx-h100", 0, GDR_WIRE_HOST, GPU_AUTO, GDR_SYS, GDR_MODE_AUTO, GPU_AUTO, 9, 1, "", 0,
	  GDR_PATH_STAGED, "", "", "tcp/shm always stage" },
	/* DGX H100: GPU0 - mlx5_0 PIX; dma-buf preferred, Hopper needs no flush */
	{ "dgx-h100", 0, GDR_WIRE_RDMA, GPU_AUTO, GDR_PXB, GDR_MODE_AUTO, GPU_AUTO, 9, 1, "", 0,
	  GDR_PATH_RW, "dmabuf", "PIX", "within gdr_level PXB" },
	{ "dgx-h100", 0, GDR_WIRE_RDMA, GPU_ON, GDR_PXB, GDR_MODE_PEERMEM, GPU_OFF, 9, 1, "mlx5_0", 0,
	  GDR_PATH_WRITE, "peermem", "PIX", "gdr_read = off" },
	{ "dgx-h100", 0, GDR_WIRE_RDMA, GPU_OFF, GDR_PXB, GDR_MODE_AUTO, GPU_AUTO, 9, 1, "", 0,
	  GDR_PATH_STAGED, "", "", "gdr = off" },
	/* a far NIC: GPU0 - mlx5_4 crosses sockets */
	{ "dgx-h100", 0, GDR_WIRE_RDMA, GPU_AUTO, GDR_PXB, GDR_MODE_AUTO, GPU_AUTO, 9, 1, "mlx5_4", 0,
	  GDR_PATH_STAGED, "", "SYS", "path SYS is farther than gdr_level PXB" },
	{ "dgx-h100", 0, GDR_WIRE_RDMA, GPU_ON, GDR_PXB, GDR_MODE_AUTO, GPU_AUTO, 9, 1, "mlx5_4",
	  -EOPNOTSUPP, GDR_PATH_STAGED, "", "SYS",
	  "gdr = on impossible: GPU 0000:1a:00.0 - NIC mlx5_4 path SYS is farther" },
	{ "dgx-h100", 0, GDR_WIRE_RDMA, GPU_ON, GDR_SYS, GDR_MODE_AUTO, GPU_AUTO, 9, 1, "mlx5_4", 0,
	  GDR_PATH_RW, "dmabuf", "SYS", "within gdr_level SYS" },
	/* two sockets, no peermem, kernel 6.8: GPU1 PIX works with dma-buf only */
	{ "two-socket-sys", 1, GDR_WIRE_RDMA, GPU_ON, GDR_PXB, GDR_MODE_AUTO, GPU_AUTO, 9, 1, "", 0,
	  GDR_PATH_RW, "dmabuf", "PIX", "dmabuf" },
	{ "two-socket-sys", 1, GDR_WIRE_RDMA, GPU_ON, GDR_PXB, GDR_MODE_PEERMEM, GPU_AUTO, 9, 1, "",
	  -EOPNOTSUPP, GDR_PATH_STAGED, "", "PIX", "gdr_mode = peermem but neither" },
	{ "two-socket-sys", 1, GDR_WIRE_RDMA, GPU_AUTO, GDR_PXB, GDR_MODE_AUTO, GPU_AUTO, 9, 0, "", 0,
	  GDR_PATH_STAGED, "", "PIX", "cannot export dma-bufs and no nvidia_peermem" },
	{ "two-socket-sys", 0, GDR_WIRE_RDMA, GPU_AUTO, GDR_PHB, GDR_MODE_AUTO, GPU_AUTO, 9, 1, "", 0,
	  GDR_PATH_STAGED, "", "SYS", "farther than gdr_level PHB" },
	/* kernel 5.4 with nv_peer_mem: peermem on Hopper; an A100 too, its receives flushed */
	{ "pxb-node", 0, GDR_WIRE_RDMA, GPU_AUTO, GDR_PXB, GDR_MODE_AUTO, GPU_AUTO, 9, 1, "", 0,
	  GDR_PATH_RW, "peermem", "PXB", "within gdr_level PXB, peermem" },
	{ "pxb-node", 0, GDR_WIRE_RDMA, GPU_AUTO, GDR_PXB, GDR_MODE_AUTO, GPU_AUTO, 8, 1, "", 0,
	  GDR_PATH_RW, "peermem", "PXB", "peermem, receives flushed by loopback RDMA READ" },
	{ "pxb-node", 0, GDR_WIRE_RDMA, GPU_ON, GDR_PXB, GDR_MODE_AUTO, GPU_OFF, 8, 1, "", 0,
	  GDR_PATH_WRITE, "peermem", "PXB", "gdr_read = off, receives flushed by loopback" },
	/* a pre-Hopper GPU that stages anyway (too far) needs no flush */
	{ "pxb-node", 0, GDR_WIRE_RDMA, GPU_ON, GDR_PIX, GDR_MODE_AUTO, GPU_ON, 8, 1, "", -EOPNOTSUPP,
	  GDR_PATH_STAGED, "", "PXB", "gdr = on impossible: GPU 0000:05:00.0 - NIC mlx5_0 path PXB" },
	{ "pxb-node", 0, GDR_WIRE_RDMA, GPU_ON, GDR_PXB, GDR_MODE_DMABUF, GPU_AUTO, 9, 1, "",
	  -EOPNOTSUPP, GDR_PATH_STAGED, "", "PXB", "no dma-buf RDMA (< 5.12)" },
	{ "pxb-node", 0, GDR_WIRE_RDMA, GPU_AUTO, GDR_PIX, GDR_MODE_AUTO, GPU_AUTO, 9, 1, "", 0,
	  GDR_PATH_STAGED, "", "PXB", "farther than gdr_level PIX" },
	{ "pxb-node", 2, GDR_WIRE_RDMA, GPU_AUTO, GDR_PXB, GDR_MODE_AUTO, GPU_OFF, 9, 1, "", 0,
	  GDR_PATH_WRITE, "peermem", "PIX", "gdr_read = off" },
	/* cudaipc: GPU memory directly */
	{ "dgx-h100", 3, GDR_WIRE_IPC, GPU_AUTO, GDR_PXB, GDR_MODE_AUTO, GPU_AUTO, 9, 1, "", 0,
	  GDR_PATH_IPC, "", "", "cudaipc" },
};

static void test_decisions(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct topo *t = topo_load_fixture(cases[i].fixture);
		struct gpu_opts o = { .gdr = cases[i].gdr,
				      .gdr_level = cases[i].level,
				      .gdr_mode = cases[i].mode,
				      .gdr_read = cases[i].read };
		struct gdr_gpu g = { .gpu_index = cases[i].gpu,
					   .dmabuf_supported = cases[i].dmabuf,
					   .cc_major = cases[i].cc };
		struct gdr_path p;
		int ret = gdr_decide(t, &g, cases[i].wire, cases[i].nic, &o, &p);

		print_message("case %zu: %s: %s\n", i, gdr_path_mode_name(p.mode), p.reason);
		assert_int_equal(ret, cases[i].ret);
		assert_int_equal(p.mode, cases[i].want);
		assert_string_equal(p.mechanism, cases[i].mech);
		assert_string_equal(p.gpu_nic_path, cases[i].cls);
		assert_non_null(strstr(p.reason, cases[i].reason));
		assert_int_equal(p.flush, cases[i].cc < 9 && (p.mode == GDR_PATH_WRITE ||
							      p.mode == GDR_PATH_RW));
		assert_int_equal(p.flush, strstr(p.reason, "flushed by loopback RDMA READ") != NULL);
		/* the runner warns on fallback, never by reading the reason */
		assert_int_equal(p.fallback, strstr(p.reason, "gdr = auto, staged") != NULL);
		free(t);
	}
}

/* The staged bound: one direction of the GPU's PCIe link. */
static void test_pcie_bound(void **state)
{
	struct topo *t = topo_load_fixture("dgx-h100");
	char desc[64];
	double bps = topo_gpu_pcie_Bps(t, 0, desc, sizeof(desc));

	(void)state;
	assert_true(bps > 63.0e9 && bps < 63.1e9); /* 32 GT/s x16, 128b/130b */
	assert_string_equal(desc, "GPU PCIe Gen5 x16 63.0 GB/s");
	assert_true(topo_gpu_pcie_Bps(t, 99, desc, sizeof(desc)) == 0);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decisions),
		cmocka_unit_test(test_pcie_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
