/*
 * What verbs says about every port of every RDMA device, for `gradsync doctor`: the facts
 * sysfs does not show (InfiniBand active and maximum MTU). verbs_stub.c answers 0 ports
 * in a build without libibverbs.
 */
#ifndef GS_TRANSPORT_VERBS_VERBS_PROBE_H
#define GS_TRANSPORT_VERBS_VERBS_PROBE_H

struct verbs_port_probe {
	char dev[32];
	int port;
	int active_mtu, max_mtu; /* bytes */
	int state;               /* enum ibv_port_state */
	int link_layer;          /* IBV_LINK_LAYER_* */
};

/* Fill up to max ports; the count (0 without devices), never an error: a device that does
 * not open is left out (and logged at debug level). Unbounded itself: a dead HCA blocks its
 * calls in the kernel; each is noted first (util/callbound.h), for a caller that runs this
 * as a bounded group. */
int verbs_probe_ports(struct verbs_port_probe *out, int max);

#endif
