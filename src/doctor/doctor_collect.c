/* Gathering one node's facts for the checks: sysfs topology, host limits, CUDA, verbs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/doctor.h"
#include "gpu/gpu.h"
#include "transport/verbs/verbs_probe.h"
#include "util/sysread.h"

/* CUDA's word on each GPU topo found: only asked when the driver's module is loaded, so a
 * node without a driver stays quiet. */
static void cuda_facts(struct doctor_node *n)
{
	struct gpu_props p;
	int count = 0;

	if (!n->topo->n_gpus || !sys_exists(n->in.root, "module/nvidia") ||
	    gpu_device_count(&count))
		return;
	for (int d = 0; d < count && n->in.n_gpus < TOPO_MAX_GPUS; d++) {
		int g;

		if (gpu_get_props(d, &p))
			continue;
		g = topo_gpu_by_pci(n->topo, p.pci_bus_id);
		if (g < 0)
			continue;
		n->gpus[n->in.n_gpus++] = (struct doc_gpu_fact){
		    .topo_index = g,
		    .dmabuf = p.dmabuf_supported,
		    .cc_major = p.cc_major,
		    .cc_minor = p.cc_minor,
		};
	}
}

static void verbs_facts(struct doctor_node *n)
{
	struct verbs_port_probe pr[DOC_MAX_PORTS];
	int k = verbs_probe_ports(pr, DOC_MAX_PORTS);

	for (int i = 0; i < k; i++) {
		struct doc_port_fact *f = &n->ports[i];

		snprintf(f->dev, sizeof(f->dev), "%s", pr[i].dev);
		f->port = pr[i].port;
		f->active_mtu = pr[i].active_mtu;
		f->max_mtu = pr[i].max_mtu;
	}
	n->in.n_ports = k > 0 ? k : 0;
}

struct doctor_node *doctor_node_collect(const char *root, int gdr_level, unsigned ask)
{
	struct doctor_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->topo = calloc(1, sizeof(*n->topo));
	if (!n->topo)
		goto out_free;
	if (topo_discover(root, n->topo)) /* it logged the root and why */
		goto out_free;
	n->in.root = n->topo->root;
	n->in.topo = n->topo;
	n->in.gdr_level = gdr_level;
	n->in.gpus = n->gpus;
	n->in.ports = n->ports;
	doctor_host_facts(root, &n->in);
	if (sys_is_live(root)) {
		if (ask & DOC_ASK_CUDA)
			cuda_facts(n);
		if (ask & DOC_ASK_VERBS)
			verbs_facts(n);
	}
	return n;
out_free:
	doctor_node_free(n);
	return NULL;
}

void doctor_node_free(struct doctor_node *n)
{
	if (!n)
		return;
	free(n->topo);
	free(n);
}

json_t *doctor_node_json(const char *root, int gdr_level)
{
	struct doctor_node *n = doctor_node_collect(root, gdr_level, DOC_ASK_VERBS);
	struct doc_report r;
	json_t *j = NULL;

	if (!n)
		return NULL;
	if (!doctor_run(&n->in, &r)) {
		j = doctor_json(&r);
		doctor_report_free(&r);
	}
	doctor_node_free(n);
	return j;
}
