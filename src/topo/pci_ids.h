/* The one table of GPU PCI ids: which PCI functions are GPUs and their marketing names. */
#ifndef GS_TOPO_PCI_IDS_H
#define GS_TOPO_PCI_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCI_VENDOR_NVIDIA 0x10de
#define PCI_VENDOR_AMD 0x1002

/* NVIDIA with class 0x0300 (VGA) or 0x0302 (3D controller); AMD with 0x0380 (Instinct). */
bool pci_is_gpu(int vendor, int class16);
/* Model name from the table, else "NVIDIA device 0x2bb5" / "AMD device 0x74a1". */
void pci_gpu_model(uint16_t vendor, uint16_t device, char *buf, size_t len);

/* Compute capability major of a known NVIDIA part (7 Volta/Turing ... 10 Blackwell), 0 unknown:
 * what the doctor judges GPUDirect by when no driver is loaded. */
int pci_gpu_cc_major(uint16_t vendor, uint16_t device);

#endif
