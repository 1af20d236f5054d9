/* The doctor's check table, the runner, and the findings list every check adds to. */
#include "doctor/doctor.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/doctor_priv.h"
#include "topo/pcicfg.h"
#include "util/sysread.h"

/* In the order a user reads them: the NIC, the host, the PCIe fabric, the GPU paths. */
static const struct doc_check checks[] = {
    {"rdma_port", "RDMA devices and ports: state, link layer, rate against the NIC's PCIe link",
     doc_rdma_port},
    {"rdma_verbs",
     "verbs answers: each RDMA device opened and its ports queried within the bound (--timeout)",
     doc_rdma_verbs},
    {"rdma_mtu", "path MTU: RoCE from the netdev MTU, InfiniBand from verbs", doc_rdma_mtu},
    {"roce_gid", "RoCE GID table: a RoCEv2 IPv4 GID for gid_index = auto (as NCCL)",
     doc_roce_gid},
    {"roce_qos", "RoCE lossless hints: traffic class, ECN per priority, PFC", doc_roce_qos},
    {"memlock", "ulimit -l: host memory verbs may pin", doc_memlock},
    {"gpu_driver",
     "CUDA driver answers: the devices and their attributes within the bound (--timeout)",
     doc_gpu_driver},
    {"gdr_mechanism", "GPUDirect RDMA mechanism per GPU: dma-buf or nvidia_peermem",
     doc_gdr_mechanism},
    {"pcie_acs", "PCIe ACS redirects on switch ports between a GPU and its NIC", doc_pcie_acs},
    {"iommu", "IOMMU mode of GPUs and NICs (passthrough or translated)", doc_iommu},
    {"relaxed_ordering", "PCIe Relaxed Ordering enabled on the NICs", doc_relaxed_ordering},
    {"pcie_link", "PCIe link width and speed of GPUs and NICs against their capability",
     doc_pcie_link},
    {"gpu_nic_path", "GPU-NIC PCI distance and NUMA against gdr_level", doc_gpu_nic_path},
    {"cpu_governor", "CPU frequency governor", doc_cpu_governor},
    {"hugepages", "transparent and reserved huge pages", doc_hugepages},
    {"auto_path", "what transport = auto and gdr = auto pick for each GPU, and why",
     doc_auto_path},
};

const struct doc_check *doctor_checks(size_t *n)
{
	*n = ARRAY_SIZE(checks);
	return checks;
}

const char *doctor_level_name(enum doc_level lv)
{
	static const char *const names[DOC_LEVELS] = {"pass", "skip", "warn", "fail"};

	return lv >= 0 && lv < DOC_LEVELS ? names[lv] : "?";
}

int doctor_add(struct doc_report *r, const char *check, enum doc_level lv, const char *subject,
	       const char *fix, const char *fmt, ...)
{
	struct doc_finding *f;
	va_list ap;

	if (r->n == r->cap) {
		int cap = r->cap ? 2 * r->cap : 32;
		struct doc_finding *grown = realloc(r->f, (size_t)cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		r->f = grown;
		r->cap = cap;
	}
	f = &r->f[r->n++];
	memset(f, 0, sizeof(*f));
	f->check = check;
	f->level = lv;
	snprintf(f->subject, sizeof(f->subject), "%s", subject);
	snprintf(f->fix, sizeof(f->fix), "%s", fix && lv != DOC_PASS ? fix : "");
	va_start(ap, fmt);
	vsnprintf(f->what, sizeof(f->what), fmt, ap);
	va_end(ap);
	r->count[lv]++;
	return 0;
}

int doctor_run(const struct doc_input *in, struct doc_report *r)
{
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < ARRAY_SIZE(checks); i++) {
		int e = checks[i].run(in, r);

		if (e) {
			doctor_report_free(r);
			return e;
		}
	}
	return 0;
}

void doctor_report_free(struct doc_report *r)
{
	free(r->f);
	memset(r, 0, sizeof(*r));
}

enum doc_level doctor_verdict(const struct doc_report *r)
{
	if (r->count[DOC_FAIL])
		return DOC_FAIL;
	return r->count[DOC_WARN] ? DOC_WARN : DOC_PASS;
}

const struct doc_finding *doctor_find(const struct doc_report *r, const char *check,
				      const char *subject)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->f[i].check, check) && (!subject || !strcmp(r->f[i].subject, subject)))
			return &r->f[i];
	return NULL;
}

void doc_gpu_subject(const struct topo *t, int gpu, char *buf, size_t len)
{
	snprintf(buf, len, "GPU %s", t->gpus[gpu].pci);
}

ssize_t doc_pci_config(const char *root, const char *bdf, uint8_t *buf, size_t len)
{
	memset(buf, 0, len);
	return sys_read_bin(root, buf, len, "bus/pci/devices/%s/config", bdf);
}

int doc_nic_active_port(const struct topo_nic *n)
{
	for (int p = 0; p < n->n_ports; p++)
		if (atoi(n->ports[p].state) == 4) /* "4: ACTIVE" */
			return p;
	return -1;
}
