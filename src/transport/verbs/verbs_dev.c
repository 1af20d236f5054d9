/*
 * Verbs device, port and GID selection ("mlx5_0:1" or "auto", NCCL-like GID choice) and
 * the decoding of port facts (rate, width, MTU) that path_info reports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "transport/rdma_policy.h"
#include "transport/verbs/verbs_policy.h"
#include "transport/verbs/verbs_priv.h"
#include "util/log.h"
#include "util/strutil.h"

const char *verbs_ll_name(int link_layer)
{
	switch (link_layer) {
	case IBV_LINK_LAYER_ETHERNET:
		return "Ethernet";
	case IBV_LINK_LAYER_INFINIBAND:
	case IBV_LINK_LAYER_UNSPECIFIED: /* pre-RoCE drivers only ever meant IB */
		return "InfiniBand";
	default:
		return "unknown";
	}
}

static int norm_ll(int ll)
{
	return ll == IBV_LINK_LAYER_UNSPECIFIED ? IBV_LINK_LAYER_INFINIBAND : ll;
}

static const char *gid_type_name(int type)
{
	switch (type) {
	case IBV_GID_TYPE_ROCE_V2:
		return "RoCEv2";
	case IBV_GID_TYPE_ROCE_V1:
		return "RoCEv1";
	default:
		return "IB";
	}
}

/* "mlx5_0:1" -> name, port; "mlx5_0" -> port 0 (any); "auto"/"" -> name "" */
static int parse_device(const char *spec, char *name, size_t nlen, int *port)
{
	const char *colon;
	char *end;
	long p;

	*port = 0;
	name[0] = '\0';
	if (!spec || !spec[0] || !strcmp(spec, "auto"))
		return 0;
	colon = strchr(spec, ':');
	if (!colon) {
		snprintf(name, nlen, "%s", spec);
		return 0;
	}
	if ((size_t)(colon - spec) >= nlen)
		return -EINVAL;
	memcpy(name, spec, colon - spec);
	name[colon - spec] = '\0';
	p = strtol(colon + 1, &end, 10);
	if (*end || p < 1 || p > 255)
		return -EINVAL;
	*port = (int)p;
	return 0;
}

static bool gid_is_zero(const union ibv_gid *g)
{
	static const uint8_t zero[16];

	return !memcmp(g->raw, zero, 16);
}

/* The verbs GID entry in rdma_policy's terms (its choice is NCCL's, shared with doctor). */
static struct rdma_gid gid_of(const struct ibv_gid_entry *e)
{
	struct rdma_gid g = {
	    .index = (int)e->gid_index,
	    .type = e->gid_type == IBV_GID_TYPE_ROCE_V2	  ? RDMA_GID_ROCE_V2
		    : e->gid_type == IBV_GID_TYPE_ROCE_V1 ? RDMA_GID_ROCE_V1
							  : RDMA_GID_IB,
	};

	memcpy(g.raw, e->gid.raw, 16);
	return g;
}

static int select_gid(struct verbs_dev *d, int want, bool quiet)
{
	struct ibv_gid_entry e, best = {0};
	struct rdma_gid g;
	int i, sc, best_sc = 0;

	if (want >= 0) {
		if (want >= d->pattr.gid_tbl_len ||
		    ibv_query_gid_ex(d->ctx, d->port, want, &e, 0) || gid_is_zero(&e.gid)) {
			if (!quiet)
				log_err(
				    LOG_TRANSPORT,
				    "verbs %s port %d (%s): gid_index %d is empty or out of range"
				    " (table has %d entries); use gid_index = -1 for auto",
				    d->name, d->port, verbs_ll_name(d->link_layer), want,
				    d->pattr.gid_tbl_len);
			return -EINVAL;
		}
		best = e;
	} else if (d->link_layer == IBV_LINK_LAYER_INFINIBAND) {
		/* LID routing: GID 0 is only reported, never routed on */
		if (ibv_query_gid_ex(d->ctx, d->port, 0, &best, 0))
			memset(&best, 0, sizeof(best));
	} else {
		for (i = 0; i < d->pattr.gid_tbl_len; i++) {
			if (ibv_query_gid_ex(d->ctx, d->port, i, &e, 0))
				continue;
			g = gid_of(&e);
			sc = rdma_gid_score(&g);
			if (sc > best_sc) {
				best_sc = sc;
				best = e;
			}
		}
		if (!best_sc) {
			if (!quiet)
				log_err(LOG_TRANSPORT,
					"verbs %s port %d (Ethernet): no usable RoCE GID (is an IP "
					"address configured on its netdev?); use transport = tcp",
					d->name, d->port);
			return -ENODEV;
		}
	}
	d->gid_index =
	    want >= 0 || d->link_layer == IBV_LINK_LAYER_ETHERNET ? (int)best.gid_index : -1;
	d->gid = best.gid;
	d->gid_type = best.gid_type;
	return 0;
}

/* Check one port against the wanted link layer; logs why it does not fit unless quiet. */
static int check_port(struct verbs_dev *d, int port, int want_ll, bool quiet)
{
	struct ibv_port_attr pa;
	int e;

	if (port > d->dattr.phys_port_cnt) {
		if (!quiet)
			log_err(LOG_TRANSPORT, "verbs %s has %d port(s), there is no port %d",
				d->name, d->dattr.phys_port_cnt, port);
		return -ENODEV;
	}
	e = ibv_query_port(d->ctx, port, &pa);
	if (e) {
		if (!quiet)
			log_err(LOG_TRANSPORT, "ibv_query_port %s port %d: %s", d->name, port,
				strerror(e));
		return -e;
	}
	if (norm_ll(pa.link_layer) != want_ll) {
		if (!quiet)
			log_err(LOG_TRANSPORT,
				"verbs %s port %d: link layer is %s, transport %s needs %s; use "
				"transport = %s or tcp",
				d->name, port, verbs_ll_name(pa.link_layer),
				want_ll == IBV_LINK_LAYER_ETHERNET ? "roce" : "ib",
				verbs_ll_name(want_ll),
				want_ll == IBV_LINK_LAYER_ETHERNET ? "ib" : "roce");
		return -EPROTONOSUPPORT;
	}
	if (pa.state != IBV_PORT_ACTIVE) {
		if (!quiet)
			log_err(LOG_TRANSPORT,
				"verbs %s port %d (%s) is %s, not ACTIVE; use transport = tcp",
				d->name, port, verbs_ll_name(pa.link_layer),
				ibv_port_state_str(pa.state));
		return -ENETDOWN;
	}
	d->port = port;
	d->pattr = pa;
	d->link_layer = norm_ll(pa.link_layer);
	return 0;
}

/* Open the device/port named by spec (or the first ACTIVE port of want_ll for "auto"). */
static int dev_select(struct verbs_dev *d, const char *spec, int want_ll, bool quiet)
{
	struct ibv_device **list;
	char name[64], have[256] = "";
	size_t have_len = 0;
	int i, n, port, p, e, ret = -ENODEV;
	bool named;

	memset(d, 0, sizeof(*d));
	if (parse_device(spec, name, sizeof(name), &port)) {
		if (!quiet)
			log_err(LOG_TRANSPORT, "verbs device \"%s\": expected NAME[:PORT] or auto",
				spec);
		return -EINVAL;
	}
	named = name[0] != '\0';
	list = ibv_get_device_list(&n);
	if (!list) {
		/* ENOSYS: no uverbs in this kernel or no /sys/class/infiniband at all */
		if (!quiet)
			log_err(LOG_TRANSPORT,
				"ibv_get_device_list: %s (no RDMA device on this host);"
				" use transport = tcp",
				strerror(errno));
		return -ENODEV;
	}
	for (i = 0; i < n; i++) {
		const char *dn = ibv_get_device_name(list[i]);

		str_appendf(have, sizeof(have), &have_len, "%s%s", have[0] ? ", " : "", dn);
		if (named && strcmp(dn, name))
			continue;
		d->ctx = ibv_open_device(list[i]);
		if (!d->ctx) {
			if (!quiet)
				log_err(LOG_TRANSPORT, "ibv_open_device %s: %s", dn,
					strerror(errno));
			ret = -errno ? -errno : -ENODEV;
			continue;
		}
		snprintf(d->name, sizeof(d->name), "%s", dn);
		e = ibv_query_device(d->ctx, &d->dattr);
		if (e) {
			if (!quiet)
				log_err(LOG_TRANSPORT, "ibv_query_device %s: %s", dn, strerror(e));
			ret = -e;
		} else {
			for (p = port ? port : 1; p <= (port ? port : d->dattr.phys_port_cnt);
			     p++) {
				/* auto stays quiet per port and says one line at the end */
				ret = check_port(d, p, want_ll, quiet || !named);
				if (!ret)
					break;
			}
		}
		if (!ret)
			break;
		ibv_close_device(d->ctx);
		d->ctx = NULL;
		if (named)
			break;
	}
	ibv_free_device_list(list);
	if (d->ctx)
		return 0;
	if (!quiet && (!named || i == n)) {
		if (named)
			log_err(LOG_TRANSPORT,
				"verbs device %s not found (have: %s); use "
				"transport = tcp",
				name, have[0] ? have : "none");
		else
			log_err(LOG_TRANSPORT,
				"verbs: no ACTIVE %s port on any device (have: %s);"
				" use transport = tcp",
				verbs_ll_name(want_ll), have[0] ? have : "none");
	}
	return ret ? ret : -ENODEV;
}

int verbs_dev_open(struct verbs_dev *d, const struct transport_opts *o, const char *rail,
		   int want_ll)
{
	bool is_auto = !o->device[0] || !strcmp(o->device, "auto");
	enum ibv_mtu want;
	int ret = -ENODEV;

	/* device = auto: the rank's rail first (the NIC closest to its GPU, as NCCL), then
	 * the first ACTIVE port of the link layer anywhere */
	if (is_auto && rail && rail[0]) {
		ret = dev_select(d, rail, want_ll, true);
		if (ret)
			log_info(LOG_TRANSPORT,
				 "verbs: rail %s has no ACTIVE %s port; using the first one found",
				 rail, verbs_ll_name(want_ll));
	}
	if (ret)
		ret = dev_select(d, o->device, want_ll, false);
	if (ret)
		return ret;
	ret = select_gid(d, o->gid_index, false);
	if (ret)
		goto out_close;
	d->mtu = d->pattr.active_mtu;
	if (o->mtu) {
		want = verbs_mtu_enum(o->mtu);
		if (want > d->pattr.active_mtu)
			log_warn(LOG_TRANSPORT,
				 "verbs %s port %d: mtu %d above the active %d; "
				 "using %d",
				 d->name, d->port, o->mtu, verbs_mtu_bytes(d->pattr.active_mtu),
				 verbs_mtu_bytes(d->pattr.active_mtu));
		else
			d->mtu = want;
	}
	return 0;
out_close:
	verbs_dev_close(d);
	return ret;
}

void verbs_dev_close(struct verbs_dev *d)
{
	if (d->ctx)
		ibv_close_device(d->ctx);
	d->ctx = NULL;
}

bool verbs_dev_usable(const char *device, int want_ll)
{
	struct verbs_dev d;

	if (dev_select(&d, device, want_ll, true))
		return false;
	verbs_dev_close(&d);
	return true;
}

/* Per-lane signalling of ibv_port_attr.active_speed, in Mb/s, and its name. */
static void speed_decode(int speed, unsigned *mbps, const char **name)
{
	static const struct {
		int code;
		unsigned mbps;
		const char *name;
	} tab[] = {
	    {1, 2500, "SDR"},	 {2, 5000, "DDR"},     {4, 10000, "QDR"},
	    {8, 10000, "FDR10"}, {16, 14000, "FDR"},   {32, 25000, "EDR"},
	    {64, 50000, "HDR"},	 {128, 100000, "NDR"}, {256, 200000, "XDR"},
	};
	size_t i;

	*mbps = 0;
	*name = "?";
	for (i = 0; i < ARRAY_SIZE(tab); i++) {
		if (tab[i].code == speed) {
			*mbps = tab[i].mbps;
			*name = tab[i].name;
		}
	}
}

static int width_lanes(int width)
{
	switch (width) {
	case 1:
		return 1;
	case 2:
		return 4;
	case 4:
		return 8;
	case 8:
		return 12;
	case 16:
		return 2;
	default:
		return 0;
	}
}

int verbs_path_info(const struct verbs_state *s, struct tp_path_info *info)
{
	const struct verbs_dev *d = &s->dev;
	const char *sname;
	unsigned mbps;
	int lanes;

	memset(info, 0, sizeof(*info));
	snprintf(info->transport, sizeof(info->transport), "%s", s->kind == TP_IB ? "ib" : "roce");
	snprintf(info->device, sizeof(info->device), "%s", d->name);
	info->port = d->port;
	snprintf(info->link_layer, sizeof(info->link_layer), "%s", verbs_ll_name(d->link_layer));
	speed_decode(d->pattr.active_speed, &mbps, &sname);
	lanes = width_lanes(d->pattr.active_width);
	info->rate_bps = (uint64_t)mbps * lanes * 1000000ull;
	snprintf(info->rate, sizeof(info->rate), "%g Gb/s (%dX %s)", mbps * lanes / 1000.0, lanes,
		 sname);
	info->mtu = verbs_mtu_bytes(d->mtu);
	info->gid_index = d->gid_index;
	snprintf(info->gid_type, sizeof(info->gid_type), "%s",
		 d->gid_index < 0 ? "" : gid_type_name(d->gid_type));
	info->qps = s->nqp;
	snprintf(info->fw_ver, sizeof(info->fw_ver), "%s", d->dattr.fw_ver);
	if (d->gid_index >= 0) {
		char addr[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, d->gid.raw, addr, sizeof(addr));
		snprintf(info->note, sizeof(info->note),
			 "gid %s, qp depth %d, inline %u, writes <= %llu B", addr, s->depth,
			 s->max_inline, (unsigned long long)s->max_write);
	} else {
		snprintf(info->note, sizeof(info->note),
			 "lid %u, qp depth %d, inline %u, writes <= %llu B", d->pattr.lid, s->depth,
			 s->max_inline, (unsigned long long)s->max_write);
	}
	if (s->fl.qp) {
		size_t n = strlen(info->note);

		str_appendf(info->note, sizeof(info->note), &n, ", flushes %llu",
			    (unsigned long long)s->fl.reads_done);
	}
	return 0;
}
