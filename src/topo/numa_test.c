/* NUMA binding: syntax, plans on fixtures, and real CPU/page placement on this machine. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <limits.h>
#include <numaif.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "topo/cpulist.h"
#include "topo/numa.h"
#include "topo/test_sysfs.h"
#include "topo/topo.h"
#include "util/common.h"

#define BUF_LEN (4u << 20)

static int resolve(const struct topo *t, const char *bind, int gpu, int nic, struct numa_plan *p)
{
	struct numa_opts o;

	if ((size_t)snprintf(o.bind, sizeof(o.bind), "%s", bind) >= sizeof(o.bind))
		return -ENAMETOOLONG;
	return numa_bind_resolve(&o, t, gpu, nic, p);
}

static void test_check_syntax(void **state)
{
	static const char *const good[] = {
		"none", "gpu", "nic", "remote", "interleave", "node:0", "node:12", "cpus:0-3,8",
		"cpus:1",
	};
	static const struct {
		const char *value, *err;
	} bad[] = {
		{ "", "unknown binding '' (expected none, gpu, nic, remote, interleave, node:N "
			"or cpus:LIST)" },
		{ "numa", "unknown binding 'numa' (expected none, gpu, nic, remote, interleave, node:N "
			"or cpus:LIST)" },
		{ "GPU", "unknown binding 'GPU' (expected none, gpu, nic, remote, interleave, node:N "
			"or cpus:LIST)" },
		{ "node:", "'node:': expected a NUMA node number after 'node:'" },
		{ "node:x", "'node:x': expected a NUMA node number after 'node:'" },
		{ "node:-1", "'node:-1': expected a NUMA node number after 'node:'" },
		{ "node:1,2", "'node:1,2': expected a NUMA node number after 'node:'" },
		{ "node:5000", "'node:5000': NUMA node number above 1023" },
		{ "cpus:", "'cpus:': needs a CPU list after 'cpus:', e.g. cpus:0-3,8" },
		{ "cpus:3-1", "'cpus:3-1': bad CPU list: '3-1': range end below start" },
		{ "cpus:a", "'cpus:a': bad CPU list: 'a': expected a CPU number or a range A-B" },
		{ "cpus:1,", "'cpus:1,': bad CPU list: '1,': empty element after ','" },
		{ "cpus:2000", "'cpus:2000': bad CPU list: '2000': CPU number too large" },
	};
	char err[256];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good); i++)
		assert_int_equal(numa_bind_check(good[i], err, sizeof(err)), 0);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		assert_int_equal(numa_bind_check(bad[i].value, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, bad[i].err);
	}
}

/* Plans on the two-socket DGX fixture: nothing is applied, only resolved. */
static void test_plans_two_sockets(void **state)
{
	struct topo *t = topo_load_fixture("dgx-h100");
	struct numa_plan p;
	cpu_set_t set;
	char buf[256];

	(void)state;
	assert_int_equal(resolve(t, "gpu", topo_gpu_numa_node(t, 5), -1, &p), 0);
	assert_true(p.applicable && p.pin_cpus);
	assert_int_equal(p.mem, NUMA_MEM_BIND);
	assert_string_equal(p.requested, "cpus 56-111,168-223, memory bind 1");

	assert_int_equal(resolve(t, "nic", -1, topo_nic_numa_node(t, "mlx5_0"), &p), 0);
	assert_string_equal(p.requested, "cpus 0-55,112-167, memory bind 0");

	assert_int_equal(resolve(t, "remote", 1, 1, &p), 0);
	assert_true(p.applicable);
	assert_string_equal(p.requested, "cpus 0-55,112-167, memory bind 0 (remote from node 1)");
	assert_int_equal(resolve(t, "remote", -1, 0, &p), 0);  /* no GPU: remote from the NIC */
	assert_string_equal(p.requested, "cpus 56-111,168-223, memory bind 1 (remote from node 0)");
	assert_int_equal(resolve(t, "remote", -1, -1, &p), 0);
	assert_false(p.applicable);
	assert_non_null(strstr(p.reason, "neither the GPU nor the NIC"));

	assert_int_equal(resolve(t, "interleave", 0, 0, &p), 0);
	assert_false(p.pin_cpus);
	assert_int_equal(p.mem, NUMA_MEM_INTERLEAVE);
	assert_string_equal(p.requested, "cpus unchanged, memory interleave 0-1");
	assert_string_equal(p.reason, "");

	assert_int_equal(resolve(t, "cpus:0,56", 0, 0, &p), 0);
	assert_int_equal(p.mem, NUMA_MEM_DEFAULT);
	assert_string_equal(p.requested, "cpus 0,56, memory default (first touch)");
	assert_int_equal(resolve(t, "cpus:0-300", 0, 0, &p), -EINVAL);
	assert_string_equal(p.reason, "cpus:0-300: CPU 224-300 not online (online: 0-223)");

	assert_int_equal(resolve(t, "node:1", -1, -1, &p), 0);
	CPU_ZERO(&set);
	for (int c = 0; c < NUMA_MAX_CPUS; c++) {
		if (p.cpumask[c / NUMA_LONG_BITS] & (1UL << (c % NUMA_LONG_BITS)))
			CPU_SET(c, &set);
	}
	assert_string_equal(cpulist_format(&set, buf, sizeof(buf)), "56-111,168-223");
	free(t);
}

static void test_plans_not_applicable(void **state)
{
	struct topo *t = topo_load_fixture("ci-vm");  /* one node, no GPU, no RDMA NIC */
	struct numa_plan p;

	(void)state;
	assert_int_equal(resolve(t, "gpu", topo_gpu_numa_node(t, 0), -1, &p), 0);
	assert_false(p.applicable);
	assert_string_equal(p.reason, "no GPU on this machine");
	assert_int_equal(numa_bind_apply(&p), -EOPNOTSUPP);
	assert_int_equal(resolve(t, "nic", -1, topo_nic_numa_node(t, "mlx5_0"), &p), 0);
	assert_false(p.applicable);
	assert_string_equal(p.reason, "no RDMA NIC on this machine");
	assert_int_equal(resolve(t, "remote", 0, 0, &p), 0);
	assert_false(p.applicable);
	assert_false(p.pin_cpus);
	assert_int_equal(p.mem, NUMA_MEM_DEFAULT);
	assert_non_null(strstr(p.reason, "only one NUMA node (node 0), no remote node exists"));
	assert_string_equal(p.requested, "remote: not applicable");
	assert_int_equal(numa_bind_apply(&p), -EOPNOTSUPP);
	assert_int_equal(resolve(t, "node:5", -1, -1, &p), -EINVAL);
	assert_string_equal(p.reason, "node:5: NUMA node 5 does not exist (nodes here: 0)");
	assert_int_equal(resolve(t, "node:x", -1, -1, &p), -EINVAL);
	assert_non_null(strstr(p.reason, "expected a NUMA node number"));
	assert_int_equal(resolve(t, "none", -1, -1, &p), 0);
	assert_true(p.applicable);
	assert_int_equal(numa_bind_apply(&p), 0);
	free(t);

	t = topo_load_fixture("phb-rootports");  /* GPUs without NUMA affinity on a 1-node box */
	assert_int_equal(resolve(t, "gpu", topo_gpu_numa_node(t, 0), -1, &p), 0);
	assert_true(p.applicable);  /* -1 on a one-node machine is node 0 */
	assert_string_equal(p.requested, "cpus 0-47, memory bind 0");
	free(t);
}

/* Real placement on this machine: save and restore the thread's affinity and policy. */
struct saved {
	cpu_set_t cpus;
};

static int save_state(void **state)
{
	struct saved *s = calloc(1, sizeof(*s));

	if (!s || sched_getaffinity(0, sizeof(s->cpus), &s->cpus))
		return -1;
	*state = s;
	return 0;
}

static int restore_state(void **state)
{
	struct saved *s = *state;
	int r = sched_setaffinity(0, sizeof(s->cpus), &s->cpus) | set_mempolicy(MPOL_DEFAULT, NULL, 0);

	free(s);
	return r;
}

static void *touched_buffer(void)
{
	char *b = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(b != MAP_FAILED);
	memset(b, 1, BUF_LEN);
	return b;
}

static void test_apply_node0(void **state)
{
	struct topo *t = topo_load_root("/sys");
	struct numa_plan p;
	struct numa_actual a;
	char want[600], line[1024];
	void *b;

	(void)state;
	snprintf(want, sizeof(want), "node:%d", t->numa[0].id);
	assert_int_equal(resolve(t, want, -1, -1, &p), 0);
	assert_true(p.applicable);
	assert_int_equal(numa_bind_apply(&p), 0);
	b = touched_buffer();
	assert_int_equal(numa_placement_verify(b, BUF_LEN, &a), 0);
	print_message("requested %s; actual cpus %s (on %d), policy %s, pages %s\n", p.requested,
		      a.cpus, a.cpu, a.policy, a.mem);
	assert_string_equal(a.cpus, t->numa[0].cpulist);
	snprintf(want, sizeof(want), "bind %d", t->numa[0].id);
	assert_string_equal(a.policy, want);
	assert_int_equal(a.pages_sampled, 64);
	assert_int_equal(a.pages_absent, 0);
	assert_int_equal(a.pages_on_node[t->numa[0].id], 64);
	snprintf(want, sizeof(want), "node%d 64 of 64 sampled pages", t->numa[0].id);
	assert_string_equal(a.mem, want);
	numa_describe(&p, &a, line, sizeof(line));
	snprintf(want, sizeof(want), "requested: %s; actual: cpus %s", p.requested, a.cpus);
	assert_int_equal(strncmp(line, want, strlen(want)), 0);
	munmap(b, BUF_LEN);
	free(t);
}

static void test_apply_cpus1(void **state)
{
	struct topo *t = topo_load_root("/sys");
	struct numa_plan p;
	struct numa_actual a;
	cpu_set_t now;

	(void)state;
	sched_getaffinity(0, sizeof(now), &now);
	if (!CPU_ISSET(1, &now)) {
		free(t);
		skip();  /* a one-CPU machine or cpuset: nothing to pin to */
	}
	assert_int_equal(resolve(t, "cpus:1", -1, -1, &p), 0);
	assert_string_equal(p.requested, "cpus 1, memory default (first touch)");
	assert_int_equal(numa_bind_apply(&p), 0);
	assert_int_equal(numa_placement_verify(NULL, 0, &a), 0);
	assert_string_equal(a.cpus, "1");
	assert_int_equal(a.cpu, 1);  /* sched_setaffinity migrates the caller before returning */
	assert_int_equal(sched_getcpu(), 1);
	assert_string_equal(a.policy, "default");
	assert_string_equal(a.mem, "no buffer");
	free(t);
}

static void test_apply_interleave_and_untouched(void **state)
{
	struct topo *t = topo_load_root("/sys");
	struct numa_plan p;
	struct numa_actual a;
	char *b;

	(void)state;
	assert_int_equal(resolve(t, "interleave", -1, -1, &p), 0);
	assert_true(p.applicable);
	if (t->n_numa == 1)
		assert_non_null(strstr(p.reason, "only one NUMA node"));
	assert_int_equal(numa_bind_apply(&p), 0);
	assert_int_equal(numa_placement_verify(NULL, 0, &a), 0);
	assert_int_equal(strncmp(a.policy, "interleave ", 11), 0);

	/* Pages not yet touched are reported as such, not as placed. */
	b = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(b != MAP_FAILED);
	b[0] = 1;
	assert_int_equal(numa_placement_verify(b, BUF_LEN, &a), 0);
	assert_int_equal(a.pages_sampled, 64);
	assert_int_equal(a.pages_absent, 63);
	assert_non_null(strstr(a.mem, "63 not faulted in"));
	munmap(b, BUF_LEN);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_syntax),
		cmocka_unit_test(test_plans_two_sockets),
		cmocka_unit_test(test_plans_not_applicable),
		cmocka_unit_test_setup_teardown(test_apply_node0, save_state, restore_state),
		cmocka_unit_test_setup_teardown(test_apply_cpus1, save_state, restore_state),
		cmocka_unit_test_setup_teardown(test_apply_interleave_and_untouched, save_state,
						restore_state),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
