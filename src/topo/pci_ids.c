/* The one table of GPU PCI ids (datacenter parts; anything else prints its raw id). */
#include "topo/pci_ids.h"

#include <stdio.h>

#include "util/common.h"

static const struct {
	uint16_t vendor, device;
	const char *model;
	int cc_major; /* CUDA compute capability major (0: not NVIDIA) */
} gpu_ids[] = {
	{ PCI_VENDOR_NVIDIA, 0x1db1, "V100-SXM2-16GB", 7 },
	{ PCI_VENDOR_NVIDIA, 0x1db4, "V100-PCIE-16GB", 7 },
	{ PCI_VENDOR_NVIDIA, 0x1db5, "V100-SXM2-32GB", 7 },
	{ PCI_VENDOR_NVIDIA, 0x1eb8, "T4", 7 },
	{ PCI_VENDOR_NVIDIA, 0x20b0, "A100-SXM4-40GB", 8 },
	{ PCI_VENDOR_NVIDIA, 0x20b2, "A100-SXM4-80GB", 8 },
	{ PCI_VENDOR_NVIDIA, 0x20b5, "A100-PCIE-80GB", 8 },
	{ PCI_VENDOR_NVIDIA, 0x20b7, "A30", 8 },
	{ PCI_VENDOR_NVIDIA, 0x20f1, "A100-PCIE-40GB", 8 },
	{ PCI_VENDOR_NVIDIA, 0x2235, "A40", 8 },
	{ PCI_VENDOR_NVIDIA, 0x2236, "A10", 8 },
	{ PCI_VENDOR_NVIDIA, 0x2321, "H100 NVL", 9 },
	{ PCI_VENDOR_NVIDIA, 0x2324, "H800", 9 },
	{ PCI_VENDOR_NVIDIA, 0x2330, "H100-SXM5-80GB", 9 },
	{ PCI_VENDOR_NVIDIA, 0x2331, "H100-PCIE-80GB", 9 },
	{ PCI_VENDOR_NVIDIA, 0x2335, "H200-SXM-141GB", 9 },
	{ PCI_VENDOR_NVIDIA, 0x2342, "GH200", 9 },
	{ PCI_VENDOR_NVIDIA, 0x26b5, "L40", 8 },
	{ PCI_VENDOR_NVIDIA, 0x26b9, "L40S", 8 },
	{ PCI_VENDOR_NVIDIA, 0x27b8, "L4", 8 },
	{ PCI_VENDOR_NVIDIA, 0x2901, "B200", 10 },
	{ PCI_VENDOR_AMD, 0x740c, "MI250X/MI250", 0 },
	{ PCI_VENDOR_AMD, 0x74a1, "MI300X", 0 },
};

bool pci_is_gpu(int vendor, int class16)
{
	if (vendor == PCI_VENDOR_NVIDIA)
		return class16 == 0x0300 || class16 == 0x0302;
	if (vendor == PCI_VENDOR_AMD)
		return class16 == 0x0380;
	return false;
}

void pci_gpu_model(uint16_t vendor, uint16_t device, char *buf, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(gpu_ids); i++) {
		if (gpu_ids[i].vendor == vendor && gpu_ids[i].device == device) {
			snprintf(buf, len, "%s", gpu_ids[i].model);
			return;
		}
	}
	snprintf(buf, len, "%s device 0x%04x", vendor == PCI_VENDOR_AMD ? "AMD" : "NVIDIA", device);
}

int pci_gpu_cc_major(uint16_t vendor, uint16_t device)
{
	for (size_t i = 0; i < ARRAY_SIZE(gpu_ids); i++)
		if (gpu_ids[i].vendor == vendor && gpu_ids[i].device == device)
			return gpu_ids[i].cc_major;
	return 0;
}
