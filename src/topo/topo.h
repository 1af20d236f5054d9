/*
 * Machine topology from sysfs alone (no CUDA driver, no libibverbs): GPUs, RDMA NICs, plain
 * NICs and NUMA nodes, plus the NCCL-style PCIe path class between any two PCI devices.
 */
#ifndef GS_TOPO_TOPO_H
#define GS_TOPO_TOPO_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define TOPO_MAX_GPUS 32
#define TOPO_MAX_NICS 32
#define TOPO_MAX_NETDEVS 64
#define TOPO_MAX_NUMA 64
#define TOPO_MAX_SWITCHES 256
#define TOPO_MAX_PORTS 4
#define TOPO_MAX_NIC_NETDEVS 4
#define TOPO_PCI_LEN 16    /* "0000:00:00.0" */
#define TOPO_PATH_LEN 320  /* device path relative to the sysfs root */
#define TOPO_CPULIST_LEN 256

/*
 * Path classes, best first. Semantics follow NCCL (graph/xml.cc + paths.cc) with nvidia-smi's
 * split of NCCL's PHB into PHB/NODE:
 *   LOC  same PCI device (functions of one device are one node, as in NCCL)
 *   NVL  NVLink between two GPUs (only when a caller recorded it with topo_set_nvlink())
 *   PIX  both hang off the same PCIe switch (at most one switch crossed)
 *   PXB  several PCIe switches crossed, without going through a host bridge
 *   PHB  through a PCIe host bridge / CPU root complex, both in the same pciDDDD:BB domain
 *   NODE through the CPU between different host bridges of one NUMA node (NCCL: PHB)
 *   SYS  across the inter-socket link (different NUMA nodes)
 * The PCIe switch of a device is found as NCCL does: two levels up its sysfs path (skipping the
 * downstream port); a path element that is not a BDF ("pci0000:00") is the CPU. Like NCCL
 * (topo.cc ncclTopoFlattenBcmSwitches), a Broadcom PEX gen4/gen5 switch that shows itself as
 * two levels (parent and sub-switches with the same ids) counts as one switch, so devices
 * under its different sub-switches are PIX, not PXB.
 */
enum topo_path {
	TOPO_PATH_LOC = 0,
	TOPO_PATH_NVL,
	TOPO_PATH_PIX,
	TOPO_PATH_PXB,
	TOPO_PATH_PHB,
	TOPO_PATH_NODE,
	TOPO_PATH_SYS,
	TOPO_PATH_UNKNOWN,  /* a device not found in sysfs */
};

struct topo_pcie_link {
	double cur_gts, max_gts;  /* GT/s per lane, 0 if unknown */
	int cur_width, max_width; /* lanes, 0 if unknown */
};

struct topo_gpu {
	char pci[TOPO_PCI_LEN];
	char path[TOPO_PATH_LEN]; /* "devices/pci0000:00/.../0000:05:00.0" */
	uint16_t vendor, device;
	char model[48];           /* from the device-id table, else "NVIDIA device 0x2335" */
	int numa;                 /* -1: no affinity reported */
	struct topo_pcie_link link;
};

struct topo_ib_port {
	int num;
	char state[24];      /* "4: ACTIVE" */
	char phys_state[24]; /* "5: LinkUp" */
	char link_layer[16]; /* "InfiniBand" or "Ethernet" */
	char rate[40];       /* "400 Gb/sec (4X NDR)" */
};

struct topo_nic {
	char name[32]; /* ibdev, e.g. mlx5_0 */
	char pci[TOPO_PCI_LEN];
	char path[TOPO_PATH_LEN];
	int numa;
	char fw_ver[32], node_type[32], board_id[32];
	int n_ports;
	struct topo_ib_port ports[TOPO_MAX_PORTS];
	int n_netdevs;
	char netdevs[TOPO_MAX_NIC_NETDEVS][16];
	struct topo_pcie_link link;
};

struct topo_netdev {
	char name[16];
	char pci[TOPO_PCI_LEN];   /* "" for virtual interfaces */
	char path[TOPO_PATH_LEN]; /* PCI device path, "" when virtual */
	int numa;
	int speed_mbps;           /* -1 unknown (virtio, link down) */
	int mtu;
	char operstate[16];
	char rdma[32];            /* owning RDMA device, "" if none */
};

/*
 * A PCIe switch on the way from a device to its CPU (NCCL's PCI node: the upstream port two
 * path elements above a device). Its ids decide NCCL's flattening of Broadcom PEX switches.
 */
struct topo_switch {
	char pci[TOPO_PCI_LEN];
	uint16_t vendor, device, subsys_vendor, subsys_device;
};

struct topo_numa {
	int id;
	char cpulist[TOPO_CPULIST_LEN];
	int ncpus;
	long mem_kb;  /* MemTotal, -1 unknown */
	int distance[TOPO_MAX_NUMA]; /* by index into topo.numa, 0 unknown */
};

/* The whole machine, about 130 KiB: allocate it (calloc), keep it off thread stacks. */
struct topo {
	char root[256];
	char kernel[64];   /* kernel release, "" unknown */
	bool dmabuf_kernel;/* release >= 5.12: dma-buf GPUDirect possible if the NIC driver has it */
	char peermem[32];  /* "nvidia_peermem", "nv_peer_mem" or "" when neither module is loaded */
	int n_gpus, n_nics, n_netdevs, n_numa, n_switches;
	struct topo_gpu gpus[TOPO_MAX_GPUS];   /* sorted by PCI address (CUDA_DEVICE_ORDER=PCI_BUS_ID) */
	struct topo_nic nics[TOPO_MAX_NICS];   /* sorted by name (mlx5_2 before mlx5_10) */
	struct topo_netdev netdevs[TOPO_MAX_NETDEVS];
	struct topo_numa numa[TOPO_MAX_NUMA];
	struct topo_switch switches[TOPO_MAX_SWITCHES]; /* above the devices listed */
	uint8_t nvlinks[TOPO_MAX_GPUS][TOPO_MAX_GPUS]; /* NVLink count; sysfs does not show it */
};

/*
 * Fill *out from the sysfs tree at sysfs_root ("/sys" on a live machine; a fixture dir in tests).
 * Missing classes (no GPU, no infiniband) are not errors. The kernel release comes from
 * /proc/sys/kernel/osrelease for the live /sys and from <root>/osrelease for a fixture.
 * 0, -ENOENT when the root has no bus/pci, or -errno. The walk is bounded as a whole by
 * timeout_ns (util/fsbound.h): a tree that does not answer (an attribute whose driver
 * hangs, a fixture on a dead mount) fails it, -ETIMEDOUT, or a stop signal, -EINTR, in one
 * line naming the call and the file. Logs its error line itself.
 */
int topo_discover_within(const char *sysfs_root, struct topo *out, uint64_t timeout_ns);
/* topo_discover_within FSB_TIMEOUT_DEFAULT. */
int topo_discover(const char *sysfs_root, struct topo *out);

/* Record n NVLinks between GPUs a and b (by index) for a caller that knows (NVML, CUDA). */
int topo_set_nvlink(struct topo *t, int gpu_a, int gpu_b, int n);

/* Class of the path between two PCI devices known to *t (GPUs, RDMA NICs, plain NICs). */
enum topo_path topo_path_class(const struct topo *t, const char *pci_a, const char *pci_b);
/* GPU index by PCI address (case-insensitive, "0000:" domain optional), or -ENOENT. */
int topo_gpu_by_pci(const struct topo *t, const char *pci);
/* RDMA NIC index by ibdev name, or -ENOENT. */
int topo_nic_by_name(const struct topo *t, const char *ibdev);
/* Closest RDMA NIC to GPU gpu (best class, then lowest index), -ENOENT if none or bad gpu. */
int topo_nic_closest_to_gpu(const struct topo *t, int gpu, enum topo_path *cls);
/* NUMA node of a GPU / RDMA NIC: >= 0, -ENOENT unknown device, -ENODATA no affinity (-1). */
int topo_gpu_numa_node(const struct topo *t, int gpu);
int topo_nic_numa_node(const struct topo *t, const char *ibdev);
/* Index into t->numa of NUMA node id, or -ENOENT. */
int topo_numa_index(const struct topo *t, int node);

/*
 * NCCL_NET_GDR_LEVEL semantics: GPUDirect RDMA is used when the GPU-NIC class is <= the level
 * (enum gdr_level of gpu/gpu.h: LOC, PIX, PXB, PHB, SYS). NCCL has no NODE class (its PHB
 * covers every path through one CPU), so level PHB admits PHB and NODE, as NCCL would.
 */
bool topo_gdr_allowed(enum topo_path cls, int gdr_level);

const char *topo_path_name(enum topo_path cls);
/* Does s[0..n) look like a PCI address "DDDD:BB:DD.F"? */
bool topo_is_bdf(const char *s, size_t n);
/* PCIe generation from GT/s (2.5 -> 1 ... 64 -> 6), 0 unknown. */
int topo_pcie_gen(double gts);
/*
 * Bytes/s of the GPU's PCIe link in one direction (GT/s x lanes x line coding), the bound
 * of a staged path; 0 when topo does not know the link. *desc: "PCIe Gen5 x16 63.0 GB/s".
 */
double topo_gpu_pcie_Bps(const struct topo *t, int gpu_index, char *desc, size_t len);

#endif
