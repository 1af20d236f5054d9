/* Reports of a discovered topology: text in the nvidia-smi topo -m layout, and JSON. */
#ifndef GS_TOPO_TOPO_PRINT_H
#define GS_TOPO_TOPO_PRINT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "topo/topo.h"

/* Matrix cell for devices i, j of the combined GPU+NIC list: "X", "NV18", "PIX", ... */
void topo_cell(const struct topo *t, int i, int j, char *buf, size_t len);

/* GPUDirect RDMA verdict for one GPU x NIC pair at NCCL_NET_GDR_LEVEL gdr_level. */
struct topo_gdr {
	enum topo_path cls;
	bool level_ok;   /* class within gdr_level */
	bool dmabuf;     /* kernel can do it; the NIC driver is probed at run time */
	bool peermem;    /* nvidia_peermem / nv_peer_mem loaded (NVIDIA GPUs only) */
	bool possible;   /* level_ok and at least one mechanism */
	char mechanism[160];
};
void topo_gdr_pair(const struct topo *t, int gpu, int nic, int gdr_level, struct topo_gdr *out);

/* Full text report to f. */
void topo_print_text(FILE *f, const struct topo *t, int gdr_level);
/* Full JSON report; NULL on allocation failure. The caller json_decref()s it. */
json_t *topo_to_json(const struct topo *t, int gdr_level);

#endif
