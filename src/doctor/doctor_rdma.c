/* RDMA checks: ports (state, link layer, rate), path MTU, RoCE GID table, RoCE QoS hints. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/doctor_priv.h"
#include "transport/rdma_policy.h"
#include "util/strutil.h"
#include "util/sysread.h"

static bool is_ethernet(const struct topo_ib_port *p)
{
	return !strcmp(p->link_layer, "Ethernet");
}

/* Bits/s of a PCIe link in one direction, 0 unknown (128b/130b from Gen3, 8b/10b before). */
static double pcie_gbps(const struct topo_pcie_link *l)
{
	if (l->cur_gts <= 0 || l->cur_width < 1)
		return 0;
	return l->cur_gts * l->cur_width * (l->cur_gts >= 8 ? 128.0 / 130.0 : 0.8);
}

int doc_rdma_port(const struct doc_input *in, struct doc_report *r)
{
	const struct topo *t = in->topo;
	int e = 0;

	if (!t->n_nics)
		return doctor_add(r, "rdma_port", DOC_WARN, "host",
				  "load the NIC's RDMA driver (mlx5_ib, irdma, bnxt_re, efa) and "
				  "ib_uverbs; `ibv_devices` must list it",
				  "no RDMA device in class/infiniband: ib and roce are unavailable, "
				  "auto uses tcp between hosts");
	for (int i = 0; i < t->n_nics && !e; i++) {
		const struct topo_nic *n = &t->nics[i];
		double pcie = pcie_gbps(&n->link);

		for (int p = 0; p < n->n_ports && !e; p++) {
			const struct topo_ib_port *pt = &n->ports[p];
			double rate = strtod(pt->rate, NULL);
			char subj[64];

			snprintf(subj, sizeof(subj), "%s:%d", n->name, pt->num);
			if (atoi(pt->state) != 4) {
				bool init = atoi(pt->state) == 2 && !is_ethernet(pt);

				e = doctor_add(
				    r, "rdma_port", DOC_FAIL, subj,
				    init ? "start a subnet manager on the fabric (opensm, or the "
					   "switch's SM): it moves ports from INIT to ACTIVE"
					 : "check the cable and the switch port (`ibstat`, "
					   "`mlxlink -d DEVICE`), or exclude this NIC with "
					   "[transport] device",
				    "port %s (physical %s, %s): ranks on it cannot connect", pt->state,
				    pt->phys_state, pt->link_layer);
			} else if (pcie > 0 && rate > pcie * 1.02) {
				e = doctor_add(r, "rdma_port", DOC_WARN, subj,
					       "seat the NIC in a slot whose link matches its port rate "
					       "(see pcie_link)",
					       "ACTIVE, %s, %s, but its PCIe link (%.0f GT/s x%d) carries "
					       "only %.0f Gb/s",
					       pt->link_layer, pt->rate, n->link.cur_gts,
					       n->link.cur_width, pcie);
			} else {
				e = doctor_add(r, "rdma_port", DOC_PASS, subj, NULL,
					       "ACTIVE, %s, %s, firmware %s", pt->link_layer, pt->rate,
					       n->fw_ver[0] ? n->fw_ver : "?");
			}
		}
		if (!n->n_ports && !e)
			e = doctor_add(r, "rdma_port", DOC_FAIL, n->name,
				       "check the driver's kernel log (dmesg | grep mlx5)",
				       "RDMA device without ports in sysfs");
	}
	return e;
}

static int netdev_mtu(const struct topo *t, const char *name)
{
	for (int i = 0; i < t->n_netdevs; i++)
		if (!strcmp(t->netdevs[i].name, name))
			return t->netdevs[i].mtu;
	return 0;
}

static const struct doc_port_fact *port_fact(const struct doc_input *in, const char *dev,
					     int port)
{
	for (int i = 0; i < in->n_ports; i++)
		if (!strcmp(in->ports[i].dev, dev) && in->ports[i].port == port)
			return &in->ports[i];
	return NULL;
}

/* A check of one ACTIVE port; subj is "mlx5_0:1". 0 or -ENOMEM. */
typedef int (*port_check)(const struct doc_input *in, struct doc_report *r,
			  const struct topo_nic *n, const struct topo_ib_port *pt, const char *subj);

/* Run fn on every ACTIVE port (only Ethernet ones with eth_only), until an error. */
static int each_active_port(const struct doc_input *in, struct doc_report *r, bool eth_only,
			    port_check fn)
{
	const struct topo *t = in->topo;
	int e = 0;

	for (int i = 0; i < t->n_nics && !e; i++) {
		for (int p = 0; p < t->nics[i].n_ports && !e; p++) {
			const struct topo_ib_port *pt = &t->nics[i].ports[p];
			char subj[64];

			if (atoi(pt->state) != 4 || (eth_only && !is_ethernet(pt)))
				continue;
			snprintf(subj, sizeof(subj), "%s:%d", t->nics[i].name, pt->num);
			e = fn(in, r, &t->nics[i], pt, subj);
		}
	}
	return e;
}

static int port_mtu(const struct doc_input *in, struct doc_report *r, const struct topo_nic *n,
		    const struct topo_ib_port *pt, const char *subj)
{
	const struct doc_port_fact *vf = port_fact(in, n->name, pt->num);

	if (is_ethernet(pt)) {
		const char *nd = n->n_netdevs ? n->netdevs[0] : "";
		int nm = nd[0] ? netdev_mtu(in->topo, nd) : 0;
		int mtu = vf ? vf->active_mtu : rdma_iboe_mtu(nm);

		if (!nm && !vf)
			return doctor_add(r, "rdma_mtu", DOC_SKIP, subj, NULL,
					  "no netdev found for the RoCE port");
		if (mtu >= 4096)
			return doctor_add(r, "rdma_mtu", DOC_PASS, subj, NULL,
					  "RoCE path MTU %d (netdev %s MTU %d)", mtu, nd, nm);
		return doctor_add(r, "rdma_mtu", DOC_WARN, subj,
				  "raise the netdev MTU to 9000 (`ip link set dev IF mtu 9000`, and "
				  "on the switch ports): RoCE packets then carry 4096 bytes",
				  "RoCE path MTU %d: netdev %s has MTU %d (4096 needs >= 4184)", mtu,
				  nd, nm);
	}
	if (!vf)
		return doctor_add(r, "rdma_mtu", DOC_SKIP, subj, NULL,
				  "InfiniBand MTU is not in sysfs; verbs shows it on the node itself "
				  "(`ibv_devinfo`: active_mtu)");
	if (vf->active_mtu >= 4096)
		return doctor_add(r, "rdma_mtu", DOC_PASS, subj, NULL,
				  "InfiniBand active MTU %d (port max %d)", vf->active_mtu,
				  vf->max_mtu);
	return doctor_add(r, "rdma_mtu", DOC_WARN, subj,
			  "set the subnet's MTU to 4096 (opensm partitions.conf: 'Default=0x7fff, "
			  "ipoib, mtu=5 : ALL=full;')",
			  "InfiniBand active MTU %d of max %d: our path MTU, like NCCL's, follows "
			  "the active MTU",
			  vf->active_mtu, vf->max_mtu);
}

int doc_rdma_mtu(const struct doc_input *in, struct doc_report *r)
{
	return each_active_port(in, r, false, port_mtu);
}

/* "fe80:0000:0000:0000:0a00:27ff:fe8e:1c6d" -> 16 bytes; false if malformed. */
static bool parse_gid(const char *s, uint8_t *raw)
{
	unsigned g[8];

	if (sscanf(s, "%4x:%4x:%4x:%4x:%4x:%4x:%4x:%4x", &g[0], &g[1], &g[2], &g[3], &g[4], &g[5],
		   &g[6], &g[7]) != 8)
		return false;
	for (int i = 0; i < 8; i++) {
		raw[2 * i] = (uint8_t)(g[i] >> 8);
		raw[2 * i + 1] = (uint8_t)g[i];
	}
	return true;
}

static bool is_index(const char *name)
{
	return name[0] >= '0' && name[0] <= '9';
}

/* The port's GID table from sysfs (gids/N and gid_attrs/types/N); count or -errno. */
static int read_gids(const char *root, const char *dev, int port, struct rdma_gid **out)
{
	char (*idx)[64] = NULL, txt[64], type[32];
	struct rdma_gid *g;
	int n = sys_list(root, is_index, &idx, "class/infiniband/%s/ports/%d/gids", dev, port), k = 0;

	*out = NULL;
	if (n <= 0) {
		free(idx);
		return n;
	}
	g = calloc((size_t)n, sizeof(*g));
	if (!g) {
		free(idx);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		if (sys_read_str(root, txt, sizeof(txt), "class/infiniband/%s/ports/%d/gids/%s", dev,
				 port, idx[i]) ||
		    !parse_gid(txt, g[k].raw))
			continue;
		/* an unused entry's type file fails to read (EINVAL): it is empty anyway */
		if (sys_read_str(root, type, sizeof(type),
				 "class/infiniband/%s/ports/%d/gid_attrs/types/%s", dev, port,
				 idx[i]))
			continue;
		g[k].index = atoi(idx[i]);
		g[k].type = strstr(type, "v2") ? RDMA_GID_ROCE_V2 : RDMA_GID_ROCE_V1;
		k++;
	}
	free(idx);
	*out = g;
	return k;
}

static int port_gid(const struct doc_input *in, struct doc_report *r, const struct topo_nic *n,
		    const struct topo_ib_port *pt, const char *subj)
{
	static const char *const kind[] = {"empty", "RoCE v1", "RoCE v2 link-local",
					   "RoCE v2 IPv6", "RoCE v2 IPv4"};
	const char *nd = n->n_netdevs ? n->netdevs[0] : "its netdev";
	char fix[160], addr[64] = "";
	struct rdma_gid *g;
	int ng, best, sc, e;

	snprintf(fix, sizeof(fix),
		 "configure an IPv4 address on %s (RoCE v2 GIDs follow its addresses), or set "
		 "[transport] gid_index",
		 nd);
	ng = read_gids(in->root, n->name, pt->num, &g);
	if (ng == -ENOMEM)
		return ng;
	if (ng < 0 && ng != -ENOENT)
		return doctor_add(r, "roce_gid", DOC_SKIP, subj, NULL, "GID table unreadable: %s",
				  strerror(-ng));
	best = ng > 0 ? rdma_gid_pick(g, ng) : -1;
	sc = best >= 0 ? rdma_gid_score(&g[best]) : 0;
	if (best >= 0)
		rdma_gid_str(g[best].raw, addr, sizeof(addr));
	if (sc == 4)
		e = doctor_add(r, "roce_gid", DOC_PASS, subj, NULL,
			       "gid_index = auto picks %d (%s %s) of %d GIDs, as NCCL_IB_GID_INDEX=-1 "
			       "would",
			       g[best].index, kind[sc], addr, ng);
	else if (sc > 0)
		e = doctor_add(r, "roce_gid", DOC_WARN, subj, fix,
			       "no RoCE v2 IPv4 GID: auto picks %d (%s %s)%s", g[best].index,
			       kind[sc], addr,
			       sc <= 2 ? ", which does not route beyond one L2 segment" : "");
	else
		e = doctor_add(r, "roce_gid", DOC_FAIL, subj, fix,
			       "no usable GID (%d entries): roce cannot connect", ng > 0 ? ng : 0);
	free(g);
	return e;
}

int doc_roce_gid(const struct doc_input *in, struct doc_report *r)
{
	return each_active_port(in, r, true, port_gid);
}

static int port_qos(const struct doc_input *in, struct doc_report *r, const struct topo_nic *n,
		    const struct topo_ib_port *pt, const char *subj)
{
	const char *nd = n->n_netdevs ? n->netdevs[0] : NULL;
	char tc[32] = "", prios[32] = "", fix[320];
	int np = 0, rp = 0;
	size_t off = 0;
	bool ecn_known;

	if (!nd)
		return 0;
	/* mlx5 shows the default traffic class of the port and ECN per priority */
	sys_read_str(in->root, tc, sizeof(tc), "class/infiniband/%s/tc/%d/traffic_class", n->name,
		     pt->num);
	ecn_known = sys_exists(in->root, "class/net/%s/ecn/roce_np/enable", nd);
	for (int prio = 0; prio < 8 && ecn_known; prio++) {
		bool a = sys_read_long(in->root, 0, "class/net/%s/ecn/roce_np/enable/%d", nd, prio) == 1;
		bool b = sys_read_long(in->root, 0, "class/net/%s/ecn/roce_rp/enable/%d", nd, prio) == 1;

		np += a;
		rp += b;
		if (a && b)
			str_appendf(prios, sizeof(prios), &off, "%s%d", off ? "," : "", prio);
	}
	snprintf(fix, sizeof(fix),
		 "enable ECN on the RoCE priority (echo 1 > /sys/class/net/%s/ecn/roce_np/enable/3 "
		 "and roce_rp/enable/3) and check PFC on it (`mlnx_qos -i %s` or `dcb pfc show dev "
		 "%s`)",
		 nd, nd, nd);
	if (!ecn_known)
		return doctor_add(r, "roce_qos", DOC_SKIP, subj, NULL,
				  "ECN and PFC are not in sysfs for this driver; check `dcb pfc show "
				  "dev %s` enables PFC on the priority of [transport] traffic_class "
				  "(DSCP << 2)%s%s",
				  nd, tc[0] ? "; port traffic class " : "", tc);
	if (!off)
		return doctor_add(r, "roce_qos", DOC_WARN, subj, fix,
				  "ECN off on every priority of %s (notification point on %d, reaction "
				  "point on %d): congestion becomes PFC pauses or drops%s%s",
				  nd, np, rp, tc[0] ? "; port traffic class " : "", tc);
	return doctor_add(r, "roce_qos", DOC_PASS, subj, NULL,
			  "ECN on priorities %s of %s; PFC is not in sysfs (`dcb pfc show dev %s`)%s%s",
			  prios, nd, nd, tc[0] ? "; port traffic class " : "", tc);
}

int doc_roce_qos(const struct doc_input *in, struct doc_report *r)
{
	return each_active_port(in, r, true, port_qos);
}
