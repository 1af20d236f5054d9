/* Topology discovery, path classes and GDR decisions against the sysfs fixtures. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gpu/gpu.h"
#include "topo/cpulist.h"
#include "topo/gdr.h"
#include "topo/topo.h"
#include "topo/test_sysfs.h"
#include "topo/topo_print.h"
#include "util/common.h"
#include "util/strutil.h"

/* Row i of the combined GPU+NIC matrix, columns [c0, c1), cells joined by spaces. */
static void row(const struct topo *t, int i, int c0, int c1, char *buf, size_t len)
{
	char cell[16];
	size_t off = 0;

	buf[0] = '\0';
	for (int j = c0; j < c1; j++) {
		topo_cell(t, i, j, cell, sizeof(cell));
		str_appendf(buf, len, &off, "%s%s", j > c0 ? " " : "", cell);
	}
}

/* Expected matrices, one string per row. */
struct expect {
	const char *name;
	int n_gpus, n_nics;
	const char *gpu_gpu[8];
	const char *gpu_nic[8];
	const char *nic_nic[8];
	const char *closest[8]; /* closest NIC name per GPU */
};

static const struct expect expects[] = {
	{
		.name = "dgx-h100", .n_gpus = 8, .n_nics = 8,
		.gpu_gpu = {
			"X PXB NODE NODE SYS SYS SYS SYS",
			"PXB X NODE NODE SYS SYS SYS SYS",
			"NODE NODE X PXB SYS SYS SYS SYS",
			"NODE NODE PXB X SYS SYS SYS SYS",
			"SYS SYS SYS SYS X PXB NODE NODE",
			"SYS SYS SYS SYS PXB X NODE NODE",
			"SYS SYS SYS SYS NODE NODE X PXB",
			"SYS SYS SYS SYS NODE NODE PXB X",
		},
		.gpu_nic = {
			"PIX PXB NODE NODE SYS SYS SYS SYS",
			"PXB PIX NODE NODE SYS SYS SYS SYS",
			"NODE NODE PIX PXB SYS SYS SYS SYS",
			"NODE NODE PXB PIX SYS SYS SYS SYS",
			"SYS SYS SYS SYS PIX PXB NODE NODE",
			"SYS SYS SYS SYS PXB PIX NODE NODE",
			"SYS SYS SYS SYS NODE NODE PIX PXB",
			"SYS SYS SYS SYS NODE NODE PXB PIX",
		},
		.nic_nic = {
			"X PXB NODE NODE SYS SYS SYS SYS",
			"PXB X NODE NODE SYS SYS SYS SYS",
			"NODE NODE X PXB SYS SYS SYS SYS",
			"NODE NODE PXB X SYS SYS SYS SYS",
			"SYS SYS SYS SYS X PXB NODE NODE",
			"SYS SYS SYS SYS PXB X NODE NODE",
			"SYS SYS SYS SYS NODE NODE X PXB",
			"SYS SYS SYS SYS NODE NODE PXB X",
		},
		.closest = { "mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6",
			     "mlx5_7" },
	},
	{
		/* Broadcom gen5 (pci0000:00) and gen4 (pci0000:80) two-level switches flattened as
		 * NCCL does; the same layout with a Microchip switch (pci0000:40) stays PXB. */
		.name = "bcm-switches", .n_gpus = 4, .n_nics = 4,
		.gpu_gpu = { "X PIX NODE NODE", "PIX X NODE NODE", "NODE NODE X NODE",
			     "NODE NODE NODE X" },
		.gpu_nic = { "PIX PIX NODE NODE", "PIX PIX NODE NODE", "NODE NODE PXB NODE",
			     "NODE NODE NODE PIX" },
		.nic_nic = { "X PIX NODE NODE", "PIX X NODE NODE", "NODE NODE X NODE",
			     "NODE NODE NODE X" },
		.closest = { "mlx5_0", "mlx5_0", "mlx5_2", "mlx5_3" },
	},
	{
		.name = "pxb-node", .n_gpus = 3, .n_nics = 3,
		.gpu_gpu = { "X PXB NODE", "PXB X NODE", "NODE NODE X" },
		.gpu_nic = { "PXB NODE NODE", "PXB NODE NODE", "NODE PIX PIX" },
		.nic_nic = { "X NODE NODE", "NODE X LOC", "NODE LOC X" },
		.closest = { "mlx5_0", "mlx5_0", "mlx5_1" },
	},
	{
		.name = "two-socket-sys", .n_gpus = 2, .n_nics = 1,
		.gpu_gpu = { "X SYS", "SYS X" },
		.gpu_nic = { "SYS", "PIX" },
		.nic_nic = { "X" },
		.closest = { "mlx5_0", "mlx5_0" },
	},
	{
		.name = "phb-rootports", .n_gpus = 2, .n_nics = 1,
		.gpu_gpu = { "X PHB", "PHB X" },
		.gpu_nic = { "PHB", "PHB" },
		.nic_nic = { "X" },
		.closest = { "mlx5_0", "mlx5_0" },
	},
};

static void test_matrices(void **state)
{
	(void)state;
	for (size_t e = 0; e < ARRAY_SIZE(expects); e++) {
		const struct expect *x = &expects[e];
		struct topo *t = topo_load_fixture(x->name);
		int ng = t->n_gpus, nd = t->n_gpus + t->n_nics;
		char buf[256];

		print_message("fixture %s\n", x->name);
		assert_int_equal(t->n_gpus, x->n_gpus);
		assert_int_equal(t->n_nics, x->n_nics);
		for (int i = 0; i < ng; i++) {
			enum topo_path cls;
			int c = topo_nic_closest_to_gpu(t, i, &cls);

			row(t, i, 0, ng, buf, sizeof(buf));
			assert_string_equal(buf, x->gpu_gpu[i]);
			row(t, i, ng, nd, buf, sizeof(buf));
			assert_string_equal(buf, x->gpu_nic[i]);
			assert_true(c >= 0);
			assert_string_equal(t->nics[c].name, x->closest[i]);
		}
		for (int i = ng; i < nd; i++) {
			row(t, i, ng, nd, buf, sizeof(buf));
			assert_string_equal(buf, x->nic_nic[i - ng]);
		}
		free(t);
	}
}

static void test_dgx_devices(void **state)
{
	struct topo *t = topo_load_fixture("dgx-h100");
	json_t *j, *m;

	(void)state;
	assert_int_equal(t->n_numa, 2);
	assert_string_equal(t->numa[1].cpulist, "56-111,168-223");
	assert_int_equal(t->numa[1].ncpus, 112);
	assert_int_equal(t->numa[0].mem_kb, 1056000000L);
	assert_int_equal(t->numa[0].distance[1], 21);
	assert_string_equal(t->kernel, "5.15.0-105-generic");
	assert_true(t->dmabuf_kernel);
	assert_string_equal(t->peermem, "nvidia_peermem");
	assert_string_equal(t->gpus[0].pci, "0000:1a:00.0");
	assert_string_equal(t->gpus[0].model, "H100-SXM5-80GB");
	assert_int_equal(t->gpus[0].link.cur_width, 16);
	assert_int_equal(topo_pcie_gen(t->gpus[0].link.cur_gts), 5);
	assert_int_equal(t->gpus[5].numa, 1);
	assert_string_equal(t->nics[3].name, "mlx5_3");
	assert_int_equal(t->nics[3].n_ports, 1);
	assert_string_equal(t->nics[3].ports[0].state, "4: ACTIVE");
	assert_string_equal(t->nics[3].ports[0].link_layer, "InfiniBand");
	assert_string_equal(t->nics[3].ports[0].rate, "400 Gb/sec (4X NDR)");
	assert_string_equal(t->nics[3].fw_ver, "28.39.1002");
	assert_string_equal(t->nics[3].board_id, "MT_0000000838");
	assert_int_equal(t->nics[3].n_netdevs, 1);
	assert_string_equal(t->nics[3].netdevs[0], "ibp82s0");
	/* 8 IB netdevs + the 1G management port, which is no RDMA device */
	assert_int_equal(t->n_netdevs, 9);
	assert_string_equal(t->netdevs[0].name, "eno1");
	assert_string_equal(t->netdevs[0].pci, "0000:03:00.0");
	assert_int_equal(t->netdevs[0].speed_mbps, 1000);
	assert_string_equal(t->netdevs[0].rdma, "");
	assert_string_equal(t->netdevs[1].rdma, "mlx5_0");
	assert_int_equal(topo_gpu_numa_node(t, 6), 1);
	assert_int_equal(topo_gpu_numa_node(t, 8), -ENOENT);
	assert_int_equal(topo_nic_numa_node(t, "mlx5_2"), 0);
	assert_int_equal(topo_nic_numa_node(t, "mlx5_9"), -ENOENT);
	assert_int_equal(topo_gpu_by_pci(t, "1A:00.0"), 0);
	/* the management NIC sits on host bridge pci0000:00, GPU0 on pci0000:15 */
	assert_int_equal(topo_path_class(t, "0000:1a:00.0", "0000:03:00.0"), TOPO_PATH_NODE);
	assert_int_equal(topo_path_class(t, "0000:1a:00.0", "0000:ff:00.0"), TOPO_PATH_UNKNOWN);

	/* NVLink recorded by the GPU layer wins over the PCIe class, both directions. */
	assert_int_equal(topo_set_nvlink(t, 0, 5, 18), 0);
	assert_int_equal(topo_set_nvlink(t, 0, 0, 18), -EINVAL);
	assert_int_equal(topo_path_class(t, t->gpus[5].pci, t->gpus[0].pci), TOPO_PATH_NVL);
	char cell[16];
	topo_cell(t, 5, 0, cell, sizeof(cell));
	assert_string_equal(cell, "NV18");

	j = topo_to_json(t, GDR_PXB);
	assert_non_null(j);
	m = json_object_get(j, "gpu_nic");
	assert_int_equal(json_array_size(m), 8);
	assert_string_equal(json_string_value(json_array_get(json_array_get(m, 2), 3)), "PXB");
	assert_int_equal(json_array_size(json_object_get(j, "gdr")), 64);
	assert_true(json_is_true(json_object_get(json_array_get(json_object_get(j, "gdr"), 0),
						 "possible")));
	json_decref(j);
	free(t);
}

static void test_gdr_pairs(void **state)
{
	struct topo *t;
	struct topo_gdr d;

	(void)state;
	t = topo_load_fixture("phb-rootports");  /* numa_node -1 everywhere, one node: treated as node 0 */
	assert_int_equal(topo_gpu_numa_node(t, 0), 0);
	assert_string_equal(t->gpus[1].model, "L40S");
	assert_int_equal(t->gpus[1].link.cur_width, 8);
	topo_gdr_pair(t, 0, 0, GDR_PXB, &d);
	assert_int_equal(d.cls, TOPO_PATH_PHB);
	assert_false(d.level_ok);
	assert_false(d.possible);
	topo_gdr_pair(t, 0, 0, GDR_PHB, &d);
	assert_true(d.possible);
	assert_true(d.dmabuf && d.peermem);
	free(t);

	t = topo_load_fixture("pxb-node");  /* kernel 5.4: only the peer-memory module */
	assert_string_equal(t->gpus[1].model, "NVIDIA device 0x2bb5");
	topo_gdr_pair(t, 2, 1, GDR_PXB, &d);
	assert_true(d.possible);
	assert_false(d.dmabuf);
	assert_string_equal(d.mechanism, "nv_peer_mem loaded");
	topo_gdr_pair(t, 0, 1, GDR_PHB, &d);  /* NODE passes at PHB, as in NCCL */
	assert_int_equal(d.cls, TOPO_PATH_NODE);
	assert_true(d.possible);
	free(t);

	t = topo_load_fixture("two-socket-sys");  /* no module: dma-buf only */
	topo_gdr_pair(t, 1, 0, GDR_PXB, &d);
	assert_true(d.possible);
	assert_false(d.peermem);
	assert_string_equal(d.mechanism, "dmabuf (needs driver support, probed at run time)");
	assert_int_equal(topo_nic_numa_node(t, "mlx5_0"), 1);
	assert_int_equal(topo_path_class(t, t->gpus[0].pci, "0000:02:00.0"), TOPO_PATH_PHB);
	assert_int_equal(topo_path_class(t, t->gpus[1].pci, "0000:02:00.0"), TOPO_PATH_SYS);
	free(t);
}

static void test_switch_ids(void **state)
{
	struct topo *t = topo_load_fixture("bcm-switches");
	int found = 0;

	(void)state;
	assert_int_equal(t->n_switches, 9);  /* parent + 2 sub-switches on each host bridge */
	for (int i = 0; i < t->n_switches; i++) {
		const struct topo_switch *s = &t->switches[i];

		if (!strcmp(s->pci, "0000:03:00.0")) {
			assert_int_equal(s->vendor, 0x1000);
			assert_int_equal(s->device, 0xc030);
			assert_int_equal(s->subsys_vendor, 0x1000);
			assert_int_equal(s->subsys_device, 0x10a0);
			found++;
		}
	}
	assert_int_equal(found, 1);
	free(t);
}

static void test_gdr_level_table(void **state)
{
	/* rows: class LOC..SYS; columns: level LOC, PIX, PXB, PHB, SYS */
	static const struct {
		enum topo_path cls;
		bool allowed[5];
	} rows[] = {
		{ TOPO_PATH_LOC, { 1, 1, 1, 1, 1 } },  { TOPO_PATH_PIX, { 0, 1, 1, 1, 1 } },
		{ TOPO_PATH_PXB, { 0, 0, 1, 1, 1 } },  { TOPO_PATH_PHB, { 0, 0, 0, 1, 1 } },
		{ TOPO_PATH_NODE, { 0, 0, 0, 1, 1 } }, { TOPO_PATH_SYS, { 0, 0, 0, 0, 1 } },
		{ TOPO_PATH_UNKNOWN, { 0, 0, 0, 0, 0 } },
	};
	int level;

	(void)state;
	for (size_t r = 0; r < ARRAY_SIZE(rows); r++) {
		for (int l = GDR_LOC; l <= GDR_SYS; l++)
			assert_int_equal(topo_gdr_allowed(rows[r].cls, l), rows[r].allowed[l]);
	}
	assert_false(topo_gdr_allowed(TOPO_PATH_LOC, 7));
	assert_int_equal(gdr_level_parse("phb", &level), 0);
	assert_int_equal(level, GDR_PHB);
	assert_int_equal(gdr_level_parse("2", &level), 0);
	assert_int_equal(level, GDR_PXB);
	assert_int_equal(gdr_level_parse("NODE", &level), -EINVAL);
}

static void test_ci_vm_and_live(void **state)
{
	struct topo *t = topo_load_fixture("ci-vm");
	struct topo *live = calloc(1, sizeof(*live));
	int eth = -1;

	(void)state;
	assert_int_equal(t->n_gpus, 0);
	assert_int_equal(t->n_nics, 0);
	assert_int_equal(t->n_numa, 1);
	assert_string_equal(t->numa[0].cpulist, "0-1");
	assert_int_equal(topo_nic_closest_to_gpu(t, 0, NULL), -ENOENT);
	for (int i = 0; i < t->n_netdevs; i++) {
		if (!strcmp(t->netdevs[i].name, "eth0"))
			eth = i;
		if (!strcmp(t->netdevs[i].name, "lo"))
			assert_string_equal(t->netdevs[i].pci, "");
	}
	assert_true(eth >= 0);
	assert_string_equal(t->netdevs[eth].pci, "0000:00:03.0");  /* behind virtio2 */
	assert_int_equal(t->netdevs[eth].speed_mbps, -1);
	free(t);

	assert_non_null(live);
	assert_int_equal(topo_discover("/sys", live), 0);
	assert_true(live->n_numa >= 1);
	assert_true(live->numa[0].ncpus >= 1);
	free(live);
	live = calloc(1, sizeof(*live));
	assert_int_equal(topo_discover("/nonexistent-sysfs", live), -ENOENT);
	free(live);
}

/* Captured on the lent H200 machine (a microVM): one GPU at Gen5 x16, no RDMA NIC. */
static void test_h200_vm(void **state)
{
	struct topo *t = topo_load_fixture("h200-vm");

	(void)state;
	assert_int_equal(t->n_gpus, 1);
	assert_string_equal(t->gpus[0].pci, "0000:00:06.0");
	assert_string_equal(t->gpus[0].model, "H200-SXM-141GB");
	assert_int_equal(topo_pcie_gen(t->gpus[0].link.cur_gts), 5);
	assert_int_equal(t->gpus[0].link.cur_width, 16);
	assert_int_equal(t->n_nics, 0);
	assert_int_equal(t->n_numa, 1);
	assert_string_equal(t->numa[0].cpulist, "0-15");
	/* no NUMA affinity reported: the one node stands for it */
	assert_int_equal(topo_gpu_numa_node(t, 0), 0);
	assert_int_equal(topo_nic_closest_to_gpu(t, 0, NULL), -ENOENT);
	free(t);
}

static void test_cpulist(void **state)
{
	static const struct {
		const char *in, *out;
	} ok[] = {
		{ "0", "0" },	      { "0-3", "0-3" },		  { "0-3,8,10-11\n", "0-3,8,10-11" },
		{ "3,1,2", "1-3" },   { " 5 ", "5" },		  { "", "" },
		{ "0-1,1-2", "0-2" }, { "1023", "1023" },
	};
	static const char *const bad[] = { "a", "3-1", "1,", "1-", "0-3x", "1024", "-1", "1,,2" };
	char err[128], buf[64];
	cpu_set_t set;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		assert_int_equal(cpulist_parse(ok[i].in, &set, err, sizeof(err)), 0);
		assert_string_equal(cpulist_format(&set, buf, sizeof(buf)), ok[i].out);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		assert_int_equal(cpulist_parse(bad[i], &set, err, sizeof(err)), -EINVAL);
		assert_true(strlen(err) > 0);
	}
	cpulist_parse("3-1", &set, err, sizeof(err));
	assert_string_equal(err, "'3-1': range end below start");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matrices),	 cmocka_unit_test(test_dgx_devices),
		cmocka_unit_test(test_gdr_pairs),	 cmocka_unit_test(test_switch_ids),
		cmocka_unit_test(test_gdr_level_table),
		cmocka_unit_test(test_ci_vm_and_live), cmocka_unit_test(test_h200_vm),
		cmocka_unit_test(test_cpulist),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
