/*
 * GPU checks: the GPUDirect RDMA mechanism per GPU, the GPU-NIC distance and NUMA against
 * gdr_level, and what transport = auto and gdr = auto would pick (the runtime's own GDR
 * decision, topo/gdr.c gdr_decide(), fed with what sysfs or CUDA says about the GPU).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "doctor/doctor_priv.h"
#include "topo/gdr.h"
#include "topo/pci_ids.h"
#include "transport/transport.h"
#include "util/sysread.h"

/* What the GDR decision needs about GPU g: from CUDA when a driver answered, else sysfs. */
static void gpu_facts(const struct doc_input *in, int g, struct gdr_gpu *f, bool *cuda)
{
	const struct topo *t = in->topo;
	char taint[16] = "";

	memset(f, 0, sizeof(*f));
	f->gpu_index = g;
	for (int i = 0; i < in->n_gpus; i++) {
		if (in->gpus[i].topo_index == g) {
			f->dmabuf_supported = in->gpus[i].dmabuf;
			f->cc_major = in->gpus[i].cc_major;
			f->cc_minor = in->gpus[i].cc_minor;
			*cuda = true;
			return;
		}
	}
	*cuda = false;
	f->cc_major = pci_gpu_cc_major(t->gpus[g].vendor, t->gpus[g].device);
	/* dma-buf export needs NVIDIA's open kernel modules (Turing and later): the
	 * proprietary module taints the kernel 'P', the open one does not */
	if (!sys_read_str(in->root, taint, sizeof(taint), "module/nvidia/taint"))
		f->dmabuf_supported = !strchr(taint, 'P') && f->cc_major >= 7;
}

static bool driver_loaded(const struct doc_input *in)
{
	return in->n_gpus > 0 || sys_exists(in->root, "module/nvidia");
}

int doc_gdr_mechanism(const struct doc_input *in, struct doc_report *r)
{
	static const char fix[] =
	    "load nvidia_peermem (`modprobe nvidia_peermem`, shipped with the driver), or use the "
	    "NVIDIA open kernel modules on a kernel >= 5.12 for dma-buf; then gdr = auto uses it";
	const struct topo *t = in->topo;
	int e = 0;

	for (int g = 0; g < t->n_gpus && !e; g++) {
		struct gdr_gpu f;
		char subj[64], mech[160] = "";
		bool cuda, dmabuf;

		doc_gpu_subject(t, g, subj, sizeof(subj));
		gpu_facts(in, g, &f, &cuda);
		dmabuf = f.dmabuf_supported && t->dmabuf_kernel;
		if (!t->n_nics) {
			/* still worth knowing before a NIC is added */
			e = doctor_add(r, "gdr_mechanism", DOC_SKIP, subj, NULL,
				       "no RDMA NIC: GPUDirect RDMA not applicable (dma-buf %s, %s)",
				       dmabuf ? "possible" : "not possible",
				       t->peermem[0] ? t->peermem : "no nvidia_peermem");
			continue;
		}
		if (dmabuf)
			snprintf(mech, sizeof(mech), "dma-buf (kernel %s, %s)", t->kernel,
				 cuda ? "CUDA says supported" : "open kernel module");
		if (t->peermem[0])
			snprintf(mech + strlen(mech), sizeof(mech) - strlen(mech), "%s%s loaded",
				 dmabuf ? " and " : "", t->peermem);
		if (mech[0])
			e = doctor_add(r, "gdr_mechanism", DOC_PASS, subj, NULL,
				       "GPUDirect RDMA by %s; gdr_mode = auto tries dma-buf first", mech);
		else if (!driver_loaded(in))
			e = doctor_add(r, "gdr_mechanism", DOC_FAIL, subj, fix,
				       "NVIDIA driver not loaded and no nvidia_peermem: GPU buffers "
				       "over ib/roce would be staged through host memory");
		else
			e = doctor_add(r, "gdr_mechanism", DOC_FAIL, subj, fix,
				       "no GPUDirect RDMA: %s and neither nvidia_peermem nor "
				       "nv_peer_mem is loaded; gdr = auto silently stages GPU buffers "
				       "through host memory (often half the bandwidth)",
				       !t->dmabuf_kernel ? "kernel < 5.12 has no dma-buf RDMA"
				       : cuda		 ? "CUDA says the GPU cannot export dma-bufs"
							 : "the proprietary kernel module cannot export "
							   "dma-bufs");
	}
	return e;
}

int doc_gpu_nic_path(const struct doc_input *in, struct doc_report *r)
{
	const struct topo *t = in->topo;
	int e = 0;

	for (int g = 0; g < t->n_gpus && !e; g++) {
		enum topo_path cls;
		int n = topo_nic_closest_to_gpu(t, g, &cls), gn, nn;
		char subj[64], numa[96] = "";
		bool far, cross;

		doc_gpu_subject(t, g, subj, sizeof(subj));
		if (n < 0) {
			e = doctor_add(r, "gpu_nic_path", DOC_SKIP, subj, NULL, "no RDMA NIC");
			continue;
		}
		cls = topo_path_class(t, t->gpus[g].pci, t->nics[n].pci);
		gn = t->gpus[g].numa;
		nn = t->nics[n].numa;
		cross = gn >= 0 && nn >= 0 && gn != nn;
		far = !topo_gdr_allowed(cls, in->gdr_level);
		if (gn >= 0 && nn >= 0)
			snprintf(numa, sizeof(numa), cross ? "GPU on NUMA node %d, NIC on node %d"
							   : "both on NUMA node %d",
				 gn, nn);
		else
			snprintf(numa, sizeof(numa), "NUMA affinity not reported");
		if (far)
			e = doctor_add(r, "gpu_nic_path", DOC_WARN, subj,
				       "put a NIC under the GPU's PCIe switch (or name a closer one in "
				       "[transport] device); raising gdr_level to SYS sends peer "
				       "traffic across the CPU",
				       "closest NIC %s is %s, beyond gdr_level %s: GPUDirect RDMA off, "
				       "buffers staged; %s",
				       t->nics[n].name, topo_path_name(cls),
				       gdr_level_name(in->gdr_level), numa);
		else if (cross)
			e = doctor_add(r, "gpu_nic_path", DOC_WARN, subj,
				       "[numa] bind = gpu keeps each rank's threads and host buffers by "
				       "its GPU",
				       "closest NIC %s is %s within gdr_level %s, but %s", t->nics[n].name,
				       topo_path_name(cls), gdr_level_name(in->gdr_level), numa);
		else
			e = doctor_add(r, "gpu_nic_path", DOC_PASS, subj, NULL,
				       "closest NIC %s is %s, within gdr_level %s; %s", t->nics[n].name,
				       topo_path_name(cls), gdr_level_name(in->gdr_level), numa);
	}
	return e;
}

/*
 * The transport auto picks toward a peer on another host, walking the registry's
 * preference order: cudaipc and shm only connect ranks of one host; ib / roce when a NIC
 * has an ACTIVE port of that link layer (from sysfs), the rail NIC first, then any, as the
 * verbs transport chooses; tcp always. rail: -1 = none preferred.
 */
static int cross_host_kind(const struct topo *t, int rail, int *used_nic)
{
	*used_nic = -1;
	for (size_t i = 0; i < transport_count(); i++) {
		int kind = transport_at(i)->kind;

		if (kind == TP_TCP)
			return TP_TCP;
		if (kind != TP_IB && kind != TP_ROCE)
			continue;
		for (int k = -1; k < t->n_nics; k++) {
			int n = k < 0 ? rail : k, p;

			if (n < 0 || (k >= 0 && n == rail))
				continue;
			p = doc_nic_active_port(&t->nics[n]);
			if (p >= 0 && !strcmp(t->nics[n].ports[p].link_layer, "Ethernet") ==
					  (kind == TP_ROCE)) {
				*used_nic = n;
				return kind;
			}
		}
	}
	return TP_TCP;
}

int doc_auto_path(const struct doc_input *in, struct doc_report *r)
{
	const struct gpu_opts o = {.gdr = GPU_AUTO, .gdr_level = in->gdr_level,
				   .gdr_read = GPU_AUTO, .gdr_mode = GDR_MODE_AUTO};
	const struct topo *t = in->topo;
	int e = 0, nic = -1, kind;

	if (!t->n_gpus) {
		kind = cross_host_kind(t, -1, &nic);
		return doctor_add(r, "auto_path", DOC_PASS, "host", NULL,
				  "host buffers: shm inside the host, %s between hosts%s%s",
				  transport_kind_name(kind), nic >= 0 ? " over " : " (no ACTIVE RDMA port)",
				  nic >= 0 ? t->nics[nic].name : "");
	}
	for (int g = 0; g < t->n_gpus && !e; g++) {
		struct gdr_gpu f;
		struct gdr_path p;
		enum topo_path cls;
		char subj[64];
		bool cuda, gdr;
		int rail = topo_nic_closest_to_gpu(t, g, &cls), ret;

		doc_gpu_subject(t, g, subj, sizeof(subj));
		gpu_facts(in, g, &f, &cuda);
		nic = -1;
		/* the rail: the NIC closest to the GPU, as the GDR decision judges it */
		kind = cross_host_kind(t, rail, &nic);
		ret = gdr_decide(t, &f, kind == TP_IB || kind == TP_ROCE ? GDR_WIRE_RDMA : GDR_WIRE_HOST,
				 nic >= 0 ? t->nics[nic].name : "", &o, &p);
		gdr = !ret && (p.mode == GDR_PATH_RW || p.mode == GDR_PATH_WRITE);
		e = doctor_add(r, "auto_path",
			       (kind == TP_IB || kind == TP_ROCE) && (!gdr || nic != rail) ? DOC_WARN
											   : DOC_PASS,
			       subj, "see rdma_port, gdr_mechanism and gpu_nic_path above",
			       "inside the host cudaipc; between hosts %s%s%s%s: %s (%s)%s",
			       transport_kind_name(kind), nic >= 0 ? " over " : " (no ACTIVE RDMA port)",
			       nic >= 0 ? t->nics[nic].name : "",
			       nic >= 0 && nic != rail ? ", not its rail (the closest NIC has no ACTIVE port of that link layer)" : "",
			       gdr_path_mode_name(p.mode), p.reason,
			       cuda ? "" : "; GPU facts from sysfs, no driver asked");
	}
	return e;
}
