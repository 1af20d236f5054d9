/*
 * Every port of every RDMA device, queried through verbs for the doctor (verbs_probe.h).
 * Each call that may block on a dead HCA is noted first (util/callbound.h): the doctor runs
 * this as a bounded group and names the one that did not return.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "transport/verbs/verbs_priv.h"
#include "transport/verbs/verbs_probe.h"
#include "util/callbound.h"
#include "util/log.h"

int verbs_probe_ports(struct verbs_port_probe *out, int max)
{
	struct ibv_device **list;
	int n = 0, ndev = 0;

	callbound_note("ibv_get_device_list", "RDMA devices");
	list = ibv_get_device_list(&ndev);
	if (!list)
		return 0;
	for (int i = 0; i < ndev && n < max; i++) {
		const char *name = ibv_get_device_name(list[i]);
		struct ibv_device_attr da;
		struct ibv_context *ctx;

		callbound_note("ibv_open_device", name);
		ctx = ibv_open_device(list[i]);
		if (!ctx) {
			log_dbg(LOG_TRANSPORT, "ibv_open_device %s: %s", name, strerror(errno));
			continue;
		}
		callbound_note("ibv_query_device", name);
		if (!ibv_query_device(ctx, &da)) {
			for (int p = 1; p <= da.phys_port_cnt && n < max; p++) {
				struct ibv_port_attr pa;
				char obj[48];

				snprintf(obj, sizeof(obj), "%s port %d", name, p);
				callbound_note("ibv_query_port", obj);
				if (ibv_query_port(ctx, (uint8_t)p, &pa))
					continue;
				snprintf(out[n].dev, sizeof(out[n].dev), "%s", name);
				out[n].port = p;
				out[n].active_mtu = verbs_mtu_bytes(pa.active_mtu);
				out[n].max_mtu = verbs_mtu_bytes(pa.max_mtu);
				out[n].state = pa.state;
				out[n].link_layer = pa.link_layer;
				n++;
			}
		}
		callbound_note("ibv_close_device", name);
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	return n;
}
