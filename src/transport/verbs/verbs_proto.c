/*
 * The verbs data path shared by ib_ops and roce_ops: receiver-driven, zero-copy RDMA
 * WRITE WITH IMMEDIATE straight into the receiver's registered buffer.
 *
 * Exchange for one message (peer A sends tag T to peer B), all on RC QPs of the pair:
 *   1. B post_recv(A, T, mr, off, len): B allocates request rid and SENDs A a CTS control
 *      message {T, rid, addr, rkey, len} on QP 0 (inline when the QP allows).
 *   2. A post_send(B, T, ...) and the CTS for T meet, in either order (a CTS that arrives
 *      first is stashed; a send posted first waits); matching is FIFO per (peer, tag).
 *   3. A writes the bytes with RDMA WRITE WITH IMM, split into stripes of at most the
 *      port's max message size and striped round-robin over qps_per_peer QPs; every
 *      stripe's immediate is [31] mismatch | [30:24] credits | [23:0] rid.
 *   4. B's receive completes when the immediates have brought len bytes; A's send
 *      completes when all its stripe writes completed. Lengths that differ: A writes one
 *      0-byte write with the mismatch bit and both sides complete with -EMSGSIZE.
 * Credits: every QP pre-posts qp_depth receive buffers; each CTS, CREDIT and stripe
 * consumes one at the peer. A sender holds cred[q] (peer buffers it may still consume)
 * and keeps the last one for a CREDIT message; the receiver reposts at once and returns
 * them piggybacked (CTS header, immediate bits) or, past qp_depth/2 owed, in a CREDIT.
 * So no receive queue overflows and RNR never happens in steady state.
 * Receive flush (GPUDirect RDMA before Hopper; env->gdr_flush for MEM_CUDA regions, or
 * GRADSYNC_VERBS_FLUSH=1 for every region), local to B, nothing changes on the wire to A:
 *   5. when step 4 completes a receive into a flushed region, B posts an RDMA READ of
 *      4 bytes of that region (its own rkey) into a registered host buffer on a QP
 *      connected to itself (own QPN, LID/GID, port), as NCCL's ncclIbIflush. The READ
 *      reaches the GPU's memory through PCIe only after the NIC's earlier writes, so its
 *      completion proves the data visible to the GPU.
 *   6. B's poll() returns that receive only when its READ has completed; receive
 *      completions behind a pending READ (flushed or not) wait in one FIFO, so the
 *      order of completions is kept. A READ error is a completion error (-EIO).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "transport/verbs/verbs_priv.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"

#define POLL_BATCH 32

struct verbs_peer *verbs_peer_of(struct verbs_state *s, int peer)
{
	if (peer < 0 || peer >= s->env->nranks)
		return NULL;
	return s->peers[peer];
}

void verbs_done_push(struct verbs_state *s, uint64_t cookie, int status, int peer, size_t len,
		     bool is_send)
{
	struct tp_completion *c = &s->done[(s->done_head + s->done_n) % s->done_cap];

	c->cookie = cookie;
	c->status = status;
	c->peer = peer;
	c->len = len;
	c->is_send = is_send;
	s->done_n++;
	if (is_send)
		s->st.bytes_sent += status ? 0 : len;
	else
		s->st.bytes_recv += status ? 0 : len;
}

static bool can_send(const struct verbs_state *s, const struct verbs_peer *pp, int q,
		     bool credit_msg)
{
	return pp->sq_used[q] < s->depth && pp->cred[q] > (credit_msg ? 0 : 1);
}

static int take_owed(struct verbs_peer *pp, int q, int max)
{
	int n = GS_MIN(pp->owed[q], max);

	pp->owed[q] -= n;
	return n;
}

static int post_wr(struct verbs_state *s, int peer, int q, struct ibv_send_wr *wr)
{
	struct verbs_peer *pp = s->peers[peer];
	struct ibv_send_wr *bad;
	int e = ibv_post_send(pp->qp[q], wr, &bad);

	if (e) {
		log_err(LOG_TRANSPORT, "ibv_post_send %s peer=%d qpn=0x%x: %s",
			wr->opcode == IBV_WR_SEND ? "control" : "rdma write-with-imm", peer,
			pp->qp[q]->qp_num, strerror(e));
		s->fatal = -EIO;
		return -e;
	}
	pp->sq_used[q]++;
	pp->cred[q]--;
	return 0;
}

static int send_ctrl(struct verbs_state *s, int peer, int q, const struct verbs_msg *m)
{
	struct verbs_peer *pp = s->peers[peer];
	struct verbs_msg *buf = &pp->txbuf[q * s->depth + pp->txnext[q]];
	struct ibv_sge sge = {
	    .addr = (uintptr_t)buf,
	    .length = sizeof(*buf),
	    .lkey = s->ctrl_mr->lkey,
	};
	struct ibv_send_wr wr = {
	    .wr_id = WRID(WR_CTRL, peer, q, 0),
	    .sg_list = &sge,
	    .num_sge = 1,
	    .opcode = IBV_WR_SEND,
	    .send_flags = IBV_SEND_SIGNALED,
	};

	/* the buffer was last used depth control sends ago: that send has completed */
	pp->txnext[q] = (pp->txnext[q] + 1) % s->depth;
	*buf = *m;
	if (s->max_inline >= sizeof(*buf))
		wr.send_flags |= IBV_SEND_INLINE;
	return post_wr(s, peer, q, &wr);
}

/* Send queued CTS of peer while credits allow (CTS always travel on QP 0). */
int verbs_flush_cts(struct verbs_state *s, int peer)
{
	struct verbs_peer *pp = s->peers[peer];
	int ret;

	while (pp->ctsq_head != pp->ctsq_tail && can_send(s, pp, 0, false)) {
		uint32_t i = pp->ctsq[pp->ctsq_head % VERBS_REQ_MAX];
		struct verbs_rreq *r = &pp->rreq[i];
		struct verbs_msg m = {
		    .type = VMSG_CTS,
		    .rid = r->gen << VERBS_RID_IDX_BITS | i,
		    .tag = r->tag,
		    .addr = (uintptr_t)r->mr->addr + r->off,
		    .len = r->len,
		    .rkey = r->mr->mr->rkey,
		};

		m.credits = take_owed(pp, 0, 255);
		ret = send_ctrl(s, peer, 0, &m);
		if (ret)
			return ret;
		pp->ctsq_head++;
	}
	return 0;
}

/* Return owed credits on QPs past half the depth; retried from poll when blocked. */
static int flush_credits(struct verbs_state *s, int peer)
{
	struct verbs_peer *pp = s->peers[peer];
	int q, ret;

	for (q = 0; q < s->nqp; q++) {
		while (pp->owed[q] >= s->depth / 2) {
			struct verbs_msg m = {.type = VMSG_CREDIT};

			if (!can_send(s, pp, q, true)) {
				s->credit_pending = true;
				break;
			}
			m.credits = take_owed(pp, q, 255);
			ret = send_ctrl(s, peer, q, &m);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * Bytes per RDMA WRITE of a send of len bytes: striped over the peer's QPs (page-aligned
 * stripes) when there are several, bounded by the device's largest write. Not the
 * executor's [collective] chunk_size: that cut the message before it got here.
 */
static size_t qp_stripe(const struct verbs_state *s, size_t len)
{
	size_t c = len;

	if (s->nqp > 1 && len >= (size_t)s->nqp * 4096)
		c = GS_ALIGN_UP(GS_DIV_ROUND_UP(len, (size_t)s->nqp), 4096);
	return GS_MIN(c, s->max_write);
}

/* Post as many stripe writes of sreq as queues and credits allow; true when all posted. */
static int issue_send(struct verbs_state *s, int peer, struct verbs_sreq *r, bool *all)
{
	struct verbs_peer *pp = s->peers[peer];
	size_t stripe = qp_stripe(s, r->len);
	int ret;

	while (!r->all_issued) {
		int q = r->next_qp;
		size_t n = r->mismatch ? 0 : GS_MIN(stripe, r->len - r->issued);
		uint32_t imm;
		struct ibv_sge sge = {
		    .addr = (uintptr_t)r->mr->addr + r->off + r->issued,
		    .length = n,
		    .lkey = r->mr->mr->lkey,
		};
		struct ibv_send_wr wr = {
		    .wr_id = WRID(WR_DATA, peer, q, r - pp->sreq),
		    .sg_list = &sge,
		    .num_sge = n ? 1 : 0,
		    .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		    .send_flags = IBV_SEND_SIGNALED,
		    .wr.rdma = {.remote_addr = r->raddr + r->issued, .rkey = r->rkey},
		};

		if (!can_send(s, pp, q, false))
			break;
		if (n && n <= s->max_inline && n <= s->env->opts->inline_threshold)
			wr.send_flags |= IBV_SEND_INLINE;
		imm = r->rid | (uint32_t)take_owed(pp, q, VERBS_CREDIT_MAX) << IMM_CRED_SHIFT;
		if (r->mismatch)
			imm |= IMM_ERR;
		wr.imm_data = htonl(imm);
		ret = post_wr(s, peer, q, &wr);
		if (ret)
			return ret;
		r->issued += n;
		r->writes_out++;
		r->next_qp = (q + 1) % s->nqp;
		if (r->mismatch || r->issued == r->len)
			r->all_issued = true;
	}
	*all = r->all_issued;
	return 0;
}

void verbs_activate(struct verbs_state *s, struct verbs_sreq *r, const struct verbs_msg *m)
{
	r->matched = true;
	r->raddr = m->addr;
	r->rkey = m->rkey;
	r->rid = m->rid;
	r->mismatch = m->len != r->len;
	fifo_push(&s->active, &r->active);
}

/* Walk the active sends in order; those fully posted leave the list. */
int verbs_progress_sends(struct verbs_state *s)
{
	struct fifo_link *x = s->active.head, *prev = NULL, *next;
	bool all;
	int ret;

	for (; x; x = next) {
		struct verbs_sreq *r = fifo_entry(x, struct verbs_sreq, active);

		next = x->next;
		ret = issue_send(s, r->peer, r, &all);
		if (ret)
			return ret;
		if (all)
			fifo_unlink(&s->active, prev, x);
		else
			prev = x;
	}
	return 0;
}

/* FIFO match: the oldest unmatched send (or stashed CTS) with this tag. */
static int find_sreq(struct verbs_peer *pp, uint64_t tag)
{
	uint64_t best_seq = UINT64_MAX;
	int i, best = -1;

	for (i = 0; i < VERBS_REQ_MAX; i++) {
		const struct verbs_sreq *r = &pp->sreq[i];

		if (r->used && !r->matched && r->tag == tag && pp->sreq_seq[i] < best_seq) {
			best = i;
			best_seq = pp->sreq_seq[i];
		}
	}
	return best;
}

int verbs_find_cts(struct verbs_peer *pp, uint64_t tag)
{
	uint64_t best_seq = UINT64_MAX;
	int i, best = -1;

	for (i = 0; i < VERBS_REQ_MAX; i++) {
		if (pp->cts[i].used && pp->cts[i].m.tag == tag && pp->cts_seq[i] < best_seq) {
			best = i;
			best_seq = pp->cts_seq[i];
		}
	}
	return best;
}

static int handle_ctrl(struct verbs_state *s, int peer, int q, const struct verbs_msg *m)
{
	struct verbs_peer *pp = s->peers[peer];
	int i;

	pp->cred[q] += m->credits;
	if (m->type == VMSG_CREDIT)
		return 0;
	if (m->type != VMSG_CTS) {
		log_err(LOG_TRANSPORT, "verbs peer=%d qpn=0x%x: unknown control message type %u",
			peer, pp->qp[q]->qp_num, m->type);
		return -EPROTO;
	}
	i = find_sreq(pp, m->tag);
	if (i >= 0) {
		verbs_activate(s, &pp->sreq[i], m);
		return 0;
	}
	for (i = 0; i < VERBS_REQ_MAX && pp->cts[i].used; i++)
		;
	if (i == VERBS_REQ_MAX) {
		/* the receiver posts at most VERBS_REQ_MAX receives: this cannot fill */
		log_err(LOG_TRANSPORT, "verbs peer=%d: more than %d early clear-to-send", peer,
			VERBS_REQ_MAX);
		return -EPROTO;
	}
	pp->cts[i].m = *m;
	pp->cts[i].used = true;
	pp->cts_seq[i] = pp->seq++;
	return 0;
}

static int handle_imm(struct verbs_state *s, int peer, int q, uint32_t imm, uint32_t bytes)
{
	struct verbs_peer *pp = s->peers[peer];
	uint32_t rid = imm & IMM_RID_MASK, idx = rid & (VERBS_REQ_MAX - 1);
	struct verbs_rreq *r = &pp->rreq[idx];

	pp->cred[q] += (imm >> IMM_CRED_SHIFT) & VERBS_CREDIT_MAX;
	if (!r->used || r->gen != rid >> VERBS_RID_IDX_BITS) {
		log_err(LOG_TRANSPORT, "verbs peer=%d qpn=0x%x: data for unknown receive rid 0x%x",
			peer, pp->qp[q]->qp_num, rid);
		return -EPROTO;
	}
	r->got += bytes;
	r->seen = true;
	if (imm & IMM_ERR) {
		log_err(LOG_TRANSPORT, "verbs peer=%d: tag 0x%llx length mismatch (receive %zu)",
			peer, (unsigned long long)r->tag, r->len);
		r->used = false;
		return verbs_recv_complete(s, r, peer, -EMSGSIZE, 0);
	}
	if (r->got >= r->len) {
		r->used = false;
		return verbs_recv_complete(s, r, peer, 0, r->len);
	}
	return 0;
}

static const char *wr_kind_name(int kind)
{
	switch (kind) {
	case WR_RECV:
		return "receive";
	case WR_CTRL:
		return "control send";
	default:
		return "rdma write-with-imm";
	}
}

static int handle_wc(struct verbs_state *s, const struct ibv_wc *wc)
{
	int kind = WRID_KIND(wc->wr_id), peer = WRID_PEER(wc->wr_id), q = WRID_QP(wc->wr_id);
	uint32_t idx = WRID_IDX(wc->wr_id);
	struct verbs_peer *pp = verbs_peer_of(s, peer);
	struct verbs_msg m;
	int ret;

	if (kind == WR_FLUSH)
		return verbs_flush_wc(s, wc);
	if (wc->status != IBV_WC_SUCCESS || !pp) {
		const char *hint = verbs_wc_hint(wc->status);

		/* one line with what NCCL's names too: peer, QP, status, vendor code, the hint */
		log_err(LOG_TRANSPORT, "verbs %s port %d %s peer=%d qpn=0x%x: %s (status %d, vendor_err 0x%x)%s%s",
			s->dev.name, s->dev.port, wr_kind_name(kind), peer, wc->qp_num,
			pp ? ibv_wc_status_str(wc->status) : "completion for an unknown peer",
			wc->status, wc->vendor_err, hint[0] ? ": " : "", hint);
		return -EIO;
	}
	switch (kind) {
	case WR_RECV:
		if (wc->opcode == IBV_WC_RECV)
			m = pp->ring[q * s->depth + idx];
		/* repost first: the buffer is copied and credits go back with the next message */
		ret = verbs_post_ctrl_recv(s, peer, q, idx);
		if (ret)
			return ret;
		pp->owed[q]++;
		if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM)
			ret = handle_imm(s, peer, q, ntohl(wc->imm_data), wc->byte_len);
		else
			ret = handle_ctrl(s, peer, q, &m);
		if (ret)
			return ret;
		if (q == 0)
			ret = verbs_flush_cts(s, peer);
		if (!ret)
			ret = flush_credits(s, peer);
		return ret;
	case WR_CTRL:
		pp->sq_used[q]--;
		pp->sq_comps[q]++;
		return 0;
	case WR_DATA: {
		struct verbs_sreq *r = &pp->sreq[idx];

		pp->sq_used[q]--;
		pp->sq_comps[q]++;
		if (--r->writes_out == 0 && r->all_issued) {
			verbs_done_push(s, r->cookie, r->mismatch ? -EMSGSIZE : 0, peer,
					r->mismatch ? 0 : r->len, true);
			r->used = false;
		}
		return 0;
	}
	default:
		log_err(LOG_TRANSPORT, "verbs peer=%d: completion with unknown wr_id 0x%llx", peer,
			(unsigned long long)wc->wr_id);
		return -EPROTO;
	}
}

/* Poll the CQ dry (bounded); returns completions handled or -errno. */
int verbs_drain(struct verbs_state *s)
{
	struct ibv_wc wc[POLL_BATCH];
	int n, i, ret, total = 0;

	do {
		n = ibv_poll_cq(s->cq, POLL_BATCH, wc);
		if (n < 0) {
			log_err(LOG_TRANSPORT, "ibv_poll_cq %s: %d", s->dev.name, n);
			return -EIO;
		}
		for (i = 0; i < n; i++) {
			ret = handle_wc(s, &wc[i]);
			if (ret)
				return ret;
		}
		total += n;
	} while (n == POLL_BATCH && total < 8 * POLL_BATCH);
	return total;
}

/*
 * The send queue watchdog (verbs_policy.h): a look at every QP; -ETIMEDOUT, logged, when
 * one has held work past verbs_lost_after_ns without a completion. A dead peer or link
 * ends in IBV_WC_RETRY_EXC_ERR well before that; the one wait without end RC allows is
 * RNR (rnr_retry 7, as NCCL), which our credits rule out (a send is posted only with a
 * credit, so the peer has a receive for it). So the device lost the work, and the error
 * line says so rather than leaving the job to time out on a peer that waits too; the
 * device's counters (rxe: rcvd_rnr_err) tell the RNR case apart.
 */
int verbs_watch_queues(struct verbs_state *s, uint64_t now)
{
	uint64_t lost_after = verbs_lost_after_ns(s->rc_budget_ns);

	for (int p = 0; p < s->env->nranks; p++) {
		struct verbs_peer *pp = s->peers[p];

		for (int q = 0; pp && q < pp->nqp; q++) {
			uint64_t stuck = verbs_qwatch_look(&pp->watch[q], pp->sq_comps[q],
							   pp->sq_used[q], now);

			if (stuck <= lost_after)
				continue;
			log_err(LOG_TRANSPORT,
				"verbs %s port %d peer=%d qpn=0x%x: the device lost %d send work request(s): neither a completion nor an error in %.1f s, twice RC's retry budget (%d tries of %.2f s); else the peer answers RNR without end (rnr_retry 7), a credit fault",
				s->dev.name, s->dev.port, p, pp->qp[q]->qp_num, pp->sq_used[q],
				stuck / 1e9, VERBS_QP_RETRY + 1,
				s->rc_budget_ns / 1e9 / (VERBS_QP_RETRY + 1));
			return -ETIMEDOUT;
		}
	}
	return 0;
}

int verbs_pending(struct verbs_state *s, int peer, char *buf, size_t len)
{
	struct verbs_peer *pp = verbs_peer_of(s, peer);
	int unmatched = 0, blocked = 0, writes = 0, recvs = 0, cts_queued, partial = 0, cts = 0;
	uint64_t now = time_now_ns();
	size_t n = 0;

	if (!pp)
		return -ENOENT;
	for (int i = 0; i < VERBS_REQ_MAX; i++) {
		const struct verbs_sreq *r = &pp->sreq[i];

		if (r->used) {
			unmatched += !r->matched;
			blocked += r->matched && !r->all_issued;
			writes += r->writes_out;
		}
		if (pp->rreq[i].used) {
			recvs++;
			partial += pp->rreq[i].seen;
		}
		cts += pp->cts[i].used;
	}
	cts_queued = (int)(pp->ctsq_tail - pp->ctsq_head);
	buf[0] = '\0';
	str_appendf(buf, len, &n,
		    "sends: %d waiting for the peer's clear-to-send, %d for credits or queue room, %d writes in flight; receives: %d posted (%d clear-to-send not yet sent, %d partly arrived); %d early clear-to-send",
		    unmatched, blocked, writes, recvs, cts_queued, partial, cts);
	for (int q = 0; q < pp->nqp; q++) {
		uint64_t stuck = verbs_qwatch_stuck(&pp->watch[q], pp->sq_comps[q], pp->sq_used[q],
						    now);

		str_appendf(buf, len, &n, "; qpn 0x%x: %d outstanding, credits %d, owed %d",
			    pp->qp[q]->qp_num, pp->sq_used[q], pp->cred[q], pp->owed[q]);
		if (stuck)
			str_appendf(buf, len, &n, ", no completion for %.1f s%s", stuck / 1e9,
				    stuck > s->rc_budget_ns
					? " (past RC's retry budget: the device lost them, or RNR)"
					: "");
	}
	return 0;
}

int verbs_progress(struct verbs_state *s)
{
	int p, ret;

	if (s->credit_pending) {
		s->credit_pending = false;
		for (p = 0; p < s->env->nranks; p++) {
			if (!s->peers[p])
				continue;
			ret = flush_credits(s, p);
			if (!ret)
				ret = verbs_flush_cts(s, p);
			if (ret)
				return ret;
		}
	}
	ret = verbs_flush_post(s);
	if (ret)
		return ret;
	return verbs_progress_sends(s);
}
