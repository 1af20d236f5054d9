/*
 * Point-to-point loops between two ranks (0 and 1, or any pair for op = pairwise)
 * over the transport interface, for op = write_bw and write_lat (contract in exec.h).
 * Below, "rank 0" is the pair's sender (src) and "rank 1" its receiver (dst).
 *
 * write_bw exchange (tags: comm_tag(seq, i, kind, 0), kind 0 data, 1 ready, 2 ack):
 *   1. rank 1 posts `window` receives, then sends "ready" (1 byte);
 *   2. rank 0 receives "ready", starts its clock, streams `iterations` data messages,
 *      keeping up to `window` sends outstanding; rank 1 reposts as receives complete;
 *   3. rank 1, after the last data receive, sends "ack"; rank 0 stops its clock on it.
 * write_lat exchange:
 *   1. rank 1 posts receive 0, sends "ready"; rank 0 receives it and starts its clock;
 *   2. for each i: rank 0 posts receive i and sends i; rank 1 receives i, posts receive
 *      i+1 and sends i back; rank 0 waits for receive i before the next send.
 * Data messages use bytes [0, size) of the buffer, "ready" and "ack" its last byte, so
 * the buffer must be at least size + 1 bytes.
 */
#include <errno.h>
#include <string.h>

#include "coll/comm.h"
#include "util/log.h"
#include "util/timeutil.h"

enum { P2P_DATA = 0, P2P_READY, P2P_ACK };

struct p2p {
	struct coll_comm *c;
	const struct coll_buf *buf;
	struct transport *t;
	struct tp_mr *mr;
	const char *op;
	int peer;
	uint32_t seq;
	uint64_t sends_done;
	uint64_t recvs_done;
	uint64_t idle_since;
	uint32_t spins;
	struct act_mark mark; /* the activity to return to at p2p_end */
};

static uint64_t p2p_cookie(int kind, uint64_t i, bool is_send)
{
	return ((uint64_t)is_send << 63) | ((uint64_t)kind << 56) | i;
}

/* One poll round; counts completions, fails on error, abort or the no-progress timeout. */
static int p2p_poll(struct p2p *p, const char *waiting)
{
	struct tp_completion comps[COMM_POLL_BATCH];
	int n = p->t->ops->poll(p->t, comps, COMM_POLL_BATCH), ret;

	if (n < 0) {
		log_err(LOG_COLL, "%s poll %s peer=%d: %s", p->t->ops->name, p->op, p->peer,
			strerror(-n));
		return n;
	}
	for (int i = 0; i < n; i++) {
		if (comps[i].status) {
			log_err(LOG_COLL, "%s seq=%u: %s peer %d failed: %s", p->op, p->seq,
				comps[i].is_send ? "send to" : "recv from", p->peer,
				strerror(-comps[i].status));
			return comps[i].status;
		}
		if (comps[i].is_send)
			p->sends_done++;
		else
			p->recvs_done++;
	}
	if (n) {
		p->idle_since = 0;
		p->spins = 0;
		return 0;
	}
	ret = comm_idle(p->c, &p->idle_since, &p->spins);
	if (ret) {
		char why[512];

		log_err(LOG_COLL, "%s seq=%u: %s waiting on %s peer %d (%llu sent, %llu received)%s",
			p->op, p->seq, strerror(-ret), waiting, p->peer,
			(unsigned long long)p->sends_done, (unsigned long long)p->recvs_done,
			comm_pending(p->c, p->peer, why, sizeof(why)));
	}
	return ret;
}

/* One post attempt: 0, -EAGAIN (left to the caller), or a logged fatal error. */
static int p2p_try_post(struct p2p *p, bool is_send, int kind, uint64_t i, size_t len)
{
	uint64_t tag = comm_tag(p->seq, i, (uint32_t)kind, 0);
	size_t off = kind == P2P_DATA ? 0 : p->buf->bytes - 1;
	int ret;

	if (is_send)
		ret = p->t->ops->post_send(p->t, p->peer, tag, p->mr, off, len,
					   p2p_cookie(kind, i, true));
	else
		ret = p->t->ops->post_recv(p->t, p->peer, tag, p->mr, off, len,
					   p2p_cookie(kind, i, false));
	if (ret && ret != -EAGAIN)
		log_err(LOG_COLL, "%s %s %s peer=%d: %s", p->t->ops->name,
			is_send ? "post_send" : "post_recv", p->op, p->peer, strerror(-ret));
	return ret;
}

/* Post, polling while the transport answers -EAGAIN. */
static int p2p_post(struct p2p *p, bool is_send, int kind, uint64_t i, size_t len)
{
	int ret;

	while ((ret = p2p_try_post(p, is_send, kind, i, len)) == -EAGAIN) {
		ret = p2p_poll(p, is_send ? "send credits" : "receive slots");
		if (ret)
			return ret;
	}
	return ret;
}

/* Keep up to window receives posted (as many as the transport takes now). */
static int p2p_fill_recvs(struct p2p *p, uint64_t *posted, uint64_t n, int window, size_t len)
{
	while (*posted < n && *posted - p->recvs_done < (uint64_t)window) {
		int ret = p2p_try_post(p, false, P2P_DATA, *posted, len);

		if (ret == -EAGAIN)
			return 0;
		if (ret)
			return ret;
		(*posted)++;
	}
	return 0;
}

static int p2p_wait(struct p2p *p, uint64_t sends, uint64_t recvs, const char *waiting)
{
	while (p->sends_done < sends || p->recvs_done < recvs) {
		int ret = p2p_poll(p, waiting);

		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Check the pair and, when this rank is one of its two, mark the activity (ACT_P2P with
 * the peer) until p2p_end. 1: this rank sits the pair out (nothing to end); -EINVAL.
 */
static int p2p_begin(struct p2p *p, struct coll_comm *c, const struct coll_buf *buf,
		     uint64_t bytes, int iterations, const char *op, int src, int dst)
{
	memset(p, 0, sizeof(*p));
	p->c = c;
	p->op = op;
	p->seq = c->seq++; /* every rank counts every pair, so sequence numbers agree */
	if (src < 0 || dst < 0 || src == dst || src >= c->nranks || dst >= c->nranks) {
		log_err(LOG_COLL, "%s: pair %d -> %d of %d ranks", op, src, dst, c->nranks);
		return -EINVAL;
	}
	if (c->rank != src && c->rank != dst)
		return 1;
	/* the ready/ack byte lives past the data: the buffer needs bytes + 1 */
	if (!bytes || bytes >= buf->bytes || iterations < 1) {
		log_err(LOG_COLL, "%s: %llu bytes x %d iterations do not fit a %llu-byte buffer (needs one byte more for ready/ack)",
			op, (unsigned long long)bytes, iterations, (unsigned long long)buf->bytes);
		return -EINVAL;
	}
	p->buf = buf;
	p->peer = c->rank == src ? dst : src;
	p->t = c->peer_tp[p->peer];
	p->mr = buf->mr[c->peer_ti[p->peer]];
	act_enter(c->act, ACT_P2P, p->peer, p->seq, time_now_ns(), &p->mark);
	return 0;
}

static void p2p_end(struct p2p *p)
{
	act_leave(p->c->act, &p->mark, time_now_ns());
}

/* Step 1 of both exchanges on the sender: the receiver's "ready" (its receives are up). */
static int p2p_wait_ready(struct p2p *p)
{
	int ret = p2p_post(p, false, P2P_READY, 0, 1);

	return ret ? ret : p2p_wait(p, 0, 1, "ready");
}

int coll_write_bw_pair(struct coll_comm *c, const struct coll_buf *buf, uint64_t bytes,
		       int iterations, int window, int src, int dst, uint64_t *ns)
{
	uint64_t n, posted = 0, t0;
	struct p2p p;
	int ret = p2p_begin(&p, c, buf, bytes, iterations, "write_bw", src, dst);

	*ns = 0;
	if (ret)
		return ret > 0 ? 0 : ret;
	n = (uint64_t)iterations;
	if (window < 1)
		window = 1;
	if (c->rank == src) {
		ret = p2p_wait_ready(&p);
		t0 = time_now_ns();
		while (!ret && p.sends_done < n) {
			while (!ret && posted < n && posted - p.sends_done < (uint64_t)window)
				ret = p2p_post(&p, true, P2P_DATA, posted++, bytes);
			if (!ret)
				ret = p2p_poll(&p, "send completions");
		}
		if (!ret)
			ret = p2p_post(&p, false, P2P_ACK, 0, 1);
		if (!ret)
			ret = p2p_wait(&p, n, 2, "ack");
		*ns = time_now_ns() - t0;
		goto out;
	}
	ret = p2p_fill_recvs(&p, &posted, n, window, bytes);
	if (!ret)
		ret = p2p_post(&p, true, P2P_READY, 0, 1);
	t0 = time_now_ns();
	while (!ret && p.recvs_done < n) {
		ret = p2p_poll(&p, "data");
		if (!ret)
			ret = p2p_fill_recvs(&p, &posted, n, window, bytes);
	}
	*ns = time_now_ns() - t0;
	if (!ret)
		ret = p2p_post(&p, true, P2P_ACK, 0, 1);
	if (!ret)
		ret = p2p_wait(&p, 2, n, "ack completion");
out:
	p2p_end(&p);
	return ret;
}

int coll_write_lat_pair(struct coll_comm *c, const struct coll_buf *buf, uint64_t bytes,
			int iterations, int src, int dst, uint64_t *ns)
{
	uint64_t n, t0;
	struct p2p p;
	int ret = p2p_begin(&p, c, buf, bytes, iterations, "write_lat", src, dst);

	*ns = 0;
	if (ret)
		return ret > 0 ? 0 : ret;
	n = (uint64_t)iterations;
	if (c->rank == src) {
		ret = p2p_wait_ready(&p);
		t0 = time_now_ns();
		for (uint64_t i = 0; i < n && !ret; i++) {
			ret = p2p_post(&p, false, P2P_DATA, i, bytes);
			if (!ret)
				ret = p2p_post(&p, true, P2P_DATA, i, bytes);
			if (!ret)
				ret = p2p_wait(&p, 0, i + 2, "pong");
		}
		if (!ret)
			ret = p2p_wait(&p, n, n + 1, "send completions");
		*ns = time_now_ns() - t0;
		goto out;
	}
	ret = p2p_post(&p, false, P2P_DATA, 0, bytes);
	if (!ret)
		ret = p2p_post(&p, true, P2P_READY, 0, 1);
	t0 = time_now_ns();
	for (uint64_t i = 0; i < n && !ret; i++) {
		ret = p2p_wait(&p, 0, i + 1, "ping");
		if (!ret && i + 1 < n)
			ret = p2p_post(&p, false, P2P_DATA, i + 1, bytes);
		if (!ret)
			ret = p2p_post(&p, true, P2P_DATA, i, bytes);
	}
	*ns = time_now_ns() - t0;
	if (!ret)
		ret = p2p_wait(&p, n + 1, n, "send completions");
out:
	p2p_end(&p);
	return ret;
}

int coll_write_bw(struct coll_comm *c, const struct coll_buf *buf, uint64_t bytes, int iterations,
		  int window, uint64_t *ns)
{
	if (c->nranks < 2) {
		*ns = 0;
		return 0;
	}
	return coll_write_bw_pair(c, buf, bytes, iterations, window, 0, 1, ns);
}

int coll_write_lat(struct coll_comm *c, const struct coll_buf *buf, uint64_t bytes, int iterations,
		   uint64_t *ns)
{
	if (c->nranks < 2) {
		*ns = 0;
		return 0;
	}
	return coll_write_lat_pair(c, buf, bytes, iterations, 0, 1, ns);
}
