/* Topology reports: text (nvidia-smi topo -m style matrices, GDR per pair) and JSON. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "topo/topo_print.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "topo/gdr.h"
#include "topo/pci_ids.h"
#include "util/common.h"
#include "util/jtext.h"
#include "util/strutil.h"

/* Devices of the combined matrix: GPUs first, then RDMA NICs. */
static const char *dev_pci(const struct topo *t, int i)
{
	return i < t->n_gpus ? t->gpus[i].pci : t->nics[i - t->n_gpus].pci;
}

static int dev_numa(const struct topo *t, int i)
{
	int n = i < t->n_gpus ? t->gpus[i].numa : t->nics[i - t->n_gpus].numa;

	return (n < 0 && t->n_numa == 1) ? t->numa[0].id : n;
}

void topo_cell(const struct topo *t, int i, int j, char *buf, size_t len)
{
	enum topo_path c;

	if (i == j) {
		snprintf(buf, len, "X");
		return;
	}
	c = topo_path_class(t, dev_pci(t, i), dev_pci(t, j));
	if (c == TOPO_PATH_NVL)
		snprintf(buf, len, "NV%d", t->nvlinks[i][j]);
	else
		snprintf(buf, len, "%s", topo_path_name(c));
}

void topo_gdr_pair(const struct topo *t, int gpu, int nic, int gdr_level, struct topo_gdr *out)
{
	size_t off = 0;

	memset(out, 0, sizeof(*out));
	out->cls = topo_path_class(t, t->gpus[gpu].pci, t->nics[nic].pci);
	out->level_ok = topo_gdr_allowed(out->cls, gdr_level);
	out->dmabuf = t->dmabuf_kernel;
	out->peermem = t->peermem[0] && t->gpus[gpu].vendor == PCI_VENDOR_NVIDIA;
	out->possible = out->level_ok && (out->dmabuf || out->peermem);
	if (out->dmabuf)
		str_appendf(out->mechanism, sizeof(out->mechanism), &off,
			    "dmabuf (needs driver support, probed at run time)");
	if (out->peermem)
		str_appendf(out->mechanism, sizeof(out->mechanism), &off, "%s%s loaded",
			    off ? ", " : "", t->peermem);
	if (!out->dmabuf && !out->peermem)
		snprintf(out->mechanism, sizeof(out->mechanism),
			 "none: kernel %s below 5.12 and no nvidia_peermem/nv_peer_mem module",
			 t->kernel[0] ? t->kernel : "(unknown)");
}

static const char *numa_cpus(const struct topo *t, int node)
{
	int i = node < 0 ? -1 : topo_numa_index(t, node);

	return i < 0 ? "N/A" : t->numa[i].cpulist;
}

static void print_link(FILE *f, const struct topo_pcie_link *l)
{
	if (!l->cur_width && !l->max_width) {
		fprintf(f, "link unknown");
		return;
	}
	fprintf(f, "PCIe Gen%d x%d (max Gen%d x%d)", topo_pcie_gen(l->cur_gts), l->cur_width,
		topo_pcie_gen(l->max_gts), l->max_width);
}

static void print_devices(FILE *f, const struct topo *t)
{
	fprintf(f, "NUMA nodes (%d):\n", t->n_numa);
	for (int i = 0; i < t->n_numa; i++) {
		const struct topo_numa *n = &t->numa[i];

		fprintf(f, "  node%-3d cpus %s (%d)", n->id, n->cpulist, n->ncpus);
		if (n->mem_kb >= 0)
			fprintf(f, "  memory %.1f GiB", (double)n->mem_kb / (1024.0 * 1024.0));
		fprintf(f, "\n");
	}
	fprintf(f, "\nGPUs (%d):", t->n_gpus);
	if (!t->n_gpus)
		fprintf(f, " none (no PCI device of vendor 0x10de class 0x0300/0x0302, nor AMD "
			   "0x1002 class 0x0380, under %s/bus/pci/devices)", t->root);
	fprintf(f, "\n");
	for (int i = 0; i < t->n_gpus; i++) {
		const struct topo_gpu *g = &t->gpus[i];

		fprintf(f, "  GPU%-3d %s  %-20s numa %-3d ", i, g->pci, g->model, g->numa);
		print_link(f, &g->link);
		fprintf(f, "\n");
	}
	fprintf(f, "\nRDMA NICs (%d):", t->n_nics);
	if (!t->n_nics)
		fprintf(f, " none (%s/class/infiniband is empty or missing)", t->root);
	fprintf(f, "\n");
	for (int i = 0; i < t->n_nics; i++) {
		const struct topo_nic *n = &t->nics[i];

		fprintf(f, "  NIC%-3d %-10s %s numa %-3d fw %s board %s (%s) ", i, n->name, n->pci,
			n->numa, n->fw_ver[0] ? n->fw_ver : "?", n->board_id[0] ? n->board_id : "?",
			n->node_type[0] ? n->node_type : "?");
		print_link(f, &n->link);
		fprintf(f, "\n");
		for (int p = 0; p < n->n_ports; p++)
			fprintf(f, "         port %d: %s, %s, %s, %s\n", n->ports[p].num,
				n->ports[p].state, n->ports[p].phys_state, n->ports[p].link_layer,
				n->ports[p].rate);
		for (int d = 0; d < n->n_netdevs; d++)
			fprintf(f, "         netdev %s\n", n->netdevs[d]);
	}
	fprintf(f, "\nNetwork interfaces (%d):\n", t->n_netdevs);
	for (int i = 0; i < t->n_netdevs; i++) {
		const struct topo_netdev *n = &t->netdevs[i];

		fprintf(f, "  %-16s %-12s numa %-3d ", n->name, n->pci[0] ? n->pci : "virtual",
			n->numa);
		if (n->speed_mbps > 0)
			fprintf(f, "speed %d Mb/s", n->speed_mbps);
		else
			fprintf(f, "speed unknown");
		fprintf(f, "  mtu %d  %s%s%s\n", n->mtu, n->operstate, n->rdma[0] ? "  rdma " : "",
			n->rdma);
	}
}

static void print_matrix(FILE *f, const struct topo *t)
{
	int nd = t->n_gpus + t->n_nics;
	char cell[16];

	fprintf(f, "\nTopology matrix (NCCL path classes; nvidia-smi topo -m layout):\n%-8s", "");
	for (int j = 0; j < nd; j++) {
		snprintf(cell, sizeof(cell), "%s%d", j < t->n_gpus ? "GPU" : "NIC",
			 j < t->n_gpus ? j : j - t->n_gpus);
		fprintf(f, "%-7s", cell);
	}
	fprintf(f, "%-20s%s\n", "CPU Affinity", "NUMA Affinity");
	for (int i = 0; i < nd; i++) {
		int numa = dev_numa(t, i);

		snprintf(cell, sizeof(cell), "%s%d", i < t->n_gpus ? "GPU" : "NIC",
			 i < t->n_gpus ? i : i - t->n_gpus);
		fprintf(f, "%-8s", cell);
		for (int j = 0; j < nd; j++) {
			topo_cell(t, i, j, cell, sizeof(cell));
			fprintf(f, "%-7s", cell);
		}
		if (numa >= 0)
			fprintf(f, "%-20s%d\n", numa_cpus(t, numa), numa);
		else
			fprintf(f, "%-20s%s\n", "N/A", "N/A");
	}
	fprintf(f, "\nLegend:\n"
		   "  X    = Self\n"
		   "  SYS  = traverses PCIe and the SMP interconnect between NUMA nodes\n"
		   "  NODE = traverses PCIe and the interconnect between host bridges of one NUMA "
		   "node (NCCL: PHB)\n"
		   "  PHB  = traverses PCIe and a PCIe host bridge (typically the CPU)\n"
		   "  PXB  = traverses multiple PCIe switches (without a host bridge)\n"
		   "  PIX  = traverses at most a single PCIe switch\n"
		   "  LOC  = functions of one PCI device\n"
		   "  NV#  = NVLink (only when reported by the GPU layer: sysfs does not show it)\n");
	if (t->n_nics) {
		fprintf(f, "\nNIC Legend:\n");
		for (int i = 0; i < t->n_nics; i++)
			fprintf(f, "  NIC%d: %s\n", i, t->nics[i].name);
	}
}

void topo_print_text(FILE *f, const struct topo *t, int gdr_level)
{
	fprintf(f, "sysfs root %s, kernel %s, GPUDirect kernel module: %s\n\n", t->root,
		t->kernel[0] ? t->kernel : "unknown", t->peermem[0] ? t->peermem : "none loaded");
	print_devices(f, t);
	if (t->n_gpus + t->n_nics)
		print_matrix(f, t);
	else
		fprintf(f, "\nTopology matrix: no GPU and no RDMA NIC on this machine.\n");
	if (!t->n_gpus || !t->n_nics) {
		fprintf(f, "\nGPUDirect RDMA: not applicable (%s).\n",
			!t->n_gpus && !t->n_nics ? "no GPU and no RDMA NIC"
			: !t->n_gpus		 ? "no GPU"
						 : "no RDMA NIC");
		return;
	}
	struct topo_gdr d;

	topo_gdr_pair(t, 0, 0, gdr_level, &d);
	fprintf(f, "\nGPUDirect RDMA (used when the path class is within NCCL_NET_GDR_LEVEL=%s)\n"
		   "  mechanisms here: %s\n%-8s", gdr_level_name(gdr_level), d.mechanism, "");
	for (int n = 0; n < t->n_nics; n++)
		fprintf(f, "NIC%-4d", n);
	fprintf(f, "closest NIC\n");
	for (int g = 0; g < t->n_gpus; g++) {
		enum topo_path best;
		int c = topo_nic_closest_to_gpu(t, g, &best);

		fprintf(f, "GPU%-5d", g);
		for (int n = 0; n < t->n_nics; n++) {
			topo_gdr_pair(t, g, n, gdr_level, &d);
			fprintf(f, "%-7s", d.possible ? "yes" : "no");
		}
		fprintf(f, "%s (%s)\n", t->nics[c].name, topo_path_name(best));
	}
}

static json_t *link_json(const struct topo_pcie_link *l)
{
	return json_pack("{s:f,s:i,s:f,s:i,s:i,s:i}", "cur_gts", l->cur_gts, "cur_width",
			 l->cur_width, "max_gts", l->max_gts, "max_width", l->max_width, "cur_gen",
			 topo_pcie_gen(l->cur_gts), "max_gen", topo_pcie_gen(l->max_gts));
}

/* Matrix rows [r0, r1) x columns [c0, c1) of the combined device list. */
static json_t *matrix_json(const struct topo *t, int r0, int r1, int c0, int c1)
{
	json_t *m = json_array();
	char cell[16];

	for (int i = r0; m && i < r1; i++) {
		json_t *row = json_array();

		for (int j = c0; row && j < c1; j++) {
			topo_cell(t, i, j, cell, sizeof(cell));
			json_array_append_new(row, json_text(cell));
		}
		json_array_append_new(m, row);
	}
	return m;
}

static json_t *devices_json(const struct topo *t)
{
	json_t *o = json_object(), *a;

	a = json_array();
	for (int i = 0; i < t->n_numa; i++)
		json_array_append_new(a, json_pack("{s:i,s:s,s:i,s:I}", "id", t->numa[i].id,
						   "cpulist", t->numa[i].cpulist, "ncpus",
						   t->numa[i].ncpus, "mem_total_kb",
						   (json_int_t)t->numa[i].mem_kb));
	json_object_set_new(o, "numa", a);
	a = json_array();
	for (int i = 0; i < t->n_gpus; i++) {
		const struct topo_gpu *g = &t->gpus[i];

		json_array_append_new(a, json_pack("{s:i,s:s,s:i,s:i,s:s,s:i,s:o}", "index", i,
						   "pci", g->pci, "vendor", g->vendor, "device",
						   g->device, "model", g->model, "numa", g->numa,
						   "link", link_json(&g->link)));
	}
	json_object_set_new(o, "gpus", a);
	a = json_array();
	for (int i = 0; i < t->n_nics; i++) {
		const struct topo_nic *n = &t->nics[i];
		json_t *ports = json_array(), *nd = json_array();

		for (int p = 0; p < n->n_ports; p++)
			json_array_append_new(ports, json_pack("{s:i,s:s,s:s,s:s,s:s}", "port",
							       n->ports[p].num, "state",
							       n->ports[p].state, "phys_state",
							       n->ports[p].phys_state, "link_layer",
							       n->ports[p].link_layer, "rate",
							       n->ports[p].rate));
		for (int d = 0; d < n->n_netdevs; d++)
			json_array_append_new(nd, json_text(n->netdevs[d]));
		json_array_append_new(a, json_pack("{s:i,s:s,s:s,s:i,s:s,s:s,s:s,s:o,s:o,s:o}",
						   "index", i, "name", n->name, "pci", n->pci,
						   "numa", n->numa, "fw_ver", n->fw_ver,
						   "node_type", n->node_type, "board_id",
						   n->board_id, "ports", ports, "netdevs", nd,
						   "link", link_json(&n->link)));
	}
	json_object_set_new(o, "rdma_nics", a);
	a = json_array();
	for (int i = 0; i < t->n_netdevs; i++) {
		const struct topo_netdev *n = &t->netdevs[i];

		json_array_append_new(a, json_pack("{s:s,s:s?,s:i,s:i,s:i,s:s,s:s?}", "name",
						   n->name, "pci", n->pci[0] ? n->pci : NULL,
						   "numa", n->numa, "speed_mbps", n->speed_mbps,
						   "mtu", n->mtu, "operstate", n->operstate, "rdma",
						   n->rdma[0] ? n->rdma : NULL));
	}
	json_object_set_new(o, "netdevs", a);
	return o;
}

json_t *topo_to_json(const struct topo *t, int gdr_level)
{
	int ng = t->n_gpus, nd = t->n_gpus + t->n_nics;
	json_t *o = devices_json(t), *gdr = json_array();

	if (!o || !gdr) {
		json_decref(o);
		json_decref(gdr);
		return NULL;
	}
	json_object_set_new(o, "sysfs_root", json_text(t->root));
	json_object_set_new(o, "kernel", json_text(t->kernel));
	json_object_set_new(o, "dmabuf_kernel", json_boolean(t->dmabuf_kernel));
	json_object_set_new(o, "peermem_module", t->peermem[0] ? json_string(t->peermem)
							      : json_null());
	json_object_set_new(o, "gdr_level", json_string(gdr_level_name(gdr_level)));
	json_object_set_new(o, "gpu_gpu", matrix_json(t, 0, ng, 0, ng));
	json_object_set_new(o, "gpu_nic", matrix_json(t, 0, ng, ng, nd));
	json_object_set_new(o, "nic_nic", matrix_json(t, ng, nd, ng, nd));
	for (int g = 0; g < t->n_gpus; g++) {
		for (int n = 0; n < t->n_nics; n++) {
			struct topo_gdr d;

			topo_gdr_pair(t, g, n, gdr_level, &d);
			json_array_append_new(gdr, json_pack("{s:i,s:s,s:s,s:b,s:b,s:b,s:b,s:s}",
							     "gpu", g, "nic", t->nics[n].name,
							     "path", topo_path_name(d.cls),
							     "level_ok", d.level_ok, "dmabuf",
							     d.dmabuf, "peermem", d.peermem,
							     "possible", d.possible, "mechanism",
							     d.mechanism));
		}
	}
	json_object_set_new(o, "gdr", gdr);
	return o;
}
