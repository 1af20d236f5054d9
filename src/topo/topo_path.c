/*
 * PCIe path classes between devices (NCCL's PIX/PXB/PHB/SYS plus nvidia-smi's NODE), the
 * lookups built on them and the NCCL_NET_GDR_LEVEL decision.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "topo/topo.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gpu/gpu.h"
#include "util/common.h"

#define MAX_DEPTH 32

/* A device as the path classifier sees it: sysfs path elements and NUMA node. */
struct dev_pos {
	char comps[MAX_DEPTH][TOPO_PCI_LEN]; /* [0] "pci0000:00" host bridge, then BDFs */
	int n;
	int numa;
	int gpu;  /* GPU index, -1 if not a GPU */
};

static const char *const path_names[] = {
	[TOPO_PATH_LOC] = "LOC", [TOPO_PATH_NVL] = "NVL",   [TOPO_PATH_PIX] = "PIX",
	[TOPO_PATH_PXB] = "PXB", [TOPO_PATH_PHB] = "PHB",   [TOPO_PATH_NODE] = "NODE",
	[TOPO_PATH_SYS] = "SYS", [TOPO_PATH_UNKNOWN] = "?",
};

const char *topo_path_name(enum topo_path cls)
{
	return (unsigned)cls < ARRAY_SIZE(path_names) ? path_names[cls] : "?";
}

int topo_pcie_gen(double gts)
{
	static const double gen_gts[] = { 2.5, 5, 8, 16, 32, 64 };

	for (size_t i = 0; i < ARRAY_SIZE(gen_gts); i++) {
		if (gts > gen_gts[i] - 0.1 && gts < gen_gts[i] + 0.1)
			return (int)i + 1;
	}
	return 0;
}

/* "3b:00.0" or "0000:3B:00.0" -> "0000:3b:00.0". */
static void norm_pci(const char *in, char *out)
{
	size_t n = strlen(in);

	if (n == 7)
		snprintf(out, TOPO_PCI_LEN, "0000:%s", in);
	else
		snprintf(out, TOPO_PCI_LEN, "%s", in);
	for (char *p = out; *p; p++)
		*p = (char)tolower((unsigned char)*p);
}

static int effective_numa(const struct topo *t, int numa)
{
	/* One node only: a device without affinity (-1) is on it all the same. */
	if (numa < 0 && t->n_numa == 1)
		return t->numa[0].id;
	return numa;
}

static int find_dev(const struct topo *t, const char *pci_in, struct dev_pos *d)
{
	char pci[TOPO_PCI_LEN];
	const char *path = NULL;

	norm_pci(pci_in, pci);
	d->gpu = -1;
	for (int i = 0; i < t->n_gpus && !path; i++) {
		if (!strcmp(t->gpus[i].pci, pci)) {
			path = t->gpus[i].path;
			d->numa = t->gpus[i].numa;
			d->gpu = i;
		}
	}
	for (int i = 0; i < t->n_nics && !path; i++) {
		if (!strcmp(t->nics[i].pci, pci)) {
			path = t->nics[i].path;
			d->numa = t->nics[i].numa;
		}
	}
	for (int i = 0; i < t->n_netdevs && !path; i++) {
		if (t->netdevs[i].pci[0] && !strcmp(t->netdevs[i].pci, pci)) {
			path = t->netdevs[i].path;
			d->numa = t->netdevs[i].numa;
		}
	}
	if (!path)
		return -ENOENT;
	d->numa = effective_numa(t, d->numa);
	/* "devices/pci0000:00/0000:00:01.0/..." : keep the elements from the host bridge on. */
	d->n = 0;
	for (const char *p = path; *p && d->n < MAX_DEPTH;) {
		size_t n = strcspn(p, "/");

		if (d->n || !strncmp(p, "pci", 3)) {
			if (n >= TOPO_PCI_LEN)
				return -EINVAL;
			memcpy(d->comps[d->n], p, n);
			d->comps[d->n][n] = '\0';
			d->n++;
		}
		p += n;
		if (*p)
			p++;
	}
	return d->n >= 2 ? 0 : -EINVAL;
}

/*
 * NCCL's parent walk (xml.cc ncclTopoGetXmlFromSys): from a device go up two path elements,
 * which skips a switch downstream port and lands on the switch (its upstream port); a
 * non-BDF element on the way ("pci0000:00") means the CPU. chain[0] is the device.
 */
static int switch_chain(const struct dev_pos *d, int chain[MAX_DEPTH])
{
	int n = 0, i = d->n - 1;

	chain[n++] = i;
	while (i - 2 >= 1) {  /* comps[0] is the host bridge, never a switch */
		i -= 2;
		chain[n++] = i;
	}
	return n;
}

/* NCCL's getBcmGen(): 4 or 5 for a Broadcom PEX switch at level 0 (parent) / 1 (sub), else 0. */
static int bcm_gen(const struct topo *t, const char *pci, int level)
{
	for (int i = 0; i < t->n_switches; i++) {
		const struct topo_switch *s = &t->switches[i];

		if (strcmp(s->pci, pci))
			continue;
		if (s->vendor != 0x1000 || s->subsys_vendor != 0x1000)
			return 0;
		if (s->device == 0xc010 && (s->subsys_device & 0xf000) == 0xa000)
			return 4;
		if (s->device == 0xc030 && (s->subsys_device & 0xf000) == level * 0x1000)
			return 5;
		return 0;
	}
	return 0;
}

/* Merge a Broadcom sub-switch into its parent of the same generation (NCCL flattening). */
static int flatten_chain(const struct topo *t, const struct dev_pos *d, int *chain, int n)
{
	for (int k = 1; k + 1 < n; k++) {
		int g = bcm_gen(t, d->comps[chain[k]], 1);

		if (g && bcm_gen(t, d->comps[chain[k + 1]], 0) == g) {
			memmove(chain + k, chain + k + 1, (size_t)(n - k - 1) * sizeof(*chain));
			n--;
		}
	}
	return n;
}

/* Same PCI device: NCCL merges the functions of one device (id & ~0xf). */
static bool same_device(const char *a, const char *b)
{
	return !strncmp(a, b, strlen("0000:00:00"));
}

enum topo_path topo_path_class(const struct topo *t, const char *pci_a, const char *pci_b)
{
	struct dev_pos a, b;
	int ca[MAX_DEPTH], cb[MAX_DEPTH], na, nb;

	if (find_dev(t, pci_a, &a) || find_dev(t, pci_b, &b))
		return TOPO_PATH_UNKNOWN;
	if (same_device(a.comps[a.n - 1], b.comps[b.n - 1]))
		return TOPO_PATH_LOC;
	if (a.gpu >= 0 && b.gpu >= 0 && t->nvlinks[a.gpu][b.gpu])
		return TOPO_PATH_NVL;
	na = flatten_chain(t, &a, ca, switch_chain(&a, ca));
	nb = flatten_chain(t, &b, cb, switch_chain(&b, cb));
	for (int i = 1; i < na; i++) {
		for (int j = 1; j < nb; j++) {
			if (strcmp(a.comps[ca[i]], b.comps[cb[j]]))
				continue;
			/* The common switch must be reached by the same path (same root). */
			if (strcmp(a.comps[0], b.comps[0]))
				continue;
			/* Device-switch links are PIX; a switch-switch link makes it PXB. */
			return (i == 1 && j == 1) ? TOPO_PATH_PIX : TOPO_PATH_PXB;
		}
	}
	if (a.numa != b.numa)
		return TOPO_PATH_SYS;
	return strcmp(a.comps[0], b.comps[0]) ? TOPO_PATH_NODE : TOPO_PATH_PHB;
}

int topo_set_nvlink(struct topo *t, int gpu_a, int gpu_b, int n)
{
	if (gpu_a < 0 || gpu_b < 0 || gpu_a >= t->n_gpus || gpu_b >= t->n_gpus || gpu_a == gpu_b ||
	    n < 0 || n > 255)
		return -EINVAL;
	t->nvlinks[gpu_a][gpu_b] = (uint8_t)n;
	t->nvlinks[gpu_b][gpu_a] = (uint8_t)n;
	return 0;
}

int topo_gpu_by_pci(const struct topo *t, const char *pci_in)
{
	char pci[TOPO_PCI_LEN];

	norm_pci(pci_in, pci);
	for (int i = 0; i < t->n_gpus; i++) {
		if (!strcmp(t->gpus[i].pci, pci))
			return i;
	}
	return -ENOENT;
}

int topo_nic_by_name(const struct topo *t, const char *ibdev)
{
	for (int i = 0; i < t->n_nics; i++) {
		if (!strcmp(t->nics[i].name, ibdev))
			return i;
	}
	return -ENOENT;
}

int topo_nic_closest_to_gpu(const struct topo *t, int gpu, enum topo_path *cls)
{
	enum topo_path best_cls = TOPO_PATH_UNKNOWN;
	int best = -ENOENT;

	if (gpu < 0 || gpu >= t->n_gpus)
		return -ENOENT;
	for (int i = 0; i < t->n_nics; i++) {
		enum topo_path c = topo_path_class(t, t->gpus[gpu].pci, t->nics[i].pci);

		if (c < best_cls) {
			best_cls = c;
			best = i;
		}
	}
	if (cls)
		*cls = best_cls;
	return best;
}

static int numa_or_err(const struct topo *t, int numa)
{
	numa = effective_numa(t, numa);
	return numa >= 0 ? numa : -ENODATA;
}

int topo_gpu_numa_node(const struct topo *t, int gpu)
{
	if (gpu < 0 || gpu >= t->n_gpus)
		return -ENOENT;
	return numa_or_err(t, t->gpus[gpu].numa);
}

int topo_nic_numa_node(const struct topo *t, const char *ibdev)
{
	int i = topo_nic_by_name(t, ibdev);

	return i < 0 ? i : numa_or_err(t, t->nics[i].numa);
}

int topo_numa_index(const struct topo *t, int node)
{
	for (int i = 0; i < t->n_numa; i++) {
		if (t->numa[i].id == node)
			return i;
	}
	return -ENOENT;
}

bool topo_gdr_allowed(enum topo_path cls, int gdr_level)
{
	static const enum topo_path level_max[] = {
		[GDR_LOC] = TOPO_PATH_LOC, [GDR_PIX] = TOPO_PATH_PIX, [GDR_PXB] = TOPO_PATH_PXB,
		[GDR_PHB] = TOPO_PATH_NODE, /* NCCL's PHB spans every host bridge of one CPU */
		[GDR_SYS] = TOPO_PATH_SYS,
	};

	if (gdr_level < 0 || (size_t)gdr_level >= ARRAY_SIZE(level_max) ||
	    cls >= TOPO_PATH_UNKNOWN)
		return false;
	return cls <= level_max[gdr_level];
}

double topo_gpu_pcie_Bps(const struct topo *t, int gpu_index, char *desc, size_t len)
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
