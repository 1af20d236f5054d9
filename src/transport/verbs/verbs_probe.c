/* Every port of every RDMA device, queried through verbs for the doctor (verbs_probe.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "transport/verbs/verbs_priv.h"
#include "transport/verbs/verbs_probe.h"
#include "util/log.h"

int verbs_probe_ports(struct verbs_port_probe *out, int max)
{
	struct ibv_device **list;
	int n = 0, ndev = 0;

	list = ibv_get_device_list(&ndev);
	if (!list)
		return 0;
	for (int i = 0; i < ndev && n < max; i++) {
		struct ibv_context *ctx = ibv_open_device(list[i]);
		struct ibv_device_attr da;

		if (!ctx) {
			log_dbg(LOG_TRANSPORT, "ibv_open_device %s: %s",
				ibv_get_device_name(list[i]), strerror(errno));
			continue;
		}
		if (!ibv_query_device(ctx, &da)) {
			for (int p = 1; p <= da.phys_port_cnt && n < max; p++) {
				struct ibv_port_attr pa;

				if (ibv_query_port(ctx, (uint8_t)p, &pa))
					continue;
				snprintf(out[n].dev, sizeof(out[n].dev), "%s",
					 ibv_get_device_name(list[i]));
				out[n].port = p;
				out[n].active_mtu = verbs_mtu_bytes(pa.active_mtu);
				out[n].max_mtu = verbs_mtu_bytes(pa.max_mtu);
				out[n].state = pa.state;
				out[n].link_layer = pa.link_layer;
				n++;
			}
		}
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	return n;
}
