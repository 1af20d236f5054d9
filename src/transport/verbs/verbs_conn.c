/*
 * Verbs connection setup: protection domain, one CQ, qps_per_peer RC QPs per peer with
 * pre-posted control receives, the endpoint record, and the INIT -> RTR -> RTS walk
 * (the receive flush's loopback QP is set up in verbs_flush.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "transport/rdma_policy.h"
#include "transport/verbs/verbs_priv.h"
#include "util/log.h"
#include "util/timeutil.h"

#define EP_VERSION 1

/*
 * Endpoint record: this header, a bitmap of the ranks this rank connects to (nranks bits),
 * then for each set bit in rank order nqp QP numbers of 3 bytes (QPNs are 24-bit).
 */
struct verbs_ep_hdr {
	uint32_t magic;
	uint16_t version;
	uint8_t link_layer;
	uint8_t mtu; /* enum ibv_mtu */
	uint16_t lid;
	uint8_t nqp;
	uint8_t pad;
	uint32_t psn;
	uint32_t nranks;
	uint8_t gid[16];
} __attribute__((packed));

int verbs_post_ctrl_recv(struct verbs_state *s, int peer, int q, int slot)
{
	struct verbs_peer *pp = s->peers[peer];
	struct ibv_sge sge = {
	    .addr = (uintptr_t)&pp->ring[q * s->depth + slot],
	    .length = sizeof(struct verbs_msg),
	    .lkey = s->ctrl_mr->lkey,
	};
	struct ibv_recv_wr wr =
			       {
				   .wr_id = WRID(WR_RECV, peer, q, slot),
				   .sg_list = &sge,
				   .num_sge = 1,
			       },
			   *bad;
	int e = ibv_post_recv(pp->qp[q], &wr, &bad);

	if (e) {
		log_err(LOG_TRANSPORT, "ibv_post_recv peer=%d qpn=0x%x: %s", peer,
			pp->qp[q]->qp_num, strerror(e));
		return -e;
	}
	return 0;
}

static int qp_create(struct verbs_state *s, int peer, int q, uint32_t want_inline)
{
	struct verbs_peer *pp = s->peers[peer];
	struct ibv_qp_init_attr ia = {
	    .send_cq = s->cq,
	    .recv_cq = s->cq,
	    .qp_type = IBV_QPT_RC,
	    .cap =
		{
		    .max_send_wr = s->depth,
		    .max_recv_wr = s->depth,
		    .max_send_sge = 1,
		    .max_recv_sge = 1,
		    .max_inline_data = want_inline,
		},
	};
	struct ibv_qp_attr a = {
	    .qp_state = IBV_QPS_INIT,
	    .pkey_index = 0,
	    .port_num = s->dev.port,
	    .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	};
	int e, i;

	pp->qp[q] = ibv_create_qp(s->pd, &ia);
	if (!pp->qp[q] && want_inline > sizeof(struct verbs_msg)) {
		/* the device caps inline below inline_threshold: fall back to our messages */
		ia.cap.max_inline_data = sizeof(struct verbs_msg);
		pp->qp[q] = ibv_create_qp(s->pd, &ia);
	}
	if (!pp->qp[q]) {
		ia.cap.max_inline_data = 0;
		pp->qp[q] = ibv_create_qp(s->pd, &ia);
	}
	if (!pp->qp[q]) {
		e = errno;
		log_err(LOG_TRANSPORT, "ibv_create_qp %s peer=%d depth=%d: %s", s->dev.name, peer,
			s->depth, strerror(e));
		return -e;
	}
	if (ia.cap.max_inline_data < s->max_inline)
		s->max_inline = ia.cap.max_inline_data;
	e = ibv_modify_qp(pp->qp[q], &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (e) {
		log_err(LOG_TRANSPORT, "ibv_modify_qp INIT peer=%d qpn=0x%x: %s", peer,
			pp->qp[q]->qp_num, strerror(e));
		return -e;
	}
	for (i = 0; i < s->depth; i++) {
		e = verbs_post_ctrl_recv(s, peer, q, i);
		if (e)
			return e;
	}
	return 0;
}

static int alloc_peers(struct verbs_state *s)
{
	const struct transport_env *env = s->env;
	size_t per = (size_t)s->nqp * s->depth * sizeof(struct verbs_msg), off = 0;
	int p, npeers = 0;

	s->peers = calloc(env->nranks, sizeof(*s->peers));
	if (!s->peers)
		return -ENOMEM;
	for (p = 0; p < env->nranks; p++)
		if (p != env->rank && env->use_peer[p])
			npeers++;
	s->ctrl_len = GS_MAX((size_t)npeers * per * 2, 4096);
	if (posix_memalign(&s->ctrl, 4096, s->ctrl_len))
		return -ENOMEM;
	memset(s->ctrl, 0, s->ctrl_len);
	for (p = 0; p < env->nranks; p++) {
		if (p == env->rank || !env->use_peer[p])
			continue;
		s->peers[p] = calloc(1, sizeof(struct verbs_peer));
		if (!s->peers[p])
			return -ENOMEM;
		/* touch it now: the data path must not fault fresh pages (a memset after
		 * calloc is folded away: gs_touch_pages) */
		gs_touch_pages(s->peers[p], sizeof(struct verbs_peer));
		s->peers[p]->used = true;
		s->peers[p]->nqp = s->nqp;
		s->peers[p]->ring = (struct verbs_msg *)((char *)s->ctrl + off);
		s->peers[p]->txbuf = (struct verbs_msg *)((char *)s->ctrl + off + per);
		off += 2 * per;
	}
	s->done_cap = GS_MAX(npeers, 1) * VERBS_REQ_MAX * 2;
	s->done = calloc(s->done_cap, sizeof(*s->done));
	if (!s->done)
		return -ENOMEM;
	memset(s->done, 0, s->done_cap * sizeof(*s->done));
	return npeers;
}

/*
 * Fork safety, as NCCL's init: ibv_fork_init() before the first registration keeps a
 * child's copy-on-write away from pinned pages. On kernels that copy pinned pages at fork
 * (5.13+) libibverbs reports it unneeded and nothing is done.
 */
static void fork_init(void)
{
	int e;

	if (ibv_is_fork_initialized() != IBV_FORK_DISABLED)
		return;
	e = ibv_fork_init();
	if (e)
		log_warn(LOG_TRANSPORT, "ibv_fork_init: %s (a fork() while MRs exist may corrupt them)",
			 strerror(e));
}

int verbs_open(struct transport *t, const struct transport_env *env, int kind)
{
	const struct transport_opts *o = env->opts;
	struct verbs_state *s;
	int ret, p, q, npeers = 0, cqe;
	const char *force;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	t->priv = s;
	fork_init();
	s->env = env;
	s->kind = kind;
	ret = verbs_dev_open(&s->dev, o, env->rail,
			     kind == TP_IB ? IBV_LINK_LAYER_INFINIBAND : IBV_LINK_LAYER_ETHERNET);
	if (ret)
		return ret;
	s->nqp = o->qps_per_peer < 1 ? 1 : GS_MIN(o->qps_per_peer, VERBS_MAX_QPS);
	s->rc_budget_ns = verbs_rc_budget_ns(o->qp_timeout, VERBS_QP_RETRY);
	for (p = 0; p < env->nranks; p++)
		npeers += p != env->rank && env->use_peer[p];
	s->depth = o->qp_depth > 0 ? o->qp_depth : VERBS_DEF_DEPTH;
	s->depth = GS_MIN(s->depth, s->dev.dattr.max_qp_wr);
	/* every send and receive WR of every QP may sit in the one CQ at once: it must fit,
	 * with depth more for the flush READs of the loopback QP (verbs_flush.c) */
	s->depth =
	    GS_MIN(s->depth, (s->dev.dattr.max_cqe - 16) / (GS_MAX(npeers, 1) * s->nqp * 2 + 1));
	if (s->depth < 8) {
		log_err(LOG_TRANSPORT,
			"verbs %s: %d peers x %d QPs do not fit a CQ of %d entries; "
			"lower qps_per_peer",
			s->dev.name, npeers, s->nqp, s->dev.dattr.max_cqe);
		return -ENOSPC;
	}
	s->max_inline =
	    GS_MAX((uint32_t)GS_MIN(o->inline_threshold, 4096), (uint32_t)sizeof(struct verbs_msg));
	/* one write WR carries at most slot_size bytes: the unit striped over QPs */
	s->max_write = GS_MIN((uint64_t)s->dev.pattr.max_msg_sz, 1ull << 30);
	if (o->slot_size)
		s->max_write = GS_MIN(s->max_write, o->slot_size);
	if (!s->max_write)
		s->max_write = 1ull << 30;
	if (getrandom(&s->psn, sizeof(s->psn), 0) != sizeof(s->psn))
		s->psn = (uint32_t)time_now_ns();
	s->psn &= 0xffffff;
	force = getenv("GRADSYNC_VERBS_FLUSH");
	s->fl.force = force && !strcmp(force, "1");

	ret = alloc_peers(s);
	if (ret < 0) {
		log_err(LOG_TRANSPORT, "verbs: allocating peer state: %s", strerror(-ret));
		return ret;
	}
	s->pd = ibv_alloc_pd(s->dev.ctx);
	if (!s->pd) {
		ret = -errno;
		log_err(LOG_TRANSPORT, "ibv_alloc_pd %s: %s", s->dev.name, strerror(errno));
		return ret;
	}
	if (o->cq_mode == TP_CQ_EVENT) {
		s->chan = ibv_create_comp_channel(s->dev.ctx);
		if (!s->chan) {
			ret = -errno;
			log_err(LOG_TRANSPORT, "ibv_create_comp_channel %s: %s", s->dev.name,
				strerror(errno));
			return ret;
		}
	}
	cqe = GS_MIN((GS_MAX(npeers, 1) * s->nqp * 2 + 1) * s->depth + 16, s->dev.dattr.max_cqe);
	s->cq = ibv_create_cq(s->dev.ctx, cqe, NULL, s->chan, 0);
	if (!s->cq) {
		ret = -errno;
		log_err(LOG_TRANSPORT, "ibv_create_cq %s cqe=%d: %s", s->dev.name, cqe,
			strerror(errno));
		return ret;
	}
	s->ctrl_mr = ibv_reg_mr(s->pd, s->ctrl, s->ctrl_len, IBV_ACCESS_LOCAL_WRITE);
	if (!s->ctrl_mr) {
		ret = -errno;
		log_err(LOG_TRANSPORT, "ibv_reg_mr %s control ring %zu bytes: %s", s->dev.name,
			s->ctrl_len, strerror(errno));
		return ret;
	}
	for (p = 0; p < env->nranks; p++) {
		if (!s->peers[p])
			continue;
		for (q = 0; q < s->nqp; q++) {
			ret = qp_create(s, p, q, s->max_inline);
			if (ret)
				return ret;
		}
	}
	log_dbg(LOG_TRANSPORT, "verbs %s port %d gid %d: %d peers x %d QPs, depth %d, inline %u",
		s->dev.name, s->dev.port, s->dev.gid_index, npeers, s->nqp, s->depth,
		s->max_inline);
	return 0;
}

int verbs_endpoint(struct transport *t, void *buf, size_t *len)
{
	struct verbs_state *s = t->priv;
	const struct transport_env *env = s->env;
	struct verbs_ep_hdr *h = buf;
	uint8_t *bm = (uint8_t *)(h + 1), *qpn;
	size_t need = sizeof(*h) + GS_DIV_ROUND_UP(env->nranks, 8);
	int p, q;

	for (p = 0; p < env->nranks; p++)
		if (s->peers[p])
			need += 3 * s->nqp;
	if (need > TRANSPORT_EP_MAX || need > *len) {
		log_err(LOG_TRANSPORT,
			"verbs endpoint: %zu bytes for %d ranks x %d QPs exceed "
			"the %d-byte record; lower qps_per_peer",
			need, env->nranks, s->nqp, TRANSPORT_EP_MAX);
		return -E2BIG;
	}
	memset(buf, 0, need);
	h->magic = VERBS_EP_MAGIC;
	h->version = EP_VERSION;
	h->link_layer = s->dev.link_layer;
	h->mtu = s->dev.mtu;
	h->lid = s->dev.pattr.lid;
	h->nqp = s->nqp;
	h->psn = s->psn;
	h->nranks = env->nranks;
	memcpy(h->gid, s->dev.gid.raw, 16);
	qpn = bm + GS_DIV_ROUND_UP(env->nranks, 8);
	for (p = 0; p < env->nranks; p++) {
		if (!s->peers[p])
			continue;
		bm[p / 8] |= 1u << (p % 8);
		for (q = 0; q < s->nqp; q++, qpn += 3) {
			uint32_t n = s->peers[p]->qp[q]->qp_num;

			qpn[0] = n & 0xff;
			qpn[1] = (n >> 8) & 0xff;
			qpn[2] = (n >> 16) & 0xff;
		}
	}
	*len = need;
	return 0;
}

/* Find the QPNs peer `p` created for us in its record. */
static int ep_qpns(const struct verbs_state *s, int p, const struct verbs_ep_hdr *h, uint32_t *qpns)
{
	const uint8_t *bm = (const uint8_t *)(h + 1), *qpn;
	int me = s->env->rank, r, idx = 0, q;

	if (h->magic != VERBS_EP_MAGIC || h->version != EP_VERSION ||
	    h->nranks != (uint32_t)s->env->nranks) {
		log_err(LOG_TRANSPORT,
			"verbs connect peer=%d: endpoint record is not a verbs %d "
			"record (magic 0x%x)",
			p, EP_VERSION, h->magic);
		return -EPROTO;
	}
	if (h->link_layer != s->dev.link_layer || h->nqp != s->nqp) {
		log_err(LOG_TRANSPORT,
			"verbs connect peer=%d: peer has link layer %s with %d "
			"QPs, we have %s with %d",
			p, verbs_ll_name(h->link_layer), h->nqp, verbs_ll_name(s->dev.link_layer),
			s->nqp);
		return -EPROTO;
	}
	if (!(bm[me / 8] & (1u << (me % 8)))) {
		log_err(LOG_TRANSPORT, "verbs connect peer=%d: peer does not connect to rank %d", p,
			me);
		return -EPROTO;
	}
	for (r = 0; r < me; r++)
		if (bm[r / 8] & (1u << (r % 8)))
			idx++;
	qpn = bm + GS_DIV_ROUND_UP(h->nranks, 8) + (size_t)idx * h->nqp * 3;
	if (qpn + 3 * h->nqp > (const uint8_t *)h + TRANSPORT_EP_MAX)
		return -EPROTO;
	for (q = 0; q < h->nqp; q++)
		qpns[q] = qpn[3 * q] | qpn[3 * q + 1] << 8 | (uint32_t)qpn[3 * q + 2] << 16;
	return 0;
}

int verbs_qp_rtr_rts(struct verbs_state *s, struct ibv_qp *qp, const struct verbs_qp_dest *d,
		     const char *who)
{
	const struct transport_opts *o = s->env->opts;
	struct ibv_qp_attr a = {
	    .qp_state = IBV_QPS_RTR,
	    .path_mtu = d->mtu,
	    .dest_qp_num = d->qpn,
	    .rq_psn = d->psn,
	    .max_dest_rd_atomic = d->rd_atomic,
	    .min_rnr_timer = VERBS_QP_MIN_RNR_TIMER,
	    .ah_attr =
		{
		    .dlid = d->lid,
		    .sl = o->service_level,
		    .port_num = s->dev.port,
		},
	};
	int e;

	/* RoCE: routed on the GID, never on a LID; IB: on the LID inside a subnet, with a GRH
	 * (GID index 0) toward another subnet or where the port demands one, as NCCL */
	if (verbs_ah_global(s->dev.link_layer, s->dev.gid.raw, d->gid, s->dev.pattr.flags)) {
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.sgid_index = s->dev.gid_index >= 0 ? s->dev.gid_index : 0;
		a.ah_attr.grh.hop_limit = VERBS_QP_HOP_LIMIT;
		a.ah_attr.grh.traffic_class = o->traffic_class;
		memcpy(a.ah_attr.grh.dgid.raw, d->gid, 16);
	}
	e = ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (e) {
		log_err(LOG_TRANSPORT, "ibv_modify_qp RTR %s qpn=0x%x -> 0x%x: %s", who, qp->qp_num,
			d->qpn, strerror(e));
		return -e;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = o->qp_timeout > 0 ? o->qp_timeout : VERBS_QP_TIMEOUT;
	a.retry_cnt = VERBS_QP_RETRY;
	a.rnr_retry = VERBS_QP_RNR_RETRY;
	a.sq_psn = s->psn;
	a.max_rd_atomic = d->rd_init;
	e = ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (e) {
		log_err(LOG_TRANSPORT, "ibv_modify_qp RTS %s qpn=0x%x: %s", who, qp->qp_num,
			strerror(e));
		return -e;
	}
	return 0;
}

static int qp_ready(struct verbs_state *s, int p, int q, const struct verbs_ep_hdr *h,
		    uint32_t rqpn)
{
	struct verbs_qp_dest d = {
		.qpn = rqpn,
		.psn = h->psn,
		.lid = h->lid,
		/* min(ours, the peer's), as NCCL; ours is already lowered to [transport] mtu */
		.mtu = verbs_mtu_enum(rdma_path_mtu(verbs_mtu_bytes(s->dev.mtu),
						    verbs_mtu_bytes((enum ibv_mtu)h->mtu), 0)),
		.rd_atomic = VERBS_QP_RD_ATOMIC,
		.rd_init = VERBS_QP_RD_ATOMIC,
	};
	char who[24];
	int ret;

	memcpy(d.gid, h->gid, 16);
	snprintf(who, sizeof(who), "peer=%d", p);
	ret = verbs_qp_rtr_rts(s, s->peers[p]->qp[q], &d, who);
	if (ret)
		return ret;
	s->peers[p]->rqpn[q] = rqpn;
	s->peers[p]->cred[q] = s->depth; /* the peer pre-posted depth receives */
	return 0;
}

int verbs_connect(struct transport *t, const void *eps)
{
	struct verbs_state *s = t->priv;
	uint32_t qpns[VERBS_MAX_QPS];
	int p, q, ret;

	for (p = 0; p < s->env->nranks; p++) {
		const struct verbs_ep_hdr *h;

		if (!s->peers[p])
			continue;
		h = (const void *)((const char *)eps + (size_t)p * TRANSPORT_EP_MAX);
		ret = ep_qpns(s, p, h, qpns);
		if (ret)
			return ret;
		for (q = 0; q < s->nqp; q++) {
			ret = qp_ready(s, p, q, h, qpns[q]);
			if (ret)
				return ret;
		}
	}
	if (s->fl.force || s->env->gdr_flush)
		return verbs_flush_setup(s);
	return 0;
}

void verbs_close(struct transport *t)
{
	struct verbs_state *s = t->priv;
	struct tp_mr *m, *next;
	int p, q;

	if (!s)
		return;
	for (p = 0; s->peers && p < s->env->nranks; p++) {
		if (!s->peers[p])
			continue;
		for (q = 0; q < s->nqp; q++)
			if (s->peers[p]->qp[q])
				ibv_destroy_qp(s->peers[p]->qp[q]);
		free(s->peers[p]);
	}
	free(s->peers);
	for (m = s->mrs; m; m = next) {
		next = m->next;
		ibv_dereg_mr(m->mr);
		free(m);
	}
	verbs_flush_close(s);
	if (s->ctrl_mr)
		ibv_dereg_mr(s->ctrl_mr);
	free(s->ctrl);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->chan)
		ibv_destroy_comp_channel(s->chan);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	verbs_dev_close(&s->dev);
	free(s->done);
	free(s);
	t->priv = NULL;
}
