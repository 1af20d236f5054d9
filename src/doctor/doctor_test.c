/* The doctor's checks against the sysfs fixtures: a well-set DGX, the same one broken, CI. */
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

#include "config.h"
#include "doctor/doctor.h"
#include "gpu/gpu.h"
#include "topo/test_sysfs.h"
#include "util/common.h"
#include "util/fsbound.h"

struct expect {
	const char *fixture, *check, *subject;
	enum doc_level level;
	const char *says; /* a substring of the finding's text */
};

static const struct expect expects[] = {
    /* the broken DGX: each planted fault is found, named, and graded */
    {"dgx-h100-bad", "rdma_port", "mlx5_5:1", DOC_FAIL, "1: DOWN (physical 3: Disabled"},
    {"dgx-h100-bad", "rdma_port", "mlx5_3:1", DOC_WARN, "(32 GT/s x8) carries only 252 Gb/s"},
    {"dgx-h100-bad", "rdma_port", "mlx5_0:1", DOC_PASS, "ACTIVE, InfiniBand, 400 Gb/sec"},
    {"dgx-h100-bad", "rdma_mtu", "mlx5_7:1", DOC_WARN, "RoCE path MTU 1024: netdev ibp210s0 has MTU 1500"},
    {"dgx-h100-bad", "rdma_mtu", "mlx5_0:1", DOC_SKIP, "InfiniBand MTU is not in sysfs"},
    {"dgx-h100-bad", "roce_gid", "mlx5_7:1", DOC_WARN, "auto picks 1 (RoCE v2 link-local fe80::a00:27ff:fe8e:1c6d)"},
    {"dgx-h100-bad", "roce_qos", "mlx5_7:1", DOC_WARN, "ECN off on every priority of ibp210s0"},
    {"dgx-h100-bad", "memlock", "host", DOC_FAIL, "64 KiB locked memory"},
    {"dgx-h100-bad", "gdr_mechanism", "GPU 0000:1a:00.0", DOC_FAIL, "the proprietary kernel module cannot export dma-bufs and neither nvidia_peermem"},
    {"dgx-h100-bad", "pcie_acs", "GPU 0000:1a:00.0", DOC_FAIL, "on 0000:19:00.0 (ReqRedir CmpltRedir), 0000:19:01.0 (ReqRedir CmpltRedir)"},
    {"dgx-h100-bad", "pcie_acs", "GPU 0000:1e:00.0", DOC_PASS, "no ACS redirect on the 2 switch ports toward mlx5_1 (PIX)"},
    {"dgx-h100-bad", "iommu", "host", DOC_WARN, "16 of 16 GPUs and NICs have translated DMA (domain DMA-FQ"},
    {"dgx-h100-bad", "relaxed_ordering", "mlx5_2", DOC_WARN, "disabled in 0000:4e:00.0's Device Control"},
    {"dgx-h100-bad", "relaxed_ordering", "mlx5_3", DOC_PASS, "enabled"},
    {"dgx-h100-bad", "pcie_link", "mlx5_3", DOC_FAIL, "link trained x8 of x16 (Gen5): 50%"},
    {"dgx-h100-bad", "pcie_link", "GPU 0000:a0:00.0", DOC_WARN, "link at Gen1 (2.5 GT/s) of Gen5 x16"},
    {"dgx-h100-bad", "gpu_nic_path", "GPU 0000:d1:00.0", DOC_PASS, "closest NIC mlx5_7 is PIX, within gdr_level PXB; both on NUMA node 1"},
    {"dgx-h100-bad", "cpu_governor", "host", DOC_WARN, "1 of 4 CPUs run governor 'powersave'"},
    {"dgx-h100-bad", "hugepages", "host", DOC_WARN, "transparent huge pages off"},
    {"dgx-h100-bad", "auto_path", "GPU 0000:1a:00.0", DOC_WARN, "between hosts ib over mlx5_0: staged (gdr = auto, staged"},
    {"dgx-h100-bad", "auto_path", "GPU 0000:a0:00.0", DOC_WARN, "ib over mlx5_0, not its rail (the closest NIC has no ACTIVE port"},
    /* its rail mlx5_7 is RoCE, but ib comes first in the registry and mlx5_0 is ACTIVE */
    {"dgx-h100-bad", "auto_path", "GPU 0000:d1:00.0", DOC_WARN, "between hosts ib over mlx5_0, not its rail"},
    /* the same machine set up well */
    {"dgx-h100", "memlock", "host", DOC_PASS, "unlimited"},
    {"dgx-h100", "gdr_mechanism", "GPU 0000:1a:00.0", DOC_PASS, "dma-buf (kernel 5.15.0-105-generic, open kernel module) and nvidia_peermem loaded"},
    {"dgx-h100", "pcie_acs", "GPU 0000:1a:00.0", DOC_PASS, "no ACS redirect on the 2 switch ports toward mlx5_0 (PIX)"},
    {"dgx-h100", "iommu", "host", DOC_PASS, "cmdline 'intel_iommu=on iommu=pt'), passthrough for all 16"},
    {"dgx-h100", "auto_path", "GPU 0000:1a:00.0", DOC_PASS, "between hosts ib over mlx5_0: gdr read+write"},
    {"dgx-h100", "cpu_governor", "host", DOC_PASS, "performance on all 4 CPUs"},
    {"dgx-h100", "hugepages", "host", DOC_PASS, "'madvise'"},
    /* older captures without the doctor's files: unknowns are skips, never guesses */
    {"two-socket-sys", "memlock", "host", DOC_SKIP, "unknown"},
    {"two-socket-sys", "gpu_nic_path", "GPU 0000:01:00.0", DOC_WARN, "closest NIC mlx5_0 is SYS, beyond gdr_level PXB"},
    {"two-socket-sys", "gdr_mechanism", "GPU 0000:01:00.0", DOC_FAIL, "NVIDIA driver not loaded and no nvidia_peermem"},
    {"two-socket-sys", "relaxed_ordering", "mlx5_0", DOC_SKIP, "unreadable"},
    {"ci-vm", "rdma_port", "host", DOC_WARN, "no RDMA device"},
    {"ci-vm", "auto_path", "host", DOC_PASS, "shm inside the host, tcp between hosts"},
};

static struct doctor_node *collect(const char *name, int gdr_level)
{
	struct doctor_node *n = doctor_node_collect(sysfs_fixture(name), gdr_level, 0,
						    fsb_timeout_default_ns());

	assert_non_null(n);
	return n;
}

static void test_fixtures(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(expects); i++) {
		const struct expect *x = &expects[i];
		struct doctor_node *n = collect(x->fixture, GDR_PXB);
		const struct doc_finding *f;
		struct doc_report r;

		assert_int_equal(doctor_run(&n->in, &r), 0);
		f = doctor_find(&r, x->check, x->subject);
		if (!f)
			fail_msg("%s: no %s finding about %s", x->fixture, x->check, x->subject);
		if (f->level != x->level || !strstr(f->what, x->says))
			fail_msg("%s %s %s: got %s '%s', want %s '%s'", x->fixture, x->check,
				 x->subject, doctor_level_name(f->level), f->what,
				 doctor_level_name(x->level), x->says);
		/* every finding that did not pass says how to fix it, or why it was skipped */
		for (int k = 0; k < r.n; k++)
			if (r.f[k].level >= DOC_WARN && !r.f[k].fix[0])
				fail_msg("%s %s %s: no fix", x->fixture, r.f[k].check, r.f[k].subject);
		doctor_report_free(&r);
		doctor_node_free(n);
	}
}

/* Verdicts: the broken DGX fails, the good one passes without a warning. */
static void test_verdicts(void **state)
{
	struct doctor_node *n;
	struct doc_report r;

	(void)state;
	n = collect("dgx-h100", GDR_PXB);
	assert_int_equal(doctor_run(&n->in, &r), 0);
	assert_int_equal(doctor_verdict(&r), DOC_PASS);
	assert_int_equal(r.count[DOC_WARN] + r.count[DOC_FAIL], 0);
	doctor_report_free(&r);
	doctor_node_free(n);
	n = collect("dgx-h100-bad", GDR_PXB);
	assert_int_equal(doctor_run(&n->in, &r), 0);
	assert_int_equal(doctor_verdict(&r), DOC_FAIL);
	/* 8 GPUs without a mechanism, ACS, memlock, a down port, a x8 link */
	assert_int_equal(r.count[DOC_FAIL], 12);
	doctor_report_free(&r);
	doctor_node_free(n);
}

/* What verbs and CUDA add on a live node, injected: IB MTU and the GPU's dma-buf word. */
static void test_driver_facts(void **state)
{
	struct doctor_node *n = collect("dgx-h100-bad", GDR_PXB);
	const struct doc_finding *f;
	struct doc_report r;

	(void)state;
	snprintf(n->ports[0].dev, sizeof(n->ports[0].dev), "mlx5_0");
	n->ports[0] = (struct doc_port_fact){.dev = "mlx5_0", .port = 1, .active_mtu = 2048, .max_mtu = 4096};
	n->ports[1] = (struct doc_port_fact){.dev = "mlx5_1", .port = 1, .active_mtu = 4096, .max_mtu = 4096};
	n->in.n_ports = 2;
	n->gpus[0] = (struct doc_gpu_fact){.topo_index = 0, .dmabuf = true, .cc_major = 9};
	n->gpus[1] = (struct doc_gpu_fact){.topo_index = 1, .dmabuf = false, .cc_major = 8};
	n->in.n_gpus = 2;
	n->in.memlock = -1;
	assert_int_equal(doctor_run(&n->in, &r), 0);
	f = doctor_find(&r, "rdma_mtu", "mlx5_0:1");
	assert_int_equal(f->level, DOC_WARN);
	assert_non_null(strstr(f->what, "InfiniBand active MTU 2048 of max 4096"));
	assert_int_equal(doctor_find(&r, "rdma_mtu", "mlx5_1:1")->level, DOC_PASS);
	f = doctor_find(&r, "gdr_mechanism", "GPU 0000:1a:00.0");
	assert_int_equal(f->level, DOC_PASS);
	assert_non_null(strstr(f->what, "CUDA says supported"));
	f = doctor_find(&r, "gdr_mechanism", "GPU 0000:1e:00.0");
	assert_int_equal(f->level, DOC_FAIL);
	assert_non_null(strstr(f->what, "CUDA says the GPU cannot export dma-bufs"));
	/* dma-buf on a Hopper GPU: GDR with no receive flush, as NCCL on cc >= 9.0 */
	f = doctor_find(&r, "auto_path", "GPU 0000:1a:00.0");
	assert_non_null(strstr(f->what, "gdr read+write"));
	assert_null(strstr(f->what, "flushed"));
	assert_int_equal(doctor_find(&r, "memlock", "host")->level, DOC_PASS);
	doctor_report_free(&r);
	doctor_node_free(n);
}

/* A library probe given up on fails its check, naming the call, what it was on and the
 * bound; one that answered passes; one not made says nothing. */
static void test_probe_checks(void **state)
{
	struct doctor_node *n = collect("dgx-h100", GDR_PXB);
	const struct doc_finding *f;
	struct doc_report r;

	(void)state;
	assert_int_equal(doctor_run(&n->in, &r), 0); /* a fixture: no probe made */
	assert_null(doctor_find(&r, "gpu_driver", NULL));
	assert_null(doctor_find(&r, "rdma_verbs", NULL));
	doctor_report_free(&r);
	n->in.cuda = (struct doc_probe){ .made = true, .hung = true, .subject = "CUDA driver",
					 .what = "cuInit did not return within 30s (driver wedged?)" };
	n->in.verbs = (struct doc_probe){ .made = true, .hung = true, .subject = "mlx5_3 port 1",
					  .what = "ibv_query_port did not return within 30s" };
	assert_int_equal(doctor_run(&n->in, &r), 0);
	f = doctor_find(&r, "gpu_driver", "CUDA driver");
	assert_non_null(f);
	assert_int_equal(f->level, DOC_FAIL);
	assert_string_equal(f->what, "cuInit did not return within 30s (driver wedged?)");
	assert_non_null(strstr(f->fix, "reset the GPU"));
	f = doctor_find(&r, "rdma_verbs", "mlx5_3 port 1");
	assert_non_null(f);
	assert_int_equal(f->level, DOC_FAIL);
	assert_string_equal(f->what, "ibv_query_port did not return within 30s");
	assert_int_equal(doctor_verdict(&r), DOC_FAIL);
	/* the other checks ran all the same: the well-set DGX's faults are only these two */
	assert_int_equal(r.count[DOC_FAIL], 2);
	assert_non_null(doctor_find(&r, "auto_path", "GPU 0000:1a:00.0"));
	doctor_report_free(&r);
	n->in.cuda = (struct doc_probe){ .made = true, .n = 8 };
	n->in.verbs = (struct doc_probe){ .made = true, .n = 8 };
	assert_int_equal(doctor_run(&n->in, &r), 0);
	f = doctor_find(&r, "gpu_driver", "CUDA driver");
	assert_int_equal(f->level, DOC_PASS);
	assert_string_equal(f->what, "answered: 8 devices, their properties and attributes");
	f = doctor_find(&r, "rdma_verbs", "RDMA devices");
	assert_int_equal(f->level, DOC_PASS);
	assert_string_equal(f->what, "answered: 8 ports opened and queried");
	assert_int_equal(doctor_verdict(&r), DOC_PASS);
	doctor_report_free(&r);
	doctor_node_free(n);
}

/*
 * The live node with the test hook's wedged driver and HCA (GRADSYNC_TEST_HANG): each
 * probe is given up on at the bound, kept for its check, and the node still collected.
 */
static void test_probe_hung(void **state)
{
	struct doctor_node *n;
	struct doc_report r;

	(void)state;
	assert_int_equal(setenv("GRADSYNC_TEST_HANG", GPU_CALL_INIT ",ibv_get_device_list", 1), 0);
	n = doctor_node_collect("/sys", GDR_PXB, DOC_ASK_CUDA | DOC_ASK_VERBS, 100000000ull);
	assert_int_equal(unsetenv("GRADSYNC_TEST_HANG"), 0);
	assert_non_null(n);
	assert_true(n->in.cuda.made && n->in.cuda.hung);
	assert_string_equal(n->in.cuda.subject, "CUDA driver");
	assert_string_equal(n->in.cuda.what, "cuInit did not return within 100ms (driver wedged?)");
	assert_int_equal(n->in.n_gpus, 0);
	assert_true(n->in.verbs.made);
	if (GS_HAVE_VERBS) {
		assert_true(n->in.verbs.hung);
		assert_string_equal(n->in.verbs.subject, "RDMA devices");
		assert_string_equal(n->in.verbs.what, "ibv_get_device_list did not return within "
						      "100ms (HCA or its driver wedged?)");
	} else { /* the stub (verbs_stub.c) calls no library: it answers, with no port */
		assert_false(n->in.verbs.hung);
		assert_int_equal(n->in.verbs.n, 0);
	}
	assert_int_equal(doctor_node_run(n, &r), 0);
	assert_int_equal(doctor_find(&r, "gpu_driver", "CUDA driver")->level, DOC_FAIL);
	assert_non_null(doctor_find(&r, "auto_path", NULL));
	assert_int_equal(doctor_verdict(&r), DOC_FAIL);
	doctor_report_free(&r);
	doctor_node_free(n);
}

/* gdr_level moves the GPU-NIC verdict: SYS admits the two-socket box's far pair. */
static void test_gdr_level(void **state)
{
	struct doctor_node *n = collect("two-socket-sys", GDR_SYS);
	struct doc_report r;

	(void)state;
	assert_int_equal(doctor_run(&n->in, &r), 0);
	assert_int_equal(doctor_find(&r, "gpu_nic_path", "GPU 0000:01:00.0")->level, DOC_WARN);
	assert_non_null(strstr(doctor_find(&r, "gpu_nic_path", "GPU 0000:01:00.0")->what,
			       "within gdr_level SYS, but GPU on NUMA node 0, NIC on node 1"));
	doctor_report_free(&r);
	doctor_node_free(n);
}

/* The table: unique names, a title each, and every check's name is a finding's check. */
static void test_table(void **state)
{
	size_t n;
	const struct doc_check *c = doctor_checks(&n);

	(void)state;
	assert_true(n >= 14);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(c[i].run);
		assert_true(strlen(c[i].title) > 10);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(c[i].name, c[j].name);
	}
}

/* The JSON form carries the verdict, the counts and every finding. */
static void test_json(void **state)
{
	struct doctor_node *n = collect("dgx-h100-bad", GDR_PXB);
	struct doc_report r;
	json_t *j;

	(void)state;
	assert_int_equal(doctor_run(&n->in, &r), 0);
	j = doctor_json(&r);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "verdict")), "fail");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "counts"), "fail")),
			 r.count[DOC_FAIL]);
	assert_int_equal((int)json_array_size(json_object_get(j, "findings")), r.n);
	json_decref(j);
	doctor_report_free(&r);
	doctor_node_free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),	cmocka_unit_test(test_fixtures),
	    cmocka_unit_test(test_verdicts),	cmocka_unit_test(test_driver_facts),
	    cmocka_unit_test(test_gdr_level),	cmocka_unit_test(test_json),
	    cmocka_unit_test(test_probe_checks), cmocka_unit_test(test_probe_hung),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
