/*
 * Where a rank runs and how good its numbers can be: the NUMA binding of the case
 * (resolved against the topology, applied before any thread or buffer exists, then
 * verified), and the bound every bandwidth is compared with (NIC line rate for
 * ib/roce, interface speed for tcp, measured memcpy bandwidth for shm, and the GPU's PCIe
 * link for staged GPU buffers).
 */
#include <errno.h>
#include <numaif.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "coll/reduce.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

int run_node_init(struct run_rank *rr)
{
	int ret;

	rr->node.topo = calloc(1, sizeof(*rr->node.topo));
	if (!rr->node.topo)
		return -ENOMEM;
	ret = topo_discover("/sys", rr->node.topo);
	if (ret)
		log_warn(LOG_TOPO, "topology of this node unknown (%s): NUMA bindings gpu/nic not applicable",
			 strerror(-ret));
	if (sched_getaffinity(0, sizeof(rr->node.cpus0), &rr->node.cpus0))
		CPU_ZERO(&rr->node.cpus0);
	return 0;
}

void run_node_fini(struct run_rank *rr)
{
	free(rr->node.topo);
	rr->node.topo = NULL;
}

/* NUMA node of the case's RDMA NIC (device = NAME[:PORT], or the first NIC), or -1. */
static int nic_node(const struct run_rank *rr)
{
	const struct transport_opts *t = &rr->ecase->cfg.transport;
	char name[TRANSPORT_NAME_MAX];

	if (!rr->node.topo->n_nics)
		return -1;
	snprintf(name, sizeof(name), "%s", t->device);
	name[strcspn(name, ":")] = '\0';
	if (!strcmp(name, "auto"))
		snprintf(name, sizeof(name), "%s", rr->node.topo->nics[0].name);
	return topo_nic_numa_node(rr->node.topo, name);
}

void run_node_case_begin(struct run_rank *rr)
{
	rr->node.numa_actual[0] = '\0'; /* a case that fails before binding says so */
}

int run_node_bind(struct run_rank *rr)
{
	int gpu = -1, nic, ret;

	/* a previous case of this process may have bound it: start from the launch state */
	if (CPU_COUNT(&rr->node.cpus0))
		sched_setaffinity(0, sizeof(rr->node.cpus0), &rr->node.cpus0);
	set_mempolicy(MPOL_DEFAULT, NULL, 0);
	if (rr->gpu.index >= 0)
		gpu = topo_gpu_numa_node(rr->node.topo, rr->gpu.index);
	nic = nic_node(rr);
	ret = numa_bind_resolve(&rr->ecase->cfg.numa, rr->node.topo, gpu < 0 ? -1 : gpu,
				nic < 0 ? -1 : nic, &rr->node.numa_plan);
	if (ret)
		return ret;
	if (!rr->node.numa_plan.applicable) {
		log_warn(LOG_TOPO, "numa bind = %s not applicable here: %s (running unbound)",
			 rr->ecase->cfg.numa.bind, rr->node.numa_plan.reason);
		return 0;
	}
	return numa_bind_apply(&rr->node.numa_plan);
}

void run_node_verify(struct run_rank *rr, void *buf, size_t len)
{
	struct numa_actual act;

	if (numa_placement_verify(buf, len, &act))
		return;
	numa_describe(&rr->node.numa_plan, &act, rr->node.numa_actual, sizeof(rr->node.numa_actual));
}

/* Best of a few 64 MiB copies, buffers touched first: the shared-memory bound. */
static double memcpy_measure(void)
{
	size_t len = 64ull << 20;
	char *a = malloc(len), *b = malloc(len);
	double best = 0;
	int i;

	if (a && b) {
		memset(a, 1, len);
		memset(b, 2, len);
		for (i = 0; i < RUN_MEMCPY_REPS; i++) {
			uint64_t t = time_now_ns();

			memcpy(b, a, len);
			t = time_now_ns() - t;
			if (t)
				best = GS_MAX(best, len / (t / 1e9));
		}
	}
	free(a);
	free(b);
	return best;
}

double run_node_memcpy_Bps(bool from_driver)
{
	const char *e = from_driver ? getenv(RUN_MEMCPY_ENV) : NULL;
	double v = e ? strtod(e, NULL) : 0;

	return v > 0 ? v : memcpy_measure();
}

void run_node_bound(struct run_rank *rr, struct run_comm *rc, struct rj_bound *b, char *desc,
		    size_t len)
{
	double best = 0;
	const char *kind = "none";
	int k;

	snprintf(desc, len, "no bound known for this path");
	/* the slowest path of the case bounds it */
	for (k = 0; k < TP_KIND_COUNT; k++) {
		struct tp_path_info pi = { 0 };
		double bps = 0;
		const char *kk = NULL;

		if (!rc->open[k])
			continue;
		rc->tp[k].ops->path_info(&rc->tp[k], &pi);
		if (k == TP_SHM) {
			if (rr->node.memcpy_Bps <= 0)
				rr->node.memcpy_Bps = run_node_memcpy_Bps(rr->li.spawned);
			bps = rr->node.memcpy_Bps;
			kk = "memcpy";
			snprintf(desc, len, "measured memcpy %.1f GB/s (best of %d 64 MiB "
				 "copies, once per run before the first case)", bps / 1e9,
				 RUN_MEMCPY_REPS);
		} else if (pi.rate_bps) {
			bps = pi.rate_bps / 8.0;
			kk = k == TP_TCP ? "tcp_if" : "nic";
			snprintf(desc, len, "%s %s line rate %.1f GB/s", pi.device, pi.rate, bps / 1e9);
		}
		if (!kk) {
			/* an unknown bound on one path leaves the case without one */
			best = -1;
			snprintf(desc, len, "%s on %s: speed unknown", pi.transport,
				 *pi.device ? pi.device : "?");
			kind = "none";
			break;
		}
		if (best == 0 || bps < best) {
			best = bps;
			kind = kk;
		}
	}
	/* GPU to GPU (cudaipc, NCCL) runs over NVLink or PCIe P2P: sysfs shows neither rate */
	if (rc->gpu.ctx && (rc->gpu.path.mode == GDR_PATH_IPC || rc->gpu.path.mode == GDR_PATH_NCCL)) {
		snprintf(desc, len, "GPU to GPU (NVLink or PCIe P2P): link rate not known to gradsync");
		*b = (struct rj_bound){ .kind = "none", .Bps = 0.0, .desc = desc };
		return;
	}
	/* staged GPU buffers cross the GPU's PCIe link both ways: it bounds them too */
	if (rc->gpu.ctx && rc->gpu.path.mode != GDR_PATH_RW && best >= 0) {
		char pdesc[80];
		double pcie = topo_gpu_pcie_Bps(rr->node.topo, rr->gpu.index, pdesc, sizeof(pdesc));

		if (pcie > 0 && (best == 0 || pcie < best)) {
			best = pcie;
			kind = "pcie";
			snprintf(desc, len, "%s (staged GPU buffers)", pdesc);
		}
	}
	*b = (struct rj_bound){ .kind = kind, .Bps = best > 0 ? best : 0.0, .desc = desc };
}

const char *run_node_reduce_isa(void)
{
	return reduce_isa_name(reduce_isa());
}
