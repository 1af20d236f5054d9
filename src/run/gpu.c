/*
 * The rank's GPU in `gradsync run`: opened by the first case that asks for one (never in
 * the driver, which forks the ranks), calibrated for compute = gemm / spin, and the path
 * of the case's GPU buffers (decided by topo/gdr.c before the transports open).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "coll/gpu_memops.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

#define RUN_GPU_TIMEOUT_MS 60000

static bool case_wants_gpu(const struct run_rank *rr)
{
	return gpu_opts_wanted(&rr->ecase->cfg.gpu);
}

/* Calibrate one rank of a host at a time: ranks sharing a GPU would halve each other. */
static int calibrate(struct run_rank *rr)
{
	int n = rr->li.nranks, *locals = calloc(n, sizeof(int)), max = 0, lr, ret;

	if (!locals)
		return -ENOMEM;
	ret = bootstrap_allgather(rr->bs, &rr->li.local_nranks, locals, sizeof(int));
	for (int r = 0; r < n && !ret; r++)
		max = GS_MAX(max, locals[r]);
	free(locals);
	for (lr = 0; lr < max && !ret; lr++) {
		if (lr == rr->li.local_rank && rr->gpu.ctx && rr->gpu.tflops_cal <= 0) {
			ret = gpu_calibrate(rr->gpu.ctx->compute, RUN_GPU_TIMEOUT_MS, &rr->gpu.tflops_cal);
			if (ret)
				log_err(LOG_GPU, "case %s: gpu_calibrate on GPU %d: %s", rr->ecase->name,
					rr->gpu.ctx->dev, strerror(-ret));
			else
				log_info(LOG_GPU, "GPU %d (%s): our GEMM runs at %.1f TFLOP/s",
					 rr->gpu.ctx->dev, rr->gpu.ctx->props.name, rr->gpu.tflops_cal);
		}
		if (!ret)
			ret = bootstrap_barrier(rr->bs);
	}
	return ret;
}

int run_gpu_case_open(struct run_rank *rr)
{
	const struct workload_opts *w = &rr->ecase->cfg.workload;
	bool gpu_compute = w->compute == COMPUTE_GEMM || w->compute == COMPUTE_SPIN;
	bool workload = workload_has_model(w);
	int ret = 0, idx;

	if (case_wants_gpu(rr) && !rr->gpu.ctx) {
		ret = gpu_open(&rr->ecase->cfg.gpu, rr->li.local_rank, &rr->gpu.ctx);
		if (ret == -ENODEV || ret == -ENOTSUP) {
			if (strcmp(rr->ecase->cfg.gpu.device, "auto")) {
				log_err(LOG_GPU, "case %s: [gpu] device = %s but this rank has no GPU",
					rr->ecase->name, rr->ecase->cfg.gpu.device);
				return ret;
			}
			log_warn(LOG_GPU, "case %s: [gpu] device = auto but no GPU here: host buffers",
				 rr->ecase->name);
			ret = 0;
		} else if (ret) {
			log_err(LOG_GPU, "case %s: open GPU for local rank %d: %s", rr->ecase->name,
				rr->li.local_rank, strerror(-ret));
			return ret;
		} else {
			idx = topo_gpu_by_pci(rr->node.topo, rr->gpu.ctx->props.pci_bus_id);
			rr->gpu.index = idx >= 0 ? idx : -1;
		}
	}
	if (workload && gpu_compute && !(rr->gpu.ctx && case_wants_gpu(rr))) {
		log_err(LOG_WORKLOAD, "case %s: compute = %s needs a GPU: set [gpu] device = auto (or a list) on a node with GPUs",
			rr->ecase->name, compute_mode_name(w->compute));
		return -ENODEV;
	}
	/* compute = gemm / spin plays the modelled times on our own kernels: their rate on
	 * this GPU turns seconds into work */
	if (workload && gpu_compute)
		ret = calibrate(rr);
	return ret;
}

void run_gpu_close(struct run_rank *rr)
{
	gpu_close(rr->gpu.ctx);
	rr->gpu.ctx = NULL;
}

/* The kernel driver's version from sysfs ("" when the module is not loaded). Unbounded:
 * a module's version is a constant string in the kernel, no driver call behind it. */
static void driver_version(char *out, size_t len)
{
	FILE *f = fopen("/sys/module/nvidia/version", "r");

	out[0] = '\0';
	if (f) {
		if (!fgets(out, (int)len, f))
			out[0] = '\0';
		fclose(f);
	}
	out[strcspn(out, "\n")] = '\0';
}

bool run_gpu_facts(const struct run_rank *rr, struct rj_gpu *g, char *drv, size_t drvlen,
		   char *cc, size_t cclen)
{
	const struct gpu_props *p;

	if (!rr->gpu.ctx || !case_wants_gpu(rr))
		return false;
	p = &rr->gpu.ctx->props;
	driver_version(drv, drvlen);
	snprintf(cc, cclen, "%d.%d", p->cc_major, p->cc_minor);
	*g = (struct rj_gpu){
		.device = p->index, .name = p->name, .bus_id = p->pci_bus_id, .driver = drv,
		.cc = cc, .sm_count = p->sm_count, .mem_bytes = p->mem_total,
		.dmabuf = p->dmabuf_supported, .gdr = p->gdr_supported, .topo_index = rr->gpu.index,
	};
	return true;
}

/* The RDMA NIC the case names (transport.device = NAME[:PORT]), "" for auto. */
static void case_nic(const struct run_rank *rr, char *name, size_t len)
{
	snprintf(name, len, "%s", rr->ecase->cfg.transport.device);
	name[strcspn(name, ":")] = '\0';
}

/* What carries the case's bytes for the GPU path: the slowest wire decides (any tcp/shm
 * peer stages the buffers). */
static enum gdr_wire case_wire(const struct run_comm *rc)
{
	bool used[TP_KIND_COUNT] = { false };
	int p;

	for (p = 0; p < rc->nranks; p++)
		if (rc->peer_kind[p] >= 0)
			used[rc->peer_kind[p]] = true;
	if (used[TP_TCP] || used[TP_SHM])
		return GDR_WIRE_HOST;
	if (used[TP_IB] || used[TP_ROCE])
		return GDR_WIRE_RDMA;
	return used[TP_CUDAIPC] ? GDR_WIRE_IPC : GDR_WIRE_HOST;
}

/* The verbs transport the case's RDMA peers use, -1 for none. */
static int case_rdma_kind(const struct run_comm *rc)
{
	int p, k = -1;

	for (p = 0; p < rc->nranks; p++)
		if (rc->peer_kind[p] == TP_IB || rc->peer_kind[p] == TP_ROCE)
			k = rc->peer_kind[p];
	return k;
}

static void rank_gdr_gpu(const struct run_rank *rr, struct gdr_gpu *g)
{
	memset(g, 0, sizeof(*g));
	g->gpu_index = rr->gpu.index;
	g->dmabuf_supported = rr->gpu.ctx->props.dmabuf_supported;
	g->cc_major = rr->gpu.ctx->props.cc_major;
	g->cc_minor = rr->gpu.ctx->props.cc_minor;
}

int run_gpu_path_setup(struct run_rank *rr, struct run_comm *rc)
{
	const struct cfg *c = &rr->ecase->cfg;
	struct gdr_gpu g;
	char nic[64];
	int ret, k;

	rc->gpu.ctx = NULL;
	memset(&rc->gpu.path, 0, sizeof(rc->gpu.path));
	snprintf(rc->gpu.path.reason, sizeof(rc->gpu.path.reason), "%s",
		 case_wants_gpu(rr) ? "no GPU on this rank" : "[gpu] device = none");
	if (!rr->gpu.ctx || !case_wants_gpu(rr))
		return 0;
	if (c->collective.op != COLL_OP_ALLREDUCE && !rc->nccl) {
		/* perftest-style modes move bytes with no memops: they measure host buffers */
		snprintf(rc->gpu.path.reason, sizeof(rc->gpu.path.reason),
			 "write_bw/write_lat use host buffers");
		return 0;
	}
	rc->gpu.ctx = rr->gpu.ctx;
	if (rc->nccl) {
		/* the reference: NCCL takes the GPU buffers and chooses its own path */
		rc->gpu.path.mode = GDR_PATH_NCCL;
		snprintf(rc->gpu.path.reason, sizeof(rc->gpu.path.reason),
			 "transport = nccl: libnccl moves GPU buffers itself");
		return 0;
	}
	rank_gdr_gpu(rr, &g);
	case_nic(rr, nic, sizeof(nic));
	/* device = auto: judge GDR on the NIC verbs opens first, the rank's rail
	 * (path_confirm checks the one it opened) */
	k = case_rdma_kind(rc);
	if ((!nic[0] || !strcmp(nic, "auto")) && k >= 0 && rc->env[k].rail[0])
		snprintf(nic, sizeof(nic), "%s", rc->env[k].rail);
	snprintf(rc->gpu.nic, sizeof(rc->gpu.nic), "%s", nic);
	ret = gdr_decide(rr->node.topo, &g, case_wire(rc), nic, &c->gpu, &rc->gpu.path);
	if (ret) {
		log_err(LOG_GPU, "case %s: %s (GPU %s)", rr->ecase->name, rc->gpu.path.reason,
			rr->gpu.ctx->props.name);
		return ret;
	}
	if (rc->gpu.path.fallback)
		log_warn(LOG_GPU, "case %s: %s", rr->ecase->name, rc->gpu.path.reason);
	return 0;
}

/*
 * device = auto and the rail had no ACTIVE port: verbs opened another NIC, and GDR is
 * judged again on that one before any buffer exists. The transports were opened with
 * their receive flush fixed, so a NIC that would need one it was not given stages.
 */
static int path_confirm(struct run_rank *rr, struct run_comm *rc)
{
	const struct cfg *c = &rr->ecase->cfg;
	int k = case_rdma_kind(rc), ret;
	struct tp_path_info pi;
	struct gdr_path p;
	struct gdr_gpu g;
	char nic[64];

	case_nic(rr, nic, sizeof(nic));
	if (rc->nccl || case_wire(rc) != GDR_WIRE_RDMA || (nic[0] && strcmp(nic, "auto")) ||
	    k < 0 || !rc->open[k] || rc->tp[k].ops->path_info(&rc->tp[k], &pi) ||
	    !strcmp(pi.device, rc->gpu.nic))
		return 0;
	rank_gdr_gpu(rr, &g);
	ret = gdr_decide(rr->node.topo, &g, GDR_WIRE_RDMA, pi.device, &c->gpu, &p);
	if (!ret && p.flush && !rc->env[k].gdr_flush) {
		if (c->gpu.gdr == GPU_ON) {
			snprintf(p.reason, sizeof(p.reason),
				 "gdr = on impossible: verbs opened NIC %s (not the rail %s), which needs receive flushes",
				 pi.device, rc->gpu.nic[0] ? rc->gpu.nic : "auto");
			ret = -EOPNOTSUPP;
		} else {
			p.mode = GDR_PATH_STAGED;
			p.flush = false;
			p.fallback = true;
			p.mechanism[0] = '\0';
			snprintf(p.reason, sizeof(p.reason),
				 "gdr = auto, staged: verbs opened NIC %s (not the rail %s), which needs receive flushes",
				 pi.device, rc->gpu.nic[0] ? rc->gpu.nic : "auto");
		}
	}
	rc->gpu.path = p;
	snprintf(rc->gpu.nic, sizeof(rc->gpu.nic), "%s", pi.device);
	if (ret) {
		log_err(LOG_GPU, "case %s: %s (GPU %s)", rr->ecase->name, p.reason, rr->gpu.ctx->props.name);
		return ret;
	}
	if (p.fallback)
		log_warn(LOG_GPU, "case %s: %s", rr->ecase->name, p.reason);
	return 0;
}

int run_gpu_comm_setup(struct run_rank *rr, struct run_comm *rc)
{
	int ret;

	if (!rc->gpu.ctx)
		return 0;
	ret = path_confirm(rr, rc);
	if (ret)
		return ret;
	rc->gpu.mem = gpu_memops_create(rr->ecase->cfg.collective.channels);
	return rc->gpu.mem ? 0 : -ENOMEM;
}

void run_gpu_comm_close(struct run_comm *rc)
{
	gpu_memops_destroy(rc->gpu.mem);
	rc->gpu.mem = NULL;
}

int run_gpu_sync(struct activity *a, struct gpu_stream *s, int timeout_ms)
{
	struct act_mark m;
	int ret;

	act_enter(a, ACT_GPU_SYNC, -1, 0, time_now_ns(), &m);
	ret = gpu_stream_sync(s, timeout_ms);
	act_leave(a, &m, time_now_ns());
	return ret;
}
