/* Inside the doctor: the checks (one file per concept) and the helpers they share. */
#ifndef GS_DOCTOR_DOCTOR_PRIV_H
#define GS_DOCTOR_DOCTOR_PRIV_H

#include <stddef.h>
#include <sys/types.h>

#include "doctor/doctor.h"

/* doctor_rdma.c */
int doc_rdma_port(const struct doc_input *in, struct doc_report *r);
int doc_rdma_mtu(const struct doc_input *in, struct doc_report *r);
int doc_roce_gid(const struct doc_input *in, struct doc_report *r);
int doc_roce_qos(const struct doc_input *in, struct doc_report *r);
/* doctor_host.c */
int doc_memlock(const struct doc_input *in, struct doc_report *r);
int doc_iommu(const struct doc_input *in, struct doc_report *r);
int doc_cpu_governor(const struct doc_input *in, struct doc_report *r);
int doc_hugepages(const struct doc_input *in, struct doc_report *r);
/* doctor_pcie.c */
int doc_pcie_acs(const struct doc_input *in, struct doc_report *r);
int doc_relaxed_ordering(const struct doc_input *in, struct doc_report *r);
int doc_pcie_link(const struct doc_input *in, struct doc_report *r);
/* doctor_gpu.c */
int doc_gdr_mechanism(const struct doc_input *in, struct doc_report *r);
int doc_gpu_nic_path(const struct doc_input *in, struct doc_report *r);
int doc_auto_path(const struct doc_input *in, struct doc_report *r);

/* doctor_probe.c: the libraries of the live node that ask allows (enum doc_ask), asked at
 * once, all within one n->timeout_ns; 0, or -EINTR (a stop signal: logged) or -ENOMEM. A
 * probe given up on is said (CUDA's line first) and kept in n->in. */
int doc_probe(struct doctor_node *n, unsigned ask);
int doc_gpu_driver(const struct doc_input *in, struct doc_report *r);
int doc_rdma_verbs(const struct doc_input *in, struct doc_report *r);

/* "GPU 0000:1b:00.0" */
void doc_gpu_subject(const struct topo *t, int gpu, char *buf, size_t len);
/* The config space of PCI function bdf (bytes read, or -errno). */
ssize_t doc_pci_config(const char *root, const char *bdf, uint8_t *buf, size_t len);
/* First ACTIVE port of NIC n, or -1. */
int doc_nic_active_port(const struct topo_nic *n);

#endif
