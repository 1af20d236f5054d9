/* [numa] bind: parse, resolve against the topology, apply to the calling thread, verify. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "topo/numa.h"

#include <ctype.h>
#include <errno.h>
#include <numaif.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topo/cpulist.h"
#include "topo/topo.h"
#include "util/common.h"
#include "util/log.h"
#include "util/strutil.h"

static const struct {
	const char *name;
	enum numa_bind_kind kind;
} bind_words[] = {
	{ "none", NUMA_BIND_NONE },	    { "gpu", NUMA_BIND_GPU },
	{ "nic", NUMA_BIND_NIC },	    { "remote", NUMA_BIND_REMOTE },
	{ "interleave", NUMA_BIND_INTERLEAVE },
};

void numa_bind_list(char *buf, size_t len, const char *sep, const char *last)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(bind_words); i++)
		str_appendf(buf, len, &off, "%s%s", i ? sep : "", bind_words[i].name);
	str_appendf(buf, len, &off, "%snode:N%scpus:LIST", sep, last);
}

/* Parse a bind value: kind, node for node:N, set for cpus:LIST. */
static int parse_bind(const char *v, enum numa_bind_kind *kind, int *node, cpu_set_t *set,
		      char *err, size_t errlen)
{
	char perr[160];

	for (size_t i = 0; i < ARRAY_SIZE(bind_words); i++) {
		if (!strcmp(v, bind_words[i].name)) {
			*kind = bind_words[i].kind;
			return 0;
		}
	}
	if (!strncmp(v, "node:", 5)) {
		const char *p = v + 5;
		char *end;
		long n;

		errno = 0;
		n = isdigit((unsigned char)*p) ? strtol(p, &end, 10) : -1;
		if (n < 0 || errno || *end) {
			snprintf(err, errlen, "'%s': expected a NUMA node number after 'node:'", v);
			return -EINVAL;
		}
		if (n >= NUMA_MAX_NODES) {
			snprintf(err, errlen, "'%s': NUMA node number above %d", v,
				 NUMA_MAX_NODES - 1);
			return -EINVAL;
		}
		*kind = NUMA_BIND_NODE;
		*node = (int)n;
		return 0;
	}
	if (!strncmp(v, "cpus:", 5)) {
		if (!v[5]) {
			snprintf(err, errlen, "'%s': needs a CPU list after 'cpus:', e.g. cpus:0-3,8",
				 v);
			return -EINVAL;
		}
		if (cpulist_parse(v + 5, set, perr, sizeof(perr))) {
			snprintf(err, errlen, "'%s': bad CPU list: %s", v, perr);
			return -EINVAL;
		}
		*kind = NUMA_BIND_CPUS;
		return 0;
	}
	numa_bind_list(perr, sizeof(perr), ", ", " or ");
	snprintf(err, errlen, "unknown binding '%s' (expected %s)", v, perr);
	return -EINVAL;
}

int numa_bind_check(const char *value, char *err, size_t errlen)
{
	enum numa_bind_kind kind;
	cpu_set_t set;
	int node;

	return parse_bind(value, &kind, &node, &set, err, errlen);
}

static void set_to_mask(const cpu_set_t *set, unsigned long *mask)
{
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, set))
			mask[c / NUMA_LONG_BITS] |= 1UL << (c % NUMA_LONG_BITS);
	}
}

static void mask_to_set(const unsigned long *mask, cpu_set_t *set)
{
	CPU_ZERO(set);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (mask[c / NUMA_LONG_BITS] & (1UL << (c % NUMA_LONG_BITS)))
			CPU_SET(c, set);
	}
}

static char *mask_str(const unsigned long *mask, char *buf, size_t len)
{
	cpu_set_t set;

	mask_to_set(mask, &set);
	return cpulist_format(&set, buf, len);
}

static void node_ids(const struct topo *t, char *buf, size_t len)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (int i = 0; i < t->n_numa; i++)
		CPU_SET(t->numa[i].id, &set);
	cpulist_format(&set, buf, len);
}

/* Pin to the CPUs of node index ni and bind memory to it. */
static void plan_node(const struct topo *t, int ni, struct numa_plan *p)
{
	cpu_set_t set;
	char err[128];

	p->applicable = true;
	p->mem = NUMA_MEM_BIND;
	p->nodemask[t->numa[ni].id / NUMA_LONG_BITS] |= 1UL << (t->numa[ni].id % NUMA_LONG_BITS);
	if (!cpulist_parse(t->numa[ni].cpulist, &set, err, sizeof(err)) && CPU_COUNT(&set)) {
		p->pin_cpus = true;
		set_to_mask(&set, p->cpumask);
	} else {
		snprintf(p->reason, sizeof(p->reason),
			 "node %d has no CPUs: memory bound, CPU affinity left alone", t->numa[ni].id);
	}
}

/* The node (index) farthest from node index ri that has CPUs; ties to the lowest id. */
static int farthest_node(const struct topo *t, int ri)
{
	int best = -1, best_d = -1;

	for (int i = 0; i < t->n_numa; i++) {
		int d = t->numa[ri].distance[i];

		if (i == ri || !t->numa[i].ncpus)
			continue;
		if (d > best_d) {
			best = i;
			best_d = d;
		}
	}
	return best;
}

static int resolve_local(const struct topo *t, const char *what, int node, int count,
			 struct numa_plan *p)
{
	int ni;

	if (node < 0) {
		snprintf(p->reason, sizeof(p->reason),
			 count ? "the %s reports no NUMA node (sysfs numa_node -1)"
			       : "no %s on this machine",
			 !strcmp(what, "gpu") ? "GPU" : "RDMA NIC");
		return 0;
	}
	ni = topo_numa_index(t, node);
	if (ni < 0) {
		snprintf(p->reason, sizeof(p->reason), "the %s's node %d is not a NUMA node here",
			 !strcmp(what, "gpu") ? "GPU" : "NIC", node);
		return 0;
	}
	plan_node(t, ni, p);
	return 0;
}

static int resolve_remote(const struct topo *t, int gpu_numa, int nic_numa, struct numa_plan *p)
{
	int ref = gpu_numa >= 0 ? gpu_numa : nic_numa, ri, fi;

	if (t->n_numa < 2) {
		snprintf(p->reason, sizeof(p->reason),
			 "only one NUMA node (node %d), no remote node exists; "
			 "not bound rather than bound to the local node", t->numa[0].id);
		return 0;
	}
	ri = ref >= 0 ? topo_numa_index(t, ref) : -1;
	if (ri < 0) {
		snprintf(p->reason, sizeof(p->reason),
			 "neither the GPU nor the NIC has a known NUMA node to be "
			 "remote from");
		return 0;
	}
	fi = farthest_node(t, ri);
	if (fi < 0) {
		snprintf(p->reason, sizeof(p->reason),
			 "no other NUMA node with CPUs than node %d", ref);
		return 0;
	}
	plan_node(t, fi, p);
	return 0;
}

static int resolve_cpus(const struct topo *t, const char *v, const cpu_set_t *want,
			struct numa_plan *p)
{
	cpu_set_t online, tmp, extra;
	char err[128], buf[256];

	CPU_ZERO(&online);
	for (int i = 0; i < t->n_numa; i++) {
		if (!cpulist_parse(t->numa[i].cpulist, &tmp, err, sizeof(err)))
			CPU_OR(&online, &online, &tmp);
	}
	CPU_ZERO(&extra);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, want) && !CPU_ISSET(c, &online))
			CPU_SET(c, &extra);
	}
	if (CPU_COUNT(&extra) || !CPU_COUNT(want)) {
		char on[128];

		snprintf(p->reason, sizeof(p->reason), "%.64s: CPU %.64s not online (online: %.64s)", v,
			 CPU_COUNT(want) ? cpulist_format(&extra, buf, sizeof(buf)) : "(none)",
			 cpulist_format(&online, on, sizeof(on)));
		return -EINVAL;
	}
	p->applicable = true;
	p->pin_cpus = true;
	set_to_mask(want, p->cpumask);
	return 0;
}

static void describe(const char *bind, int gpu_numa, struct numa_plan *p)
{
	static const char *const mem_names[] = { "default (first touch)", "bind", "interleave" };
	char cpus[128] = "unchanged", nodes[64] = "";
	size_t off;

	if (!p->applicable) {
		snprintf(p->requested, sizeof(p->requested), "%.64s: not applicable", bind);
		return;
	}
	if (p->kind == NUMA_BIND_NONE) {
		snprintf(p->requested, sizeof(p->requested), "none (no binding)");
		return;
	}
	if (p->pin_cpus)
		mask_str(p->cpumask, cpus, sizeof(cpus));
	mask_str(p->nodemask, nodes, sizeof(nodes));
	off = 0;
	str_appendf(p->requested, sizeof(p->requested), &off, "cpus %s, memory %s%s%s", cpus,
		    mem_names[p->mem], nodes[0] ? " " : "", nodes);
	if (p->kind == NUMA_BIND_REMOTE)
		str_appendf(p->requested, sizeof(p->requested), &off, " (remote from node %d)",
			    gpu_numa);
}

int numa_bind_plan(const struct numa_opts *opts, const struct topo *t, int gpu_numa,
		   int nic_numa, struct numa_plan *out)
{
	char err[200], ids[64];
	cpu_set_t want;
	int node = -1, r = 0, ni;

	memset(out, 0, sizeof(*out));
	if (parse_bind(opts->bind, &out->kind, &node, &want, err, sizeof(err))) {
		snprintf(out->reason, sizeof(out->reason), "%s", err);
		return -EINVAL;
	}
	switch (out->kind) {
	case NUMA_BIND_NONE:
		out->applicable = true;
		break;
	case NUMA_BIND_GPU:
		r = resolve_local(t, "gpu", gpu_numa, t->n_gpus, out);
		break;
	case NUMA_BIND_NIC:
		r = resolve_local(t, "nic", nic_numa, t->n_nics, out);
		break;
	case NUMA_BIND_REMOTE:
		r = resolve_remote(t, gpu_numa, nic_numa, out);
		if (gpu_numa < 0)
			gpu_numa = nic_numa;
		break;
	case NUMA_BIND_INTERLEAVE:
		out->applicable = true;
		out->mem = NUMA_MEM_INTERLEAVE;
		for (int i = 0; i < t->n_numa; i++) {
			if (t->numa[i].mem_kb != 0)
				out->nodemask[t->numa[i].id / NUMA_LONG_BITS] |=
					1UL << (t->numa[i].id % NUMA_LONG_BITS);
		}
		if (t->n_numa == 1)
			snprintf(out->reason, sizeof(out->reason),
				 "only one NUMA node: every page lands on node %d",
				 t->numa[0].id);
		break;
	case NUMA_BIND_NODE:
		ni = topo_numa_index(t, node);
		if (ni < 0) {
			node_ids(t, ids, sizeof(ids));
			snprintf(out->reason, sizeof(out->reason),
				 "%.64s: NUMA node %d does not exist (nodes here: %.64s)", opts->bind, node,
				 ids);
			r = -EINVAL;
			break;
		}
		plan_node(t, ni, out);
		break;
	case NUMA_BIND_CPUS:
		r = resolve_cpus(t, opts->bind, &want, out);
		break;
	}
	if (r)
		return r;
	describe(opts->bind, gpu_numa, out);
	return 0;
}

int numa_bind_resolve(const struct numa_opts *opts, const struct topo *t, int gpu_numa,
		      int nic_numa, struct numa_plan *out)
{
	int r = numa_bind_plan(opts, t, gpu_numa, nic_numa, out);

	if (r)
		log_err(LOG_TOPO, "[numa] bind: %s", out->reason);
	return r;
}

int numa_plan_ncpus(const struct numa_plan *plan)
{
	cpu_set_t set;

	if (!plan->pin_cpus)
		return 0;
	mask_to_set(plan->cpumask, &set);
	return CPU_COUNT(&set);
}

int numa_bind_apply(const struct numa_plan *plan)
{
	char buf[256];

	if (!plan->applicable)
		return -EOPNOTSUPP;
	if (plan->pin_cpus) {
		cpu_set_t set;

		mask_to_set(plan->cpumask, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			int e = errno;

			log_err(LOG_TOPO, "sched_setaffinity cpus=%s: %s",
				cpulist_format(&set, buf, sizeof(buf)), strerror(e));
			return -e;
		}
	}
	if (plan->mem != NUMA_MEM_DEFAULT) {
		int mode = plan->mem == NUMA_MEM_BIND ? MPOL_BIND : MPOL_INTERLEAVE;

		if (set_mempolicy(mode, plan->nodemask, NUMA_MAX_NODES)) {
			int e = errno;

			log_err(LOG_TOPO, "set_mempolicy %s nodes=%s: %s",
				mode == MPOL_BIND ? "bind" : "interleave",
				mask_str(plan->nodemask, buf, sizeof(buf)), strerror(e));
			return -e;
		}
	}
	return 0;
}

static int read_policy(struct numa_actual *out)
{
	unsigned long mask[NUMA_MAX_NODES / NUMA_LONG_BITS] = { 0 };
	char nodes[48];
	int mode;

	if (get_mempolicy(&mode, mask, NUMA_MAX_NODES, NULL, 0)) {
		int e = errno;

		log_err(LOG_TOPO, "get_mempolicy: %s", strerror(e));
		return -e;
	}
	mask_str(mask, nodes, sizeof(nodes));
	switch (mode) {
	case MPOL_BIND:
		snprintf(out->policy, sizeof(out->policy), "bind %s", nodes);
		break;
	case MPOL_INTERLEAVE:
		snprintf(out->policy, sizeof(out->policy), "interleave %s", nodes);
		break;
	case MPOL_PREFERRED:
		snprintf(out->policy, sizeof(out->policy), "preferred %s", nodes);
		break;
	default:
		snprintf(out->policy, sizeof(out->policy), "default");
		break;
	}
	return 0;
}

static int sample_pages(void *buf, size_t len, struct numa_actual *out)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), npages;
	uintptr_t base = (uintptr_t)buf & ~(uintptr_t)(pg - 1);
	void *pages[64];
	int status[64], n;
	size_t off = 0;

	npages = ((uintptr_t)buf + len - base + pg - 1) / pg;
	n = (int)GS_MIN(npages, ARRAY_SIZE(pages));
	for (int i = 0; i < n; i++)  /* evenly spread over the buffer, first and last included */
		pages[i] = (void *)(base + (n > 1 ? (npages - 1) * (size_t)i / (size_t)(n - 1) : 0) *
					       pg);
	if (move_pages(0, (unsigned long)n, pages, NULL, status, 0)) {
		int e = errno;

		log_err(LOG_TOPO, "move_pages query buf=%p len=%zu: %s", buf, len, strerror(e));
		return -e;
	}
	out->pages_sampled = n;
	for (int i = 0; i < n; i++) {
		if (status[i] >= 0 && status[i] < (int)ARRAY_SIZE(out->pages_on_node))
			out->pages_on_node[status[i]]++;
		else
			out->pages_absent++;
	}
	for (int i = 0; i < (int)ARRAY_SIZE(out->pages_on_node); i++) {
		if (out->pages_on_node[i])
			str_appendf(out->mem, sizeof(out->mem), &off, "%snode%d %d",
				    off ? ", " : "", i, out->pages_on_node[i]);
	}
	str_appendf(out->mem, sizeof(out->mem), &off, "%s of %d sampled pages", off ? "" : "none",
		    n);
	if (out->pages_absent)
		str_appendf(out->mem, sizeof(out->mem), &off, ", %d not faulted in",
			    out->pages_absent);
	return 0;
}

int numa_placement_verify(void *buf, size_t len, struct numa_actual *out)
{
	cpu_set_t set;
	int r;

	memset(out, 0, sizeof(*out));
	if (sched_getaffinity(0, sizeof(set), &set)) {
		int e = errno;

		log_err(LOG_TOPO, "sched_getaffinity: %s", strerror(e));
		return -e;
	}
	cpulist_format(&set, out->cpus, sizeof(out->cpus));
	out->cpu = sched_getcpu();
	r = read_policy(out);
	if (r)
		return r;
	if (!buf || !len) {
		snprintf(out->mem, sizeof(out->mem), "no buffer");
		return 0;
	}
	return sample_pages(buf, len, out);
}

void numa_describe(const struct numa_plan *plan, const struct numa_actual *actual, char *buf,
		   size_t len)
{
	if (!plan->applicable) {
		snprintf(buf, len, "requested: %s (%s); actual: cpus %s (on %d), policy %s",
			 plan->requested, plan->reason, actual->cpus, actual->cpu, actual->policy);
		return;
	}
	snprintf(buf, len, "requested: %s%s%s%s; actual: cpus %s (on %d), policy %s, pages %s",
		 plan->requested, plan->reason[0] ? " (" : "", plan->reason,
		 plan->reason[0] ? ")" : "", actual->cpus, actual->cpu, actual->policy,
		 actual->mem);
}
