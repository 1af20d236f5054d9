/*
 * The libraries the doctor asks beyond sysfs, CUDA and verbs, on the live node: each asked
 * as a bounded group (util/callbound.h), both at once within one bound, since a wedged GPU
 * driver (cuInit stuck in the kernel) or a dead HCA (ibv_open_device, ibv_query_port)
 * would hang the doctor for ever; and the checks gpu_driver and rdma_verbs, which fail the
 * probe given up on, naming the call, what it was on and the bound. The facts a probe
 * brings feed the other checks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/doctor_priv.h"
#include "gpu/gpu.h"
#include "transport/verbs/verbs_probe.h"
#include "util/callbound.h"
#include "util/log.h"

/* A probe given up on: kept for its check, said now (the wait is over, the doctor goes
 * on). -EINTR (a stop signal) is returned: the command is ending; so is -ENOMEM. */
static int probe_gave_up(struct doc_probe *p, const struct callbound_group *g)
{
	if (g->ret == -ENOMEM)
		return g->ret;
	if (g->ret == -EINTR) {
		log_err(LOG_MAIN, "doctor: %s: %s", g->at.obj, g->why);
		return g->ret;
	}
	log_warn(LOG_MAIN, "doctor: %s: %s", g->at.obj, g->why);
	p->hung = true;
	snprintf(p->subject, sizeof(p->subject), "%s", g->at.obj);
	snprintf(p->what, sizeof(p->what), "%s", g->why);
	return 0;
}

/* CUDA's answer (a struct gpu_list): the facts of each device topology knows. */
static void cuda_facts(struct doctor_node *n, const void *arg)
{
	const struct gpu_list *l = arg;

	n->in.cuda.n = l->count;
	for (int d = 0; d < l->count && d < GPU_LIST_MAX && n->in.n_gpus < TOPO_MAX_GPUS; d++) {
		const struct gpu_props *p = &l->props[d];
		int g = l->rc[d] ? -1 : topo_gpu_by_pci(n->topo, p->pci_bus_id);

		if (g < 0)
			continue;
		n->gpus[n->in.n_gpus++] = (struct doc_gpu_fact){
		    .topo_index = g,
		    .dmabuf = p->dmabuf_supported,
		    .cc_major = p->cc_major,
		    .cc_minor = p->cc_minor,
		};
	}
}

/* The verbs group: its own copy of the ports, the caller's only once it returned. */
struct verbs_group {
	struct verbs_port_probe pr[DOC_MAX_PORTS];
	int n;
};

static void verbs_group(void *arg)
{
	struct verbs_group *v = arg;

	v->n = verbs_probe_ports(v->pr, DOC_MAX_PORTS);
}

/* verbs' answer (a struct verbs_group): each port's MTU. */
static void verbs_facts(struct doctor_node *n, const void *arg)
{
	const struct verbs_group *v = arg;

	for (int i = 0; i < v->n; i++) {
		struct doc_port_fact *f = &n->ports[i];

		snprintf(f->dev, sizeof(f->dev), "%s", v->pr[i].dev);
		f->port = v->pr[i].port;
		f->active_mtu = v->pr[i].active_mtu;
		f->max_mtu = v->pr[i].max_mtu;
	}
	n->in.n_ports = v->n > 0 ? v->n : 0;
	n->in.verbs.n = n->in.n_ports;
}

int doc_probe(struct doctor_node *n, unsigned ask)
{
	/* CUDA first, then verbs: their lines in that order, whichever returned first */
	struct callbound_group g[2];
	struct doc_probe *p[2];
	void (*facts[2])(struct doctor_node *n, const void *arg);
	int k = 0, ret = 0, rc;

	/* CUDA only where the driver's module is loaded, so a node without one stays quiet;
	 * the test hook's wedged driver stands in for one anywhere */
	if ((ask & DOC_ASK_CUDA) &&
	    ((n->topo->n_gpus && n->nvidia_module) || callbound_test_hang(GPU_CALL_INIT))) {
		p[k] = &n->in.cuda;
		facts[k] = cuda_facts;
		gpu_list_group(&g[k++]);
	}
	if (ask & DOC_ASK_VERBS) {
		p[k] = &n->in.verbs;
		facts[k] = verbs_facts;
		g[k++] = (struct callbound_group){
			.fn = verbs_group, .arg = calloc(1, sizeof(struct verbs_group)),
			.drop = free, .what = "RDMA devices", .hint = "HCA or its driver wedged?",
		};
	}
	/* at once, within one bound: a node whose driver and HCA are both wedged waits it once */
	callbound_run_all(g, (size_t)k, n->timeout_ns);
	for (int i = 0; i < k; i++) {
		p[i]->made = true;
		if (g[i].ret) { /* arg is the group's */
			rc = probe_gave_up(p[i], &g[i]);
			ret = ret ? ret : rc;
			continue;
		}
		facts[i](n, g[i].arg);
		free(g[i].arg);
	}
	return ret;
}

/* What a probe's check says: its name and subject, the fix of a hung one, the skip of one
 * that answered with nothing, and what it answered with. */
struct probe_words {
	const char *check, *subject, *fix, *none;
	const char *unit, *answered; /* "device", ", their properties and attributes" */
};

static const struct probe_words cuda_words = {
	.check = "gpu_driver",
	.subject = "CUDA driver",
	.fix = "the driver is stuck in the kernel: look for NVRM / Xid lines in dmesg (nvidia-smi "
	       "hangs as well); reset the GPU (nvidia-smi -r) or reboot the node: every CUDA "
	       "program here hangs until then",
	.none = "CUDA shows no device (the GPU layer said why): GPU facts from sysfs",
	.unit = "device",
	.answered = ", their properties and attributes",
};

static const struct probe_words verbs_words = {
	.check = "rdma_verbs",
	.subject = "RDMA devices",
	.fix = "the HCA or its driver is stuck in the kernel: look in dmesg (mlx5_core health or "
	       "firmware errors; ibv_devinfo hangs as well); reset the device (mlxfwreset) or "
	       "reboot the node, or leave it out with [transport] device",
	.none = "verbs opens no device (ib_uverbs not loaded, /dev/infiniband not accessible, or "
		"a build without verbs): InfiniBand MTU unknown",
	.unit = "port",
	.answered = " opened and queried",
};

static int probe_check(const struct doc_probe *p, const struct probe_words *w,
		       struct doc_report *r)
{
	if (!p->made)
		return 0;
	if (p->hung)
		return doctor_add(r, w->check, DOC_FAIL, p->subject, w->fix, "%s", p->what);
	if (!p->n)
		return doctor_add(r, w->check, DOC_SKIP, w->subject, NULL, "%s", w->none);
	return doctor_add(r, w->check, DOC_PASS, w->subject, NULL, "answered: %d %s%s%s", p->n,
			  w->unit, p->n == 1 ? "" : "s", w->answered);
}

int doc_gpu_driver(const struct doc_input *in, struct doc_report *r)
{
	return probe_check(&in->cuda, &cuda_words, r);
}

int doc_rdma_verbs(const struct doc_input *in, struct doc_report *r)
{
	if (!in->topo->n_nics && !in->verbs.hung) /* rdma_port says there is none */
		return 0;
	return probe_check(&in->verbs, &verbs_words, r);
}
