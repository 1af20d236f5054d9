/* Rails: the RDMA NIC of a rank for device = auto (see rail.h). */
#include "topo/rail.h"

#include <errno.h>

int topo_rail_nic(const struct topo *t, int gpu, int numa, int local_rank)
{
	int near = 0, k;

	if (gpu >= 0)
		return topo_nic_closest_to_gpu(t, gpu, NULL);
	if (!t->n_nics)
		return -ENOENT;
	for (int i = 0; i < t->n_nics; i++)
		near += numa >= 0 && t->nics[i].numa == numa;
	k = local_rank < 0 ? 0 : local_rank;
	if (!near)
		return k % t->n_nics;
	k %= near;
	for (int i = 0; i < t->n_nics; i++)
		if (t->nics[i].numa == numa && k-- == 0)
			return i;
	return -ENOENT; /* not reached */
}
