/*
 * The path of a case's GPU buffers to the wire, decided from the topology alone (as NCCL's
 * graph/paths.cc does): GPUDirect RDMA when the wire is RDMA, the GPU-NIC PCIe path class
 * is within [gpu] gdr_level (NCCL_NET_GDR_LEVEL) and a registration mechanism exists
 * (dma-buf or nvidia-peermem), else staged through pinned host memory. Pure: no device is
 * opened, so it runs (and is tested) on captured sysfs trees.
 */
#ifndef GS_TOPO_GDR_H
#define GS_TOPO_GDR_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu/gpu.h"
#include "topo/topo.h"

/* How a case's GPU buffers reach the wire; the report's "gpu_path". */
enum gdr_path_mode {
	GDR_PATH_HOST = 0,   /* no GPU: host memory */
	GDR_PATH_STAGED,     /* D2H / H2D through pinned host mirrors */
	GDR_PATH_WRITE,      /* the NIC writes received blocks into GPU memory, sends staged */
	GDR_PATH_RW,         /* the NIC reads and writes GPU memory */
	GDR_PATH_IPC,        /* cudaipc: peers copy GPU to GPU (same host) */
	GDR_PATH_NCCL,       /* transport = nccl: GPU buffers handed to libnccl */
};

/* What carries the bytes, as far as the GPU path is concerned. */
enum gdr_wire {
	GDR_WIRE_HOST = 0,   /* tcp, shm: the CPU moves host memory */
	GDR_WIRE_RDMA,       /* ib, roce: a NIC that may reach GPU memory */
	GDR_WIRE_IPC,        /* cudaipc: GPU to GPU */
};

struct gdr_path {
	enum gdr_path_mode mode;
	char mechanism[16];   /* "dmabuf", "peermem", "" */
	char gpu_nic_path[8]; /* topo path class name, "" when no NIC is involved */
	char gdr_level[8];
	bool flush;           /* GDR on a GPU before Hopper: receives are flushed by a loopback
			       * RDMA READ before a kernel reads them (transport_env.gdr_flush) */
	bool fallback;        /* gdr = auto wanted GPUDirect RDMA and could not: staged (the
			       * runner warns); reason says why */
	char reason[320];
};

/* What the decision needs to know about the GPU besides the topology. */
struct gdr_gpu {
	int gpu_index;        /* in topo->gpus, -1 unknown */
	bool dmabuf_supported;
	int cc_major, cc_minor;
};

/*
 * Decide the path of GPU buffers over wire, to RDMA NIC nic (ibdev name; "" or "auto" =
 * the NIC closest to the GPU), per [gpu] gdr, gdr_level, gdr_mode, gdr_read. 0 with *out
 * filled; -EOPNOTSUPP when gdr = on and GPUDirect RDMA is impossible: out->reason then
 * names the GPU, the NIC, the path class, the level and the missing mechanism. GPUs before
 * Hopper (cc < 9.0) take GPUDirect RDMA with out->flush set: the runner then has the verbs
 * transport flush their receives. cudaipc: GPU memory directly. Reads only t and its
 * arguments.
 */
int gdr_decide(const struct topo *t, const struct gdr_gpu *g, enum gdr_wire wire,
	       const char *nic, const struct gpu_opts *o, struct gdr_path *out);
const char *gdr_path_mode_name(enum gdr_path_mode m);
/* One row of a GDR vocabulary (levels, modes): its name and what it means. */
struct gdr_name_row {
	const char *name;
	const char *help;
};
/* Row i (== enum gdr_level), NULL past the last: the vocabulary in order. */
const struct gdr_name_row *gdr_level_at(size_t i);
/* The same for enum gdr_mode ([gpu] gdr_mode: auto, dmabuf, peermem). */
const struct gdr_name_row *gdr_mode_at(size_t i);
/* GDR_LOC .. GDR_SYS as NCCL_NET_GDR_LEVEL spells them ("?" out of range). */
const char *gdr_level_name(int level);
/* "PXB" -> GDR_PXB etc., any case (also NCCL's old 0..4): 0 or -EINVAL. */
int gdr_level_parse(const char *s, int *level);
/* Staged buffers: the data always; scratch too unless the NIC writes GPU memory. */
bool gdr_path_staged(const struct gdr_path *p, bool scratch);

#endif
