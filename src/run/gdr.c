/*
 * Which path GPU buffers take: GPUDirect RDMA when the transport is ib/roce, the GPU-NIC
 * PCIe path class is within [gpu] gdr_level (NCCL_NET_GDR_LEVEL) and a registration
 * mechanism exists (dma-buf or nvidia-peermem), else staged through host memory.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "run/gpu.h"
#include "transport/transport.h"
#include "util/common.h"

const char *run_gdr_level_name(int level)
{
	static const char *const names[] = { "LOC", "PIX", "PXB", "PHB", "SYS" };

	return level >= 0 && level < (int)ARRAY_SIZE(names) ? names[level] : "?";
}

const char *run_gpu_mode_name(enum run_gpu_mode m)
{
	switch (m) {
	case RUN_GPU_STAGED:
		return "staged";
	case RUN_GPU_GDR_WRITE:
		return "gdr write, staged sends";
	case RUN_GPU_GDR_RW:
		return "gdr read+write";
	case RUN_GPU_IPC:
		return "gpu memory (cudaipc)";
	case RUN_GPU_NCCL:
		return "gpu memory (nccl)";
	default:
		return "host memory";
	}
}

json_t *run_gpu_path_json(const struct run_gpu_path *p)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:b, s:s}", "mode", run_gpu_mode_name(p->mode),
			 "mechanism", p->mechanism, "gpu_nic_path", p->gpu_nic_path, "gdr_level",
			 p->gdr_level, "flush", p->flush, "reason", p->reason);
}

/* The mechanism gdr_mode asks for and the node has, or NULL with *missing set. */
static const char *mechanism(const struct topo *t, const struct run_gpu_facts *g, int mode,
			     char *missing, size_t len)
{
	bool dmabuf = g->dmabuf_supported && t->dmabuf_kernel;
	bool peermem = t->peermem[0] != '\0';
	const char *why = !g->dmabuf_supported ? "the GPU/driver cannot export dma-bufs"
					       : "the kernel has no dma-buf RDMA (< 5.12)";

	if (mode != GDR_MODE_PEERMEM && dmabuf)
		return "dmabuf";
	if (mode != GDR_MODE_DMABUF && peermem)
		return "peermem";
	if (mode == GDR_MODE_DMABUF)
		snprintf(missing, len, "gdr_mode = dmabuf but %s", why);
	else if (mode == GDR_MODE_PEERMEM)
		snprintf(missing, len, "gdr_mode = peermem but neither nvidia_peermem nor nv_peer_mem is loaded");
	else
		snprintf(missing, len, "no mechanism: %s and no nvidia_peermem module is loaded", why);
	return NULL;
}

int run_gdr_decide(const struct topo *t, const struct run_gpu_facts *g, int tp_kind,
		   const char *nic, const struct gpu_opts *o, struct run_gpu_path *out)
{
	enum topo_path cls = TOPO_PATH_UNKNOWN;
	const char *gpu_pci = g->gpu_index >= 0 && g->gpu_index < t->n_gpus
				      ? t->gpus[g->gpu_index].pci : "?";
	const char *mech;
	char missing[200] = "";
	int n = -ENOENT;

	memset(out, 0, sizeof(*out));
	snprintf(out->gdr_level, sizeof(out->gdr_level), "%s", run_gdr_level_name(o->gdr_level));
	out->mode = RUN_GPU_STAGED;
	if (tp_kind == TP_CUDAIPC) {
		out->mode = RUN_GPU_IPC;
		snprintf(out->reason, sizeof(out->reason), "cudaipc moves GPU buffers GPU to GPU");
		return 0;
	}
	if (tp_kind != TP_IB && tp_kind != TP_ROCE) {
		snprintf(out->reason, sizeof(out->reason), "tcp/shm always stage GPU buffers");
		return 0;
	}
	if (o->gdr == GPU_OFF) {
		snprintf(out->reason, sizeof(out->reason), "[gpu] gdr = off");
		return 0;
	}
	if (nic && *nic && strcmp(nic, "auto"))
		n = topo_nic_by_name(t, nic);
	else if (g->gpu_index >= 0)
		n = topo_nic_closest_to_gpu(t, g->gpu_index, &cls);
	if (n >= 0 && g->gpu_index >= 0 && g->gpu_index < t->n_gpus)
		cls = topo_path_class(t, gpu_pci, t->nics[n].pci);
	snprintf(out->gpu_nic_path, sizeof(out->gpu_nic_path), "%s",
		 cls == TOPO_PATH_UNKNOWN ? "?" : topo_path_name(cls));
	mech = mechanism(t, g, o->gdr_mode, missing, sizeof(missing));
	if (cls == TOPO_PATH_UNKNOWN || !topo_gdr_allowed(cls, o->gdr_level) || !mech) {
		char what[256];

		if (cls == TOPO_PATH_UNKNOWN)
			snprintf(what, sizeof(what), "GPU %s or NIC %s not found in the topology",
				 gpu_pci, nic && *nic ? nic : "auto");
		else if (!topo_gdr_allowed(cls, o->gdr_level))
			snprintf(what, sizeof(what), "GPU %s - NIC %s path %s is farther than gdr_level %s",
				 gpu_pci, t->nics[n].name, topo_path_name(cls), out->gdr_level);
		else
			snprintf(what, sizeof(what), "GPU %s - NIC %s path %s (gdr_level %s): %s",
				 gpu_pci, t->nics[n].name, topo_path_name(cls), out->gdr_level,
				 missing);
		if (o->gdr == GPU_ON) {
			snprintf(out->reason, sizeof(out->reason), "gdr = on impossible: %s", what);
			return -EOPNOTSUPP;
		}
		snprintf(out->reason, sizeof(out->reason), "gdr = auto, staged: %s", what);
		return 0;
	}
	snprintf(out->mechanism, sizeof(out->mechanism), "%s", mech);
	/* sends read GPU memory unless told not to (auto: on, as NCCL from Ampere) */
	if (o->gdr_read == GPU_OFF)
		out->mode = RUN_GPU_GDR_WRITE;
	else
		out->mode = RUN_GPU_GDR_RW;
	/* before Hopper, data the NIC wrote must be flushed before a kernel reads it: the
	 * verbs transport reads from the region over a loopback QP (transport_env.gdr_flush) */
	out->flush = g->cc_major < 9;
	snprintf(out->reason, sizeof(out->reason),
		 "GPU %s - NIC %s path %s within gdr_level %s, %s%s%s", gpu_pci, t->nics[n].name,
		 topo_path_name(cls), out->gdr_level, mech,
		 o->gdr_read == GPU_OFF ? ", gdr_read = off" : "",
		 out->flush ? ", receives flushed by loopback RDMA READ" : "");
	return 0;
}

double run_gpu_pcie_Bps(const struct topo *t, int gpu_index, char *desc, size_t len)
{
	const struct topo_pcie_link *l;
	int gen;
	double Bps;

	if (gpu_index < 0 || gpu_index >= t->n_gpus)
		return 0;
	l = &t->gpus[gpu_index].link;
	gen = topo_pcie_gen(l->cur_gts);
	if (!gen || l->cur_width < 1)
		return 0;
	/* 8b/10b up to Gen2, 128b/130b from Gen3 (Gen6's FLIT mode is close to it) */
	Bps = l->cur_gts * 1e9 * l->cur_width * (gen >= 3 ? 128.0 / 130.0 : 0.8) / 8.0;
	snprintf(desc, len, "GPU PCIe Gen%d x%d %.1f GB/s", gen, l->cur_width, Bps / 1e9);
	return Bps;
}
