/*
 * GPU side of `gradsync run` (ranks only: nothing here may run in the driver before it
 * forks, see gpu/gpu.h): the rank's GPU, the path GPU buffers take to the wire (GPUDirect
 * RDMA or staged through pinned host memory) and the buffers of a case on that path.
 */
#ifndef GS_RUN_GPU_H
#define GS_RUN_GPU_H

#include <stdbool.h>
#include <jansson.h>

#include "gpu/gpu.h"
#include "topo/topo.h"

/* How a case's GPU buffers reach the wire; the report's "gpu_path". */
enum run_gpu_mode {
	RUN_GPU_HOST = 0,   /* no GPU: host memory */
	RUN_GPU_STAGED,     /* D2H / H2D through pinned host mirrors */
	RUN_GPU_GDR_WRITE,  /* the NIC writes received blocks into GPU memory, sends staged */
	RUN_GPU_GDR_RW,     /* the NIC reads and writes GPU memory */
	RUN_GPU_IPC,        /* cudaipc: peers copy GPU to GPU (same host) */
	RUN_GPU_NCCL,       /* transport = nccl: GPU buffers handed to libnccl */
};

struct run_gpu_path {
	enum run_gpu_mode mode;
	char mechanism[16];   /* "dmabuf", "peermem", "" */
	char gpu_nic_path[8]; /* topo path class name, "" when no NIC is involved */
	char gdr_level[8];
	bool flush;           /* GDR on a GPU before Hopper: receives are flushed by a loopback
			       * RDMA READ before a kernel reads them (transport_env.gdr_flush) */
	char reason[320];
};

/* What the GDR decision needs to know about the GPU besides the topology. */
struct run_gpu_facts {
	int gpu_index;        /* in topo->gpus, -1 unknown */
	bool dmabuf_supported;
	int cc_major, cc_minor;
};

/*
 * Decide the path of GPU buffers for transport kind tp_kind (enum tp_kind) and RDMA NIC
 * nic (ibdev name; "" or "auto" = the NIC closest to the GPU), per [gpu] gdr, gdr_level,
 * gdr_mode, gdr_read. 0 with *out filled; -EOPNOTSUPP when gdr = on and GPUDirect RDMA is
 * impossible: out->reason then names the GPU, the NIC, the path class, the level and the
 * missing mechanism. GPUs before Hopper (cc < 9.0) take GPUDirect RDMA with out->flush set:
 * the runner then has the verbs transport flush their receives. cudaipc: GPU memory directly. Pure: reads only t and its arguments.
 */
int run_gdr_decide(const struct topo *t, const struct run_gpu_facts *g, int tp_kind,
		   const char *nic, const struct gpu_opts *o, struct run_gpu_path *out);
const char *run_gpu_mode_name(enum run_gpu_mode m);
json_t *run_gpu_path_json(const struct run_gpu_path *p);
/* GDR_LOC .. GDR_SYS as NCCL_NET_GDR_LEVEL spells them. */
const char *run_gdr_level_name(int level);

/*
 * Bytes/s of the GPU's PCIe link in one direction (GT/s x lanes x line coding), the bound
 * of a staged path; 0 when topo does not know the link. *desc: "PCIe Gen5 x16 63.0 GB/s".
 */
double run_gpu_pcie_Bps(const struct topo *t, int gpu_index, char *desc, size_t len);

#endif
