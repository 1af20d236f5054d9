/*
 * The rank's GPU in `gradsync run`: opened by the first case that asks for one (never in
 * the driver, which forks the ranks), calibrated for compute = gemm / spin, the path of the
 * case's GPU buffers (gdr.c) and those buffers: device memory registered directly for
 * GPUDirect RDMA, or device memory with a pinned host mirror the transports use.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "gpu/memops.h"
#include "util/common.h"
#include "util/log.h"
#include "util/shmem.h"

#define RUN_GPU_TIMEOUT_MS 60000

static bool case_wants_gpu(const struct run_rank *rr)
{
	return strcmp(rr->ecase->cfg.gpu.device, "none") != 0;
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
		if (lr == rr->li.local_rank && rr->gpu && rr->gpu_tflops_cal <= 0) {
			ret = gpu_calibrate(rr->gpu->compute, RUN_GPU_TIMEOUT_MS, &rr->gpu_tflops_cal);
			if (ret)
				log_err(LOG_GPU, "case %s: gpu_calibrate on GPU %d: %s", rr->ecase->name,
					rr->gpu->dev, strerror(-ret));
			else
				log_info(LOG_GPU, "GPU %d (%s): our GEMM runs at %.1f TFLOP/s",
					 rr->gpu->dev, rr->gpu->props.name, rr->gpu_tflops_cal);
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
	bool workload = strcmp(w->model, "none") != 0;
	int ret = 0, idx;

	if (case_wants_gpu(rr) && !rr->gpu) {
		ret = gpu_open(&rr->ecase->cfg.gpu, rr->li.local_rank, &rr->gpu);
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
			idx = topo_gpu_by_pci(rr->topo, rr->gpu->props.pci_bus_id);
			rr->gpu_index = idx >= 0 ? idx : -1;
		}
	}
	if (workload && gpu_compute && !(rr->gpu && case_wants_gpu(rr))) {
		log_err(LOG_WORKLOAD, "case %s: compute = %s needs a GPU: set [gpu] device = auto (or a list) on a node with GPUs",
			rr->ecase->name, w->compute == COMPUTE_GEMM ? "gemm" : "spin");
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
	gpu_close(rr->gpu);
	rr->gpu = NULL;
}

/* The kernel driver's version from sysfs ("" when the module is not loaded). */
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

json_t *run_gpu_json(const struct run_rank *rr)
{
	const struct gpu_props *p;
	char drv[64], cc[16];

	if (!rr->gpu || !case_wants_gpu(rr))
		return json_null();
	p = &rr->gpu->props;
	driver_version(drv, sizeof(drv));
	snprintf(cc, sizeof(cc), "%d.%d", p->cc_major, p->cc_minor);
	return json_pack("{s:i, s:s, s:s, s:s, s:s, s:i, s:I, s:b, s:b, s:i}", "device", p->index,
			 "name", p->name, "bus_id", p->pci_bus_id, "driver", drv, "cc", cc, "sm_count",
			 p->sm_count, "mem_bytes", (json_int_t)p->mem_total, "dmabuf",
			 p->dmabuf_supported, "gdr", p->gdr_supported, "topo_index", rr->gpu_index);
}

/* The RDMA NIC the case names (transport.device = NAME[:PORT]), "" for auto. */
static void case_nic(const struct run_rank *rr, char *name, size_t len)
{
	snprintf(name, len, "%s", rr->ecase->cfg.transport.device);
	name[strcspn(name, ":")] = '\0';
}

int run_gpu_comm_setup(struct run_rank *rr, struct run_comm *rc)
{
	const struct cfg *c = &rr->ecase->cfg;
	struct run_gpu_facts f = { .gpu_index = rr->gpu_index };
	char nic[64];
	int k, kind = -1, ret;

	rc->gpu = NULL;
	memset(&rc->gpath, 0, sizeof(rc->gpath));
	snprintf(rc->gpath.reason, sizeof(rc->gpath.reason), "%s",
		 case_wants_gpu(rr) ? "no GPU on this rank" : "[gpu] device = none");
	if (!rr->gpu || !case_wants_gpu(rr))
		return 0;
	rc->gpu = rr->gpu;
	if (rc->nccl) {
		/* the reference: NCCL takes the GPU buffers and chooses its own path */
		rc->gpath.mode = RUN_GPU_NCCL;
		snprintf(rc->gpath.reason, sizeof(rc->gpath.reason),
			 "transport = nccl: libnccl moves GPU buffers itself");
		rc->gmem = gpu_memops_create(c->collective.channels);
		return rc->gmem ? 0 : -ENOMEM;
	}
	f.dmabuf_supported = rr->gpu->props.dmabuf_supported;
	f.cc_major = rr->gpu->props.cc_major;
	f.cc_minor = rr->gpu->props.cc_minor;
	/* the slowest path decides: any tcp/shm peer stages the buffers */
	for (k = 0; k < TP_KIND_COUNT; k++) {
		bool used = false;

		for (int p = 0; p < rc->nranks; p++)
			used |= rc->peer_kind[p] == k;
		if (used && (kind < 0 || k == TP_TCP || k == TP_SHM))
			kind = k;
	}
	case_nic(rr, nic, sizeof(nic));
	/* device = auto: judge GDR on the NIC the verbs transport opened (the rank's rail, or
	 * the first ACTIVE port when the rail had none), not on a NIC it does not use */
	if ((!nic[0] || !strcmp(nic, "auto")) && kind >= 0 && rc->open[kind] &&
	    (kind == TP_IB || kind == TP_ROCE)) {
		struct tp_path_info pi;

		if (!rc->tp[kind].ops->path_info(&rc->tp[kind], &pi))
			snprintf(nic, sizeof(nic), "%s", pi.device);
	}
	ret = run_gdr_decide(rr->topo, &f, kind < 0 ? TP_TCP : kind, nic, &c->gpu, &rc->gpath);
	if (ret) {
		log_err(LOG_GPU, "case %s: %s (GPU %s)", rr->ecase->name, rc->gpath.reason,
			rr->gpu->props.name);
		return ret;
	}
	if (rc->gpath.mode == RUN_GPU_STAGED && strstr(rc->gpath.reason, "auto, staged"))
		log_warn(LOG_GPU, "case %s: %s", rr->ecase->name, rc->gpath.reason);
	/* read by the open verbs transports when GPU buffers are registered, after this */
	if (rc->gpath.flush &&
	    (rc->gpath.mode == RUN_GPU_GDR_WRITE || rc->gpath.mode == RUN_GPU_GDR_RW)) {
		rc->env[TP_IB].gdr_flush = true;
		rc->env[TP_ROCE].gdr_flush = true;
	}
	rc->gmem = gpu_memops_create(c->collective.channels);
	return rc->gmem ? 0 : -ENOMEM;
}

void run_gpu_comm_close(struct run_comm *rc)
{
	gpu_memops_destroy(rc->gmem);
	rc->gmem = NULL;
}

/*
 * Host buffers are shmem allocations where possible: shm peers then reduce and copy
 * straight from them (one pass instead of two through the ring's slots). Pinned mirrors
 * of GPU buffers cannot be (the driver allocates them) and go through slots.
 */
static int host_alloc(struct run_comm *rc, struct run_dbuf *b, uint64_t bytes)
{
	if (rc->gpu) {
		b->host = gpu_host_alloc(bytes ? bytes : 1); /* pinned and touched */
		b->pinned = b->host != NULL;
	} else if ((b->host = shmem_alloc(bytes))) {
		b->shared = true; /* touched too */
	} else if (posix_memalign(&b->host, 4096, bytes ? bytes : 1)) {
		b->host = NULL;
	} else {
		/* touch every page now: a first touch on the data path costs ~15 us a page */
		memset(b->host, 0, bytes);
	}
	return b->host ? 0 : -ENOMEM;
}

static void host_free(struct run_dbuf *b)
{
	if (b->pinned)
		gpu_host_free(b->host);
	else if (b->shared)
		shmem_free(b->host);
	else
		free(b->host);
	b->host = NULL;
	b->pinned = b->shared = false;
}

/* Staged through host: the data always; scratch unless the NIC writes GPU memory. */
/* With transport = nccl there is no comm of ours: the buffer is only described. */
static int dbuf_register(struct run_comm *rc, struct run_dbuf *b, uint64_t bytes)
{
	void *p = b->host ? b->host : b->dev;
	enum mem_kind kind = b->host ? MEM_HOST : MEM_CUDA;

	if (rc->coll)
		return coll_buf_register(rc->coll, &b->cb, p, bytes, kind);
	memset(&b->cb, 0, sizeof(b->cb));
	b->cb.ptr = p;
	b->cb.bytes = bytes;
	b->cb.kind = kind;
	return 0;
}

static void dbuf_deregister(struct run_comm *rc, struct run_dbuf *b)
{
	if (rc->coll)
		coll_buf_deregister(rc->coll, &b->cb);
}

static bool staged(const struct run_comm *rc, int which)
{
	return rc->gpath.mode == RUN_GPU_STAGED ||
	       (rc->gpath.mode == RUN_GPU_GDR_WRITE && which == GPU_MIRROR_DATA);
}

int run_dbuf_alloc(struct run_comm *rc, struct run_dbuf *b, uint64_t bytes, int which)
{
	int ret;

	memset(b, 0, sizeof(*b));
	if (rc->gpu) {
		b->dev = gpu_alloc(bytes ? bytes : 1);
		if (!b->dev)
			return -ENOMEM;
		ret = gpu_memset_async(b->dev, 0, bytes, rc->gpu->comm);
		if (!ret)
			ret = gpu_stream_sync(rc->gpu->comm, RUN_GPU_TIMEOUT_MS);
		if (ret)
			goto out_dev;
	}
	if (!rc->gpu || staged(rc, which)) {
		ret = host_alloc(rc, b, bytes);
		if (ret)
			goto out_dev;
	}
	ret = dbuf_register(rc, b, bytes);
	if (ret) {
		log_err(LOG_TRANSPORT, "register %llu bytes of %s memory with the case's transports: %s",
			(unsigned long long)bytes, b->host ? "host" : "GPU", strerror(-ret));
		goto out_host;
	}
	if (rc->gpu && b->host)
		ret = gpu_memops_mirror(rc->gmem, which, b->host, b->dev, bytes);
	if (!ret)
		return 0;
	dbuf_deregister(rc, b);
out_host:
	host_free(b);
out_dev:
	gpu_free(b->dev);
	b->dev = NULL;
	return ret;
}

void run_dbuf_free(struct run_comm *rc, struct run_dbuf *b, int which)
{
	if (!b->cb.ptr)
		return;
	if (rc->gmem)
		gpu_memops_mirror(rc->gmem, which, NULL, NULL, 0);
	dbuf_deregister(rc, b);
	host_free(b);
	gpu_free(b->dev);
	b->dev = NULL;
	b->cb.ptr = NULL;
}
