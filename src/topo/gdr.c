/* The path GPU buffers take to the wire, from the topology alone, and the GDR level and
 * mode vocabularies it is configured with (contract in gdr.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "topo/gdr.h"
#include "util/common.h"

/*
 * enum gdr_level as NCCL_NET_GDR_LEVEL spells it, with what each admits: the one list of
 * the vocabulary ([gpu] gdr_level, --gdr-level, and topo's and doctor's output read it).
 */
static const struct gdr_name_row gdr_levels[] = {
	[GDR_LOC] = { "LOC", "GPU and NIC are the same device" },
	[GDR_PIX] = { "PIX", "at most one PCIe switch between GPU and NIC" },
	[GDR_PXB] = { "PXB", "several PCIe bridges, not through the host bridge" },
	[GDR_PHB] = { "PHB", "through the host bridge (CPU root complex) of one socket" },
	[GDR_SYS] = { "SYS", "across sockets (SMP interconnect)" },
};

/* enum gdr_mode, [gpu] gdr_mode's one list; a mechanism in use is named as its mode. */
static const struct gdr_name_row gdr_modes[] = {
	[GDR_MODE_AUTO] = { "auto", "dma-buf if supported, else nvidia_peermem" },
	[GDR_MODE_DMABUF] = { "dmabuf", "cuMemGetHandleForAddressRange + ibv_reg_dmabuf_mr" },
	[GDR_MODE_PEERMEM] = { "peermem", "ibv_reg_mr on device memory (nvidia_peermem loaded)" },
};

const struct gdr_name_row *gdr_mode_at(size_t i)
{
	return i < ARRAY_SIZE(gdr_modes) ? &gdr_modes[i] : NULL;
}

const struct gdr_name_row *gdr_level_at(size_t i)
{
	return i < ARRAY_SIZE(gdr_levels) ? &gdr_levels[i] : NULL;
}

const char *gdr_level_name(int level)
{
	return level >= 0 && level < (int)ARRAY_SIZE(gdr_levels) ? gdr_levels[level].name : "?";
}

int gdr_level_parse(const char *s, int *level)
{
	for (size_t i = 0; i < ARRAY_SIZE(gdr_levels); i++) {
		if (!strcasecmp(s, gdr_levels[i].name) ||
		    (s[0] == (char)('0' + i) && s[1] == '\0')) {
			*level = (int)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *gdr_path_mode_name(enum gdr_path_mode m)
{
	switch (m) {
	case GDR_PATH_STAGED:
		return "staged";
	case GDR_PATH_WRITE:
		return "gdr write, staged sends";
	case GDR_PATH_RW:
		return "gdr read+write";
	case GDR_PATH_IPC:
		return "gpu memory (cudaipc)";
	case GDR_PATH_NCCL:
		return "gpu memory (nccl)";
	default:
		return "host memory";
	}
}

/* The mechanism gdr_mode asks for and the node has, or NULL with *missing set. */
static const char *mechanism(const struct topo *t, const struct gdr_gpu *g, int mode,
			     char *missing, size_t len)
{
	bool dmabuf = g->dmabuf_supported && t->dmabuf_kernel;
	bool peermem = t->peermem[0] != '\0';
	const char *why = !g->dmabuf_supported ? "the GPU/driver cannot export dma-bufs"
					       : "the kernel has no dma-buf RDMA (< 5.12)";

	if (mode != GDR_MODE_PEERMEM && dmabuf)
		return gdr_modes[GDR_MODE_DMABUF].name;
	if (mode != GDR_MODE_DMABUF && peermem)
		return gdr_modes[GDR_MODE_PEERMEM].name;
	if (mode == GDR_MODE_DMABUF)
		snprintf(missing, len, "gdr_mode = dmabuf but %s", why);
	else if (mode == GDR_MODE_PEERMEM)
		snprintf(missing, len, "gdr_mode = peermem but neither nvidia_peermem nor nv_peer_mem is loaded");
	else
		snprintf(missing, len, "no mechanism: %s and no nvidia_peermem module is loaded", why);
	return NULL;
}

int gdr_decide(const struct topo *t, const struct gdr_gpu *g, enum gdr_wire wire,
	       const char *nic, const struct gpu_opts *o, struct gdr_path *out)
{
	enum topo_path cls = TOPO_PATH_UNKNOWN;
	const char *gpu_pci = g->gpu_index >= 0 && g->gpu_index < t->n_gpus
				      ? t->gpus[g->gpu_index].pci : "?";
	const char *mech;
	char missing[200] = "";
	int n = -ENOENT;

	memset(out, 0, sizeof(*out));
	snprintf(out->gdr_level, sizeof(out->gdr_level), "%s", gdr_level_name(o->gdr_level));
	out->mode = GDR_PATH_STAGED;
	if (wire == GDR_WIRE_IPC) {
		out->mode = GDR_PATH_IPC;
		snprintf(out->reason, sizeof(out->reason), "cudaipc moves GPU buffers GPU to GPU");
		return 0;
	}
	if (wire != GDR_WIRE_RDMA) {
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
		out->fallback = true;
		return 0;
	}
	snprintf(out->mechanism, sizeof(out->mechanism), "%s", mech);
	/* sends read GPU memory unless told not to (auto: on, as NCCL from Ampere) */
	if (o->gdr_read == GPU_OFF)
		out->mode = GDR_PATH_WRITE;
	else
		out->mode = GDR_PATH_RW;
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

bool gdr_path_staged(const struct gdr_path *p, bool scratch)
{
	return p->mode == GDR_PATH_STAGED || (p->mode == GDR_PATH_WRITE && !scratch);
}
