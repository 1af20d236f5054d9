/*
 * Rails: which RDMA NIC a rank uses when [transport] device = auto. As NCCL, a GPU's
 * traffic leaves through the NIC closest to it (the same NIC the GPUDirect decision is
 * judged on); ranks with host buffers spread over the NICs of their NUMA node.
 */
#ifndef GS_TOPO_RAIL_H
#define GS_TOPO_RAIL_H

#include "topo/topo.h"

/*
 * NIC index for a rank: gpu >= 0 -> topo_nic_closest_to_gpu(); else the NICs on NUMA node
 * numa (all NICs when numa < 0 or none is there), the (local_rank % count)-th of them.
 * -ENOENT when the node has no RDMA NIC. Pure: reads only t.
 */
int topo_rail_nic(const struct topo *t, int gpu, int numa, int local_rank);

#endif
