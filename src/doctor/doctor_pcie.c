/* PCIe checks: ACS redirects between a GPU and its NIC, Relaxed Ordering, degraded links. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/doctor_priv.h"
#include "topo/pcicfg.h"
#include "util/sysread.h"

#define PATH_ELEMS 16

/*
 * The PCI functions along a topo device path ("devices/pci0000:15/0000:15:01.0/...") as
 * directory paths relative to the root, from the root port down to the device itself.
 */
static int path_dirs(const char *path, char out[][TOPO_PATH_LEN], int max)
{
	int n = 0;

	for (const char *p = path; *p && n < max;) {
		size_t len = strcspn(p, "/");

		if (topo_is_bdf(p, len))
			snprintf(out[n++], TOPO_PATH_LEN, "%.*s", (int)(p + len - path), path);
		p += len;
		if (*p)
			p++;
	}
	return n;
}

/* The BDF of a function's directory path (its last element). */
static const char *dir_bdf(const char *dir)
{
	const char *s = strrchr(dir, '/');

	return s ? s + 1 : dir;
}

struct acs_scan {
	int ports, unread, bad;
	char list[200];   /* "0000:19:00.0 (ReqRedir CmpltRedir)" of the bad ones */
	char unread1[TOPO_PCI_LEN];
};

static void acs_port(const char *root, const char *dir, struct acs_scan *s)
{
	const char *bdf = dir_bdf(dir);
	uint8_t cfg[PCICFG_EXT_LEN];
	ssize_t n;

	memset(cfg, 0, sizeof(cfg));
	n = sys_read_bin(root, cfg, sizeof(cfg), "%s/config", dir);
	int ctrl = n > 0 ? pcicfg_acs_ctrl(cfg, (size_t)n) : -ENODATA;
	char bits[96];
	size_t off = strlen(s->list);

	s->ports++;
	if (ctrl == -ENODATA) {
		s->unread++;
		snprintf(s->unread1, sizeof(s->unread1), "%s", bdf);
	} else if (ctrl > 0 && (ctrl & PCICFG_ACS_P2P_BREAKING)) {
		s->bad++;
		snprintf(s->list + off, sizeof(s->list) - off, "%s%s (%s)", off ? ", " : "", bdf,
			 pcicfg_acs_str(ctrl & PCICFG_ACS_P2P_BREAKING, bits, sizeof(bits)));
	}
}

int doc_pcie_acs(const struct doc_input *in, struct doc_report *r)
{
	const struct topo *t = in->topo;
	int e = 0;

	for (int g = 0; g < t->n_gpus && !e; g++) {
		char gp[PATH_ELEMS][TOPO_PATH_LEN], np[PATH_ELEMS][TOPO_PATH_LEN]; /* 10 KiB */
		char subj[64];
		struct acs_scan s = {0};
		enum topo_path cls;
		int n = topo_nic_closest_to_gpu(t, g, &cls), ng, nn, c = 0;

		doc_gpu_subject(t, g, subj, sizeof(subj));
		if (n < 0) {
			e = doctor_add(r, "pcie_acs", DOC_SKIP, subj, NULL,
				       "no RDMA NIC: no GPU-NIC peer-to-peer path to check");
			continue;
		}
		cls = topo_path_class(t, t->gpus[g].pci, t->nics[n].pci);
		if (cls != TOPO_PATH_PIX && cls != TOPO_PATH_PXB) {
			e = doctor_add(r, "pcie_acs", DOC_SKIP, subj, NULL,
				       "path to %s is %s: no PCIe switch between them", t->nics[n].name,
				       topo_path_name(cls));
			continue;
		}
		ng = path_dirs(t->gpus[g].path, gp, PATH_ELEMS);
		nn = path_dirs(t->nics[n].path, np, PATH_ELEMS);
		while (c < ng && c < nn && !strcmp(gp[c], np[c]))
			c++;
		/* the ports below the switch both hang off, on either side (endpoints excluded):
		 * ACS redirect there sends the peer's request up to the root complex */
		for (int i = c; i < ng - 1; i++)
			acs_port(in->root, gp[i], &s);
		for (int i = c; i < nn - 1; i++)
			acs_port(in->root, np[i], &s);
		if (s.bad)
			e = doctor_add(r, "pcie_acs", DOC_FAIL, subj,
				       "disable ACS on these switch ports (BIOS 'ACS' off, or `setpci -s "
				       "BDF ECAP_ACS+6.w=0000` at boot); NCCL's troubleshooting says the "
				       "same",
				       "ACS redirects peer traffic to %s (%s) on %s: GPUDirect RDMA goes "
				       "through the root complex (slow) or fails with local protection "
				       "errors",
				       t->nics[n].name, topo_path_name(cls), s.list);
		else if (s.unread)
			e = doctor_add(r, "pcie_acs", DOC_SKIP, subj,
				       "run gradsync doctor as root to read PCIe extended config space",
				       "config space of %d of %d switch ports toward %s unreadable "
				       "(e.g. %s)",
				       s.unread, s.ports, t->nics[n].name, s.unread1);
		else
			e = doctor_add(r, "pcie_acs", DOC_PASS, subj, NULL,
				       "no ACS redirect on the %d switch ports toward %s (%s)", s.ports,
				       t->nics[n].name, topo_path_name(cls));
	}
	return e;
}

int doc_relaxed_ordering(const struct doc_input *in, struct doc_report *r)
{
	const struct topo *t = in->topo;
	int e = 0;

	for (int i = 0; i < t->n_nics && !e; i++) {
		uint8_t cfg[PCICFG_STD_LEN];
		ssize_t n = doc_pci_config(in->root, t->nics[i].pci, cfg, sizeof(cfg));
		int ro = n > 0 ? pcicfg_relaxed_ordering(cfg, (size_t)n) : -ENODATA;

		if (ro == 1)
			e = doctor_add(r, "relaxed_ordering", DOC_PASS, t->nics[i].name, NULL,
				       "enabled in %s's Device Control; our MRs ask for "
				       "IBV_ACCESS_RELAXED_ORDERING, as NCCL does by default",
				       t->nics[i].pci);
		else if (ro == 0)
			e = doctor_add(r, "relaxed_ordering", DOC_WARN, t->nics[i].name,
				       "enable PCIe Relaxed Ordering in the BIOS and on the NIC "
				       "(ConnectX: `mlxconfig -d DEV set PCI_WR_ORDERING=1`)",
				       "disabled in %s's Device Control: the NIC's writes into GPU "
				       "memory are strictly ordered (lower GPUDirect bandwidth through "
				       "a CPU or switch)",
				       t->nics[i].pci);
		else
			e = doctor_add(r, "relaxed_ordering", DOC_SKIP, t->nics[i].name,
				       "run gradsync doctor as root to read PCIe config space",
				       "config space of %s unreadable", t->nics[i].pci);
	}
	return e;
}

static int link_check(struct doc_report *r, const char *subj, const struct topo_pcie_link *l,
		      bool gpu)
{
	int gen = topo_pcie_gen(l->cur_gts), mgen = topo_pcie_gen(l->max_gts);

	if (!l->max_width || l->max_gts <= 0)
		return doctor_add(r, "pcie_link", DOC_SKIP, subj, NULL, "link capability not reported");
	if (l->cur_width < l->max_width)
		return doctor_add(r, "pcie_link", DOC_FAIL, subj,
				  "reseat the card or move it to a full-width slot; check the riser "
				  "and BIOS bifurcation",
				  "link trained x%d of x%d (Gen%d): %.0f%% of its bandwidth",
				  l->cur_width, l->max_width, gen,
				  100.0 * l->cur_width * l->cur_gts / (l->max_width * l->max_gts));
	if (l->cur_gts < l->max_gts)
		return doctor_add(r, "pcie_link", gpu ? DOC_WARN : DOC_FAIL, subj,
				  gpu ? "GPUs lower their link speed when idle: recheck under load "
					"(`nvidia-smi -q -d PCIE`); if it stays low, reseat it"
				      : "reseat the card; check the slot's generation in the BIOS",
				  "link at Gen%d (%.1f GT/s) of Gen%d x%d", gen, l->cur_gts, mgen,
				  l->cur_width);
	return doctor_add(r, "pcie_link", DOC_PASS, subj, NULL, "Gen%d x%d, at its capability",
			  gen, l->cur_width);
}

int doc_pcie_link(const struct doc_input *in, struct doc_report *r)
{
	const struct topo *t = in->topo;
	char subj[64];
	int e = 0;

	for (int g = 0; g < t->n_gpus && !e; g++) {
		doc_gpu_subject(t, g, subj, sizeof(subj));
		e = link_check(r, subj, &t->gpus[g].link, true);
	}
	for (int i = 0; i < t->n_nics && !e; i++)
		e = link_check(r, t->nics[i].name, &t->nics[i].link, false);
	if (!e && !t->n_gpus && !t->n_nics)
		e = doctor_add(r, "pcie_link", DOC_SKIP, "host", NULL, "no GPU or RDMA NIC");
	return e;
}
