/*
 * The GPUDirect RDMA receive flush for GPUs before Hopper (NCCL's ncclIbIflush): a loopback
 * RC QP reads a few bytes of a region the NIC wrote, and the receive completes after it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/verbs/verbs_priv.h"
#include "util/log.h"

/* INIT, then RTR -> RTS with the QP's own number, LID and GID as the destination. */
static int loop_connect(struct verbs_state *s, struct ibv_qp *qp)
{
	const struct verbs_dev *d = &s->dev;
	struct ibv_qp_attr a = {
	    .qp_state = IBV_QPS_INIT,
	    .port_num = d->port,
	    .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	struct verbs_qp_dest self = {
		.qpn = qp->qp_num,
		.psn = s->psn,
		.lid = d->pattr.lid,
		.mtu = d->mtu,
		.rd_atomic = GS_MAX(1, GS_MIN(d->dattr.max_qp_rd_atom, 16)),
		.rd_init = GS_MAX(1, GS_MIN(d->dattr.max_qp_init_rd_atom, 16)),
	};
	int e;

	e = ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (e) {
		log_err(LOG_TRANSPORT, "ibv_modify_qp INIT flush loopback qpn=0x%x: %s", qp->qp_num,
			strerror(e));
		return -e;
	}
	memcpy(self.gid, d->gid.raw, 16);
	return verbs_qp_rtr_rts(s, qp, &self, "flush loopback");
}

int verbs_flush_setup(struct verbs_state *s)
{
	struct verbs_flush *f = &s->fl;
	struct ibv_qp_init_attr ia = {
	    .send_cq = s->cq,
	    .recv_cq = s->cq,
	    .qp_type = IBV_QPT_RC,
	    .cap = {.max_send_wr = s->depth,
		    .max_recv_wr = 1,
		    .max_send_sge = 1,
		    .max_recv_sge = 1},
	};
	int ret;

	if (f->qp)
		return 0;
	f->cap = s->done_cap; /* held + done entries are bounded by check_post together */
	f->held = calloc(f->cap, sizeof(*f->held));
	if (posix_memalign(&f->buf, 64, 64) || !f->held) {
		log_err(LOG_TRANSPORT, "verbs %s flush: allocating %llu held completions: %s",
			s->dev.name, (unsigned long long)f->cap, strerror(ENOMEM));
		ret = -ENOMEM;
		goto out_free;
	}
	/* touch it now: the data path must not fault fresh pages (a memset after calloc is
	 * folded away: gs_touch_pages) */
	gs_touch_pages(f->held, f->cap * sizeof(*f->held));
	memset(f->buf, 0, 64);
	f->mr = ibv_reg_mr(s->pd, f->buf, 64, IBV_ACCESS_LOCAL_WRITE);
	if (!f->mr) {
		ret = -errno;
		log_err(LOG_TRANSPORT, "ibv_reg_mr %s flush target 64 bytes: %s", s->dev.name,
			strerror(errno));
		goto out_free;
	}
	f->qp = ibv_create_qp(s->pd, &ia);
	if (!f->qp) {
		ret = -errno;
		log_err(LOG_TRANSPORT, "ibv_create_qp %s flush loopback depth=%d: %s", s->dev.name,
			s->depth, strerror(errno));
		goto out_mr;
	}
	ret = loop_connect(s, f->qp);
	if (ret)
		goto out_qp;
	f->depth = s->depth;
	log_dbg(LOG_TRANSPORT, "verbs %s: receive flush on loopback qpn=0x%x%s", s->dev.name,
		f->qp->qp_num, f->force ? " (GRADSYNC_VERBS_FLUSH: every receive)" : "");
	return 0;
out_qp:
	ibv_destroy_qp(f->qp);
	f->qp = NULL;
out_mr:
	ibv_dereg_mr(f->mr);
	f->mr = NULL;
out_free:
	free(f->buf);
	f->buf = NULL;
	free(f->held);
	f->held = NULL;
	return ret;
}

/* Called before the CQ is destroyed. */
void verbs_flush_close(struct verbs_state *s)
{
	struct verbs_flush *f = &s->fl;

	if (f->qp)
		ibv_destroy_qp(f->qp);
	if (f->mr)
		ibv_dereg_mr(f->mr);
	free(f->buf);
	free(f->held);
	f->qp = NULL;
	f->mr = NULL;
	f->buf = NULL;
	f->held = NULL;
}

int verbs_flush_post(struct verbs_state *s)
{
	struct verbs_flush *f = &s->fl;
	struct ibv_send_wr *bad;
	int e;

	if (f->posted < f->head)
		f->posted = f->head;
	/* stop only at a READ not yet posted: it holds head back, so posted >= head stays */
	while (f->posted < f->tail) {
		struct verbs_held *h = &f->held[f->posted % f->cap];
		struct ibv_sge sge = {
		    .addr = (uintptr_t)f->buf,
		    .length = h->rlen,
		    .lkey = f->mr->lkey,
		};
		struct ibv_send_wr wr = {
		    .wr_id = WRID(WR_FLUSH, h->c.peer, 0, 0),
		    .sg_list = &sge,
		    .num_sge = 1,
		    .opcode = IBV_WR_RDMA_READ,
		    .send_flags = IBV_SEND_SIGNALED,
		    .wr.rdma = {.remote_addr = h->raddr, .rkey = h->rkey},
		};

		if (h->read) {
			if (f->sq_used >= f->depth)
				break;
			e = ibv_post_send(f->qp, &wr, &bad);
			if (e) {
				log_err(LOG_TRANSPORT,
					"ibv_post_send flush rdma read peer=%d qpn=0x%x: %s",
					h->c.peer, f->qp->qp_num, strerror(e));
				s->fatal = -EIO;
				return -e;
			}
			f->sq_used++;
		}
		f->posted++;
	}
	return 0;
}

/* Hand out the held completions whose READs (and all before them) completed. */
static void release(struct verbs_state *s)
{
	struct verbs_flush *f = &s->fl;

	while (f->head < f->tail && f->held[f->head % f->cap].seq <= f->reads_done) {
		const struct tp_completion *c = &f->held[f->head % f->cap].c;

		verbs_done_push(s, c->cookie, c->status, c->peer, c->len, false);
		f->head++;
	}
}

int verbs_recv_complete(struct verbs_state *s, const struct verbs_rreq *r, int peer, int status,
			size_t len)
{
	struct verbs_flush *f = &s->fl;
	bool read = !status && r->mr->flush && r->mr->len && f->qp;
	struct verbs_held *h;

	if (!read && f->head == f->tail) {
		verbs_done_push(s, r->cookie, status, peer, len, false);
		return 0;
	}
	if (f->tail - f->head >= f->cap) {
		/* check_post counts held completions: this cannot fill */
		log_err(LOG_TRANSPORT, "verbs %s flush peer=%d: more than %llu held receives",
			s->dev.name, peer, (unsigned long long)f->cap);
		return -EPROTO;
	}
	h = &f->held[f->tail % f->cap];
	*h = (struct verbs_held){
	    .c = {.cookie = r->cookie, .status = status, .peer = peer, .len = len},
	    .read = read,
	};
	if (read) {
		/* the received bytes themselves when they are long enough, else the region */
		size_t off = r->off + VERBS_FLUSH_BYTES <= r->mr->len ? r->off : 0;

		h->raddr = (uintptr_t)r->mr->addr + off;
		h->rkey = r->mr->mr->rkey;
		h->rlen = (uint32_t)GS_MIN(r->mr->len, (size_t)VERBS_FLUSH_BYTES);
		f->reads_enq++;
	}
	h->seq = f->reads_enq;
	f->tail++;
	return verbs_flush_post(s);
}

int verbs_flush_wc(struct verbs_state *s, const struct ibv_wc *wc)
{
	struct verbs_flush *f = &s->fl;

	if (wc->status != IBV_WC_SUCCESS) {
		log_err(LOG_TRANSPORT,
			"verbs %s flush rdma read peer=%d qpn=0x%x: %s (vendor_err 0x%x)",
			s->dev.name, WRID_PEER(wc->wr_id), wc->qp_num,
			ibv_wc_status_str(wc->status), wc->vendor_err);
		return -EIO;
	}
	f->sq_used--;
	f->reads_done++; /* one QP: READs complete in the order they were posted */
	release(s);
	return verbs_flush_post(s);
}
