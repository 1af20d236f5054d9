/*
 * tcp transport matching: what each frame of the data path means, on the side that
 * posts and on the side that reads it (tcp_progress.c moves the bytes).
 *
 * Wire protocol on every stream after the handshake (tcp_conn.c), all fields little
 * endian host order (both ends run the same binary on the same architecture). Every
 * header carries `credit`: eager window bytes its writer consumed since it last said so.
 * Messages up to TCP_EAGER_MAX (eager):
 *   1. the sender writes EAGER {tag, len} + payload on stream 0 at once, if the
 *      receiver's window (TCP_EAGER_WINDOW bytes of payload + header per peer) has room
 *      for it, else the send waits, and every later eager send to that peer behind it,
 *      until credit comes; the send completes once written.
 *   2. the receiver gives it to its oldest posted receive with that tag, straight into
 *      the buffer, or keeps it in a heap buffer until that receive is posted; a receive
 *      up to the eager limit writes nothing and completes once the bytes are in.
 *   3. once the bytes reached the receive, their window bytes are owed back: in the
 *      credit field of the next frame the receiver writes to that peer (its next
 *      message, a CTS), or in CREDIT {} once TCP_CREDIT_RETURN bytes are owed (a flow
 *      with nothing going back). The receiver fails the stream (-EPROTO) if a peer
 *      sends past its window, so a peer's unexpected eager data never exceeds it.
 * Larger messages (rendezvous):
 *   1. the receiver posts recv -> CTS {rid, tag, len}: "rid is ready for len bytes",
 *      always on stream 0 so CTS keep the receiver's post order
 *   2. the sender matches CTS to its send with that tag (FIFO per (peer, tag)); a send
 *      whose CTS has not come TCP_RTS_AFTER_NS after its post writes RTS {tag, len} on
 *      the stream its first chunk will take (so the receiver sees it before that chunk
 *      completes the receive);
 *      equal lengths: DATA {rid, tag, off, len} + payload chunks striped over the
 *      streams, written straight from the send buffer;
 *      different lengths: MISMATCH {rid, tag, len = sender's length}; both -EMSGSIZE.
 *   3. receiver looks rid up (no search), reads payload straight into the posted
 *      buffer at off, and completes once all chunks landed and its CTS is written.
 * Lengths across the eager limit (the receiver detects them, matching by tag in order):
 *   - an EAGER frame meeting a receive of another length fails the receive (-EMSGSIZE)
 *     and the receiver writes REFUSE {rid of its CTS or TCP_NO_RID, tag, off = EAGER,
 *     len = its length}: the send had completed when written, so the sender logs it
 *     and drops that CTS.
 *   - an RTS meeting a receive up to the eager limit (which sends no CTS) fails it and
 *     writes REFUSE {tag, off = RTS, len}: the sender fails that send with -EMSGSIZE.
 *     An RTS that meets a larger receive only claims it (its CTS does the rest); one
 *     that comes before its receive is kept (no payload) until the receive is posted.
 * A small message so costs one write and no reply of its own (linear AllReduce on 4
 * ranks: 6 writes, where a CTS per message made 12); a large one is never copied twice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/tcp/tcp_priv.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

void tcp_set_fatal(struct tcp_priv *tp, int err)
{
	int zero = 0;

	atomic_compare_exchange_strong(&tp->fatal, &zero, err);
}

/* The predicates of the lists' matches: by tag (arg points to it), or one request. */
static bool send_has_tag(const struct fifo_link *l, const void *tag)
{
	return fifo_entry(l, struct tcp_req, link)->tag == *(const uint64_t *)tag;
}

static bool eager_has_tag(const struct fifo_link *l, const void *tag)
{
	return fifo_entry(l, struct tcp_req, elink)->tag == *(const uint64_t *)tag;
}

static bool eager_is(const struct fifo_link *l, const void *r)
{
	return fifo_entry(l, struct tcp_req, elink) == r;
}

static bool cts_has_tag(const struct fifo_link *l, const void *tag)
{
	return fifo_entry(l, struct tcp_cts, link)->tag == *(const uint64_t *)tag;
}

/* arg: a REFUSE header naming the CTS by rid and tag */
static bool cts_is(const struct fifo_link *l, const void *h)
{
	const struct tcp_cts *c = fifo_entry(l, struct tcp_cts, link);
	const struct tcp_frame_hdr *rh = h;

	return c->rid == rh->rid && c->tag == rh->tag;
}

static bool unexp_has_tag(const struct fifo_link *l, const void *tag)
{
	return fifo_entry(l, struct tcp_unexp, link)->tag == *(const uint64_t *)tag;
}

/* The oldest receive of q that may take an eager frame with tag, taken off q. */
static struct tcp_req *eager_take(struct fifo *q, uint64_t tag)
{
	struct fifo_link *l = fifo_take(q, eager_has_tag, &tag);

	return l ? fifo_entry(l, struct tcp_req, elink) : NULL;
}

static void complete(struct tcp_priv *tp, struct tcp_req *r)
{
	atomic_fetch_sub(&tp->peers[r->peer].outstanding, 1);
	pthread_mutex_lock(&tp->lock);
	fifo_push(&tp->done, &r->link);
	atomic_fetch_add(&tp->ndone, 1);
	pthread_mutex_unlock(&tp->lock);
}

static void queue_frame(struct tcp_stream *st, struct tcp_frame *f)
{
	tcp_publish(&st->unsent,
		    tcp_published(&st->unsent) + sizeof(struct tcp_frame_hdr) + f->plen);
	f->sent = 0;
	fifo_push(&st->txq, &f->link);
}

/* What an eager message takes of its receiver's window. */
static uint64_t eager_cost(uint64_t len)
{
	return len + sizeof(struct tcp_frame_hdr);
}

/* Window bytes of peer's eager messages consumed here: they ride on the next frame to
 * it (stream_write); a CREDIT frame of their own only once half the window waits. */
static void owe(struct tcp_priv *tp, int peer, uint64_t cost)
{
	struct tcp_peer *pe = &tp->peers[peer];

	pe->owed += cost;
	if (pe->owed >= TCP_CREDIT_RETURN && !pe->credit_queued) {
		pe->credit_queued = true;
		pe->credit_frame = (struct tcp_frame){.hdr = {.type = TF_CREDIT}};
		queue_frame(&pe->streams[0], &pe->credit_frame);
	}
}

/* A frame the receiver writes without a request behind it: REFUSE (freed once written). */
static void refuse(struct tcp_priv *tp, int peer, uint64_t tag, uint32_t rid, enum tcp_refused what,
		   uint64_t len)
{
	struct tcp_frame *f = malloc(sizeof(*f));

	if (!f) {
		tcp_set_fatal(tp, -ENOMEM);
		return;
	}
	*f = (struct tcp_frame){
	    .hdr = {.type = TF_REFUSE, .rid = rid, .tag = tag, .off = what, .len = len}};
	queue_frame(&tp->peers[peer].streams[0], f);
}

/*
 * The last frame of r went out. A send completes, unless it is a large one whose RTS
 * went and whose CTS has not come; a receive's frame is its CTS, and it completes once
 * its bytes are in as well: a rank must not finish a collective while a CTS its peer
 * waits for is still queued here.
 */
static void frames_written(struct tcp_priv *tp, struct tcp_req *r)
{
	if (r->kind == TR_SEND ? !r->wait_cts : r->data_in)
		complete(tp, r);
}

/* A receive has its bytes (or failed): complete once its CTS, if any, is written. */
static void recv_done(struct tcp_priv *tp, struct tcp_req *r)
{
	r->active = false;
	r->data_in = true;
	if (!r->chunks_left)
		complete(tp, r);
}

/* A frame went out whole: its request's count, or a frame without one. */
void tcp_frame_out(struct tcp_priv *tp, struct tcp_peer *pe, struct tcp_frame *f)
{
	atomic_fetch_add_explicit(&tp->bytes_sent, f->plen, memory_order_relaxed);
	if (f->req) {
		if (--f->req->chunks_left == 0)
			frames_written(tp, f->req);
	} else if (f == &pe->credit_frame) {
		pe->credit_queued = false;
	} else {
		free(f); /* a REFUSE (refuse()) */
	}
}

/* An eager send the window has room for: on stream 0, complete once written. */
static void eager_queue(struct tcp_peer *pe, struct tcp_req *r)
{
	pe->credit -= eager_cost(r->len);
	r->chunks_left = 1;
	r->frames[0] = (struct tcp_frame){
	    .hdr = {.type = TF_EAGER, .rid = 0, .tag = r->tag, .off = 0, .len = r->len},
	    .payload = r->buf,
	    .plen = r->len,
	    .req = r};
	queue_frame(&pe->streams[0], &r->frames[0]);
}

/* Credit came back: the eager sends that waited for it go, in their post order. */
static void credit_in(struct tcp_priv *tp, int peer, uint64_t credit)
{
	struct tcp_peer *pe = &tp->peers[peer];

	pe->credit += credit;
	if (pe->credit > TCP_EAGER_WINDOW) {
		log_err(LOG_TRANSPORT, "tcp recv peer=%d: %llu B of credit returned, window %u",
			peer, (unsigned long long)pe->credit, TCP_EAGER_WINDOW);
		tcp_set_fatal(tp, -EPROTO);
		return;
	}
	while (!fifo_empty(&pe->eblocked)) {
		struct tcp_req *r = fifo_entry(pe->eblocked.head, struct tcp_req, link);

		if (eager_cost(r->len) > pe->credit)
			return;
		fifo_pop(&pe->eblocked);
		eager_queue(pe, r);
	}
}

/* A matched send: stripe large payloads over all streams, small ones round-robin; the
 * first chunk of one that wrote an RTS follows it on its stream. */
static void send_start(struct tcp_priv *tp, struct tcp_req *r, uint32_t rid, uint64_t cts_len)
{
	struct tcp_peer *pe = &tp->peers[r->peer];
	int nchunks = r->len >= TCP_STRIPE_MIN ? GS_MIN(tp->nstreams, TCP_MAX_CHUNKS) : 1;
	size_t chunk = GS_ALIGN_UP(GS_DIV_ROUND_UP(r->len, (size_t)nchunks), 4096);
	size_t off = 0;

	if (r->wait_cts)
		tp->waiting_cts--;
	r->wait_cts = false;
	if (cts_len != r->len) {
		r->status = -EMSGSIZE;
		r->chunks_left++;
		r->frames[0] = (struct tcp_frame){.hdr = {.type = TF_MISMATCH,
							  .rid = rid,
							  .tag = r->tag,
							  .off = 0,
							  .len = r->len},
						  .req = r};
		queue_frame(&pe->streams[0], &r->frames[0]);
		return;
	}
	for (int i = 0; i < nchunks && (off < r->len || i == 0); i++) {
		size_t n = GS_MIN(chunk, r->len - off);
		struct tcp_frame *f = &r->frames[i];
		unsigned int s = r->rts_stream >= 0 ? (unsigned int)(r->rts_stream + i) : pe->rr++;

		*f = (struct tcp_frame){
		    .hdr = {.type = TF_DATA, .rid = rid, .tag = r->tag, .off = off, .len = n},
		    .payload = r->buf + off,
		    .plen = n,
		    .req = r};
		r->chunks_left++;
		queue_frame(&pe->streams[s % (unsigned int)tp->nstreams], f);
		off += n;
	}
}

static void handle_cts(struct tcp_priv *tp, int peer, const struct tcp_frame_hdr *h)
{
	struct tcp_peer *pe = &tp->peers[peer];
	struct fifo_link *l;
	struct tcp_cts *c;

	l = fifo_take(&pe->sends, send_has_tag, &h->tag);
	if (l) {
		send_start(tp, fifo_entry(l, struct tcp_req, link), h->rid, h->len);
		return;
	}
	/* never empty: at most TCP_NREQS receives can be posted */
	c = fifo_entry(fifo_pop(&tp->cts_free), struct tcp_cts, link);
	*c = (struct tcp_cts){.tag = h->tag, .len = h->len, .rid = h->rid};
	fifo_push(&pe->cts, &c->link);
}

static void cts_release(struct tcp_priv *tp, struct tcp_cts *c)
{
	if (c >= tp->cts_pool && c < tp->cts_pool + TCP_NREQS)
		fifo_push_head(&tp->cts_free, &c->link);
	else
		free(c);
}

/* The receiver refused one of our messages for its length (the protocol above). */
static void handle_refuse(struct tcp_priv *tp, int peer, const struct tcp_frame_hdr *h)
{
	struct tcp_peer *pe = &tp->peers[peer];
	struct fifo_link *l;

	if (h->off == TCP_REFUSED_RTS) {
		l = fifo_take(&pe->sends, send_has_tag, &h->tag);
		if (l) {
			struct tcp_req *r = fifo_entry(l, struct tcp_req, link);

			log_warn(LOG_TRANSPORT,
				 "tcp send peer=%d tag=%llu: sent %zu B, posted %llu B", peer,
				 (unsigned long long)h->tag, r->len, (unsigned long long)h->len);
			r->status = -EMSGSIZE;
			r->wait_cts = false;
			tp->waiting_cts--;
			if (!r->chunks_left)
				complete(tp, r);
			return;
		}
	} else if (h->rid != TCP_NO_RID) {
		l = fifo_take(&pe->cts, cts_is, h); /* the CTS its receive sent is void */
		if (l)
			cts_release(tp, fifo_entry(l, struct tcp_cts, link));
	}
	log_warn(LOG_TRANSPORT,
		 "tcp send peer=%d tag=%llu: an eager message met a receive of %llu B", peer,
		 (unsigned long long)h->tag, (unsigned long long)h->len);
}

/* An eager message (filled) meets its receive: copy it over, or fail both lengths. */
static void eager_deliver(struct tcp_priv *tp, struct tcp_req *r, struct tcp_unexp *u)
{
	if (u->len == r->len) {
		memcpy(r->buf, u->buf, u->len);
		r->done = r->len;
	} else {
		log_warn(LOG_TRANSPORT, "tcp recv peer=%d tag=%llu: sent %zu B, posted %zu B",
			 r->peer, (unsigned long long)r->tag, u->len, r->len);
		r->status = -EMSGSIZE;
		refuse(tp, r->peer, r->tag, r->cts ? (uint32_t)(r - tp->reqs) : TCP_NO_RID,
		       TCP_REFUSED_EAGER, r->len);
	}
	owe(tp, r->peer, eager_cost(u->len));
	free(u);
	recv_done(tp, r);
}

/* An RTS met a receive up to the eager limit, which sent no CTS: both fail. */
static void rts_refuse(struct tcp_priv *tp, struct tcp_req *r, uint64_t sent)
{
	log_warn(LOG_TRANSPORT, "tcp recv peer=%d tag=%llu: sent %llu B, posted %zu B", r->peer,
		 (unsigned long long)r->tag, (unsigned long long)sent, r->len);
	r->status = -EMSGSIZE;
	refuse(tp, r->peer, r->tag, TCP_NO_RID, TCP_REFUSED_RTS, r->len);
	recv_done(tp, r);
}

static struct tcp_unexp *unexp_take(struct tcp_peer *pe, uint64_t tag)
{
	struct fifo_link *l = fifo_take(&pe->unexp, unexp_has_tag, &tag);

	return l ? fifo_entry(l, struct tcp_unexp, link) : NULL;
}

/* The oldest CTS with tag, taken off the peer's list; NULL when none. */
static struct tcp_cts *cts_take(struct tcp_peer *pe, uint64_t tag)
{
	struct fifo_link *l = fifo_take(&pe->cts, cts_has_tag, &tag);

	return l ? fifo_entry(l, struct tcp_cts, link) : NULL;
}

/* A receive: a CTS above the eager limit; whatever of its came first is taken now. */
static void post_recv(struct tcp_priv *tp, struct tcp_req *r)
{
	struct tcp_peer *pe = &tp->peers[r->peer];
	struct tcp_unexp *u = unexp_take(pe, r->tag);

	r->active = true;
	r->data_in = false;
	r->eager = false;
	r->chunks_left = 0;
	/* an eager message already here is its message: no CTS then (a mismatch if large) */
	r->cts = r->len > TCP_EAGER_MAX && !(u && !u->rts);
	if (r->cts) {
		r->chunks_left = 1;
		r->frames[0] = (struct tcp_frame){.hdr = {.type = TF_CTS,
							  .rid = (uint32_t)(r - tp->reqs),
							  .tag = r->tag,
							  .off = 0,
							  .len = r->len},
						  .req = r};
		/* every CTS on stream 0: they arrive in post order, so receives with the
		 * same tag match sends in order (no overtaking) */
		queue_frame(&pe->streams[0], &r->frames[0]);
	}
	if (!u) {
		r->eager = true;
		fifo_push(&pe->erecvs, &r->elink);
	} else if (u->rts) {
		uint64_t sent = u->len;

		free(u);
		if (!r->cts)
			rts_refuse(tp, r, sent); /* else the CTS lets the announced send go */
	} else if (u->filled) {
		eager_deliver(tp, r, u);
	} else {
		u->req = r; /* still arriving: tcp_rx_advance delivers it */
	}
}

/* A send: eager within the window, else after its CTS (announced by an RTS if none came). */
static void post_send(struct tcp_priv *tp, struct tcp_req *r)
{
	struct tcp_peer *pe = &tp->peers[r->peer];
	struct tcp_cts *c;

	r->wait_cts = false;
	r->rts_stream = -1;
	r->chunks_left = 0;
	if (r->len <= TCP_EAGER_MAX) {
		/* behind any eager send still waiting for credit: stream 0 keeps the order */
		if (fifo_empty(&pe->eblocked) && eager_cost(r->len) <= pe->credit)
			eager_queue(pe, r);
		else
			fifo_push(&pe->eblocked, &r->link);
		return;
	}
	c = cts_take(pe, r->tag);
	if (c) {
		send_start(tp, r, c->rid, c->len);
		cts_release(tp, c);
		return;
	}
	r->wait_cts = true;
	r->posted_ns = time_now_ns();
	tp->waiting_cts++;
	fifo_push(&pe->sends, &r->link);
}

/*
 * Large sends whose CTS has not come after TCP_RTS_AFTER_NS announce themselves (RTS)
 * on the stream their first chunk will take. Only a receive up to the eager limit,
 * which sends no CTS, needs it (to refuse the send); a CTS that comes in time costs no
 * frame (2 ranks, 256 KiB: an RTS at once was 1.2 more sendmsg per rank and AllReduce).
 */
void tcp_rts_due(struct tcp_priv *tp)
{
	uint64_t now;

	if (!tp->waiting_cts)
		return;
	now = time_now_ns();
	for (int p = 0; p < tp->env->nranks; p++) {
		struct tcp_peer *pe = &tp->peers[p];

		for (struct fifo_link *l = pe->active ? pe->sends.head : NULL; l; l = l->next) {
			struct tcp_req *r = fifo_entry(l, struct tcp_req, link);

			if (now - r->posted_ns < TCP_RTS_AFTER_NS)
				break; /* the list is in post order */
			if (r->rts_stream >= 0)
				continue;
			r->rts_stream = (int)(pe->rr++ % (unsigned int)tp->nstreams);
			r->chunks_left++;
			r->xframe = (struct tcp_frame){.hdr = {.type = TF_RTS,
							       .rid = 0,
							       .tag = r->tag,
							       .off = 0,
							       .len = r->len},
						       .req = r};
			queue_frame(&pe->streams[r->rts_stream], &r->xframe);
		}
	}
}

/* Executor posts, as seen by the thread. */
void tcp_handle_op(struct tcp_priv *tp, struct tcp_req *r)
{
	if (tp->peers[r->peer].closed) {
		log_err(LOG_TRANSPORT,
			"tcp %s peer=%d: connection reset (rank %d exited or is unreachable)",
			r->kind == TR_RECV ? "recv" : "send", r->peer, r->peer);
		tcp_set_fatal(tp, -ECONNRESET);
		return;
	}
	if (r->kind == TR_RECV)
		post_recv(tp, r);
	else
		post_send(tp, r);
}

static struct tcp_req *rx_lookup(struct tcp_priv *tp, struct tcp_stream *st,
				 const struct tcp_frame_hdr *h)
{
	struct tcp_req *r = h->rid < TCP_NREQS ? &tp->reqs[h->rid] : NULL;

	if (!r || r->kind != TR_RECV || !r->active || r->peer != st->peer || r->tag != h->tag ||
	    (h->type == TF_DATA && (h->off > r->len || h->len > r->len - h->off))) {
		log_err(LOG_TRANSPORT, "tcp recv peer=%d: frame for unknown receive tag %llu",
			st->peer, (unsigned long long)h->tag);
		tcp_set_fatal(tp, -EPROTO);
		return NULL;
	}
	if (r->eager) { /* its sender took the CTS way: no eager frame is coming for it */
		struct tcp_peer *pe = &tp->peers[st->peer];

		fifo_take(&pe->erecvs, eager_is, r);
		r->eager = false;
	}
	return r;
}

void tcp_rx_advance(struct tcp_priv *tp, struct tcp_stream *st, size_t n)
{
	struct tcp_req *r = st->rreq;
	struct tcp_unexp *u = st->rexp;

	st->rdst += n;
	st->rleft -= n;
	if (r)
		r->done += n;
	atomic_fetch_add_explicit(&tp->bytes_recv, n, memory_order_relaxed);
	if (st->rleft)
		return;
	st->in_payload = false;
	if (u) {
		st->rexp = NULL;
		u->filled = true;
		if (u->req)
			eager_deliver(tp, u->req, u);
		return;
	}
	if (st->rcost) { /* an eager message straight into its receive */
		owe(tp, st->peer, st->rcost);
		st->rcost = 0;
	}
	if (r->done == r->len)
		recv_done(tp, r);
}

/* An EAGER header: straight into the oldest receive with its tag, else a heap buffer. */
static bool rx_eager(struct tcp_priv *tp, struct tcp_stream *st, const struct tcp_frame_hdr *h)
{
	struct tcp_peer *pe = &tp->peers[st->peer];
	struct tcp_req *r;
	struct tcp_unexp *u;

	if (h->len > TCP_EAGER_MAX || st != &pe->streams[0] || eager_cost(h->len) > pe->rx_avail) {
		log_err(
		    LOG_TRANSPORT,
		    "tcp recv peer=%d: eager frame of %llu B on stream %d, %llu B of window left",
		    st->peer, (unsigned long long)h->len, (int)(st - pe->streams),
		    (unsigned long long)pe->rx_avail);
		tcp_set_fatal(tp, -EPROTO);
		return false;
	}
	pe->rx_avail -= eager_cost(h->len);
	r = eager_take(&pe->erecvs, h->tag);
	if (r)
		r->eager = false;
	st->rreq = NULL;
	st->rexp = NULL;
	st->rcost = 0;
	st->rleft = h->len;
	st->in_payload = true;
	if (r && r->len == h->len) {
		st->rreq = r;
		st->rdst = r->buf;
		st->rcost = eager_cost(h->len);
	} else {
		/* early, or a length mismatch drained before the receive fails */
		u = malloc(sizeof(*u) + h->len);
		if (!u) {
			log_err(LOG_TRANSPORT, "tcp recv peer=%d: no memory for %llu early bytes",
				st->peer, (unsigned long long)h->len);
			tcp_set_fatal(tp, -ENOMEM);
			return false;
		}
		*u = (struct tcp_unexp){.tag = h->tag, .len = h->len, .req = r};
		if (!r)
			fifo_push(&pe->unexp, &u->link);
		st->rexp = u;
		st->rdst = u->buf;
	}
	if (!h->len)
		tcp_rx_advance(tp, st, 0);
	return true;
}

/* An RTS: a large send waits for a CTS; a receive up to the eager limit sends none. */
static bool rx_rts(struct tcp_priv *tp, struct tcp_stream *st, const struct tcp_frame_hdr *h)
{
	struct tcp_peer *pe = &tp->peers[st->peer];
	struct tcp_req *r = eager_take(&pe->erecvs, h->tag);
	struct tcp_unexp *u;

	if (r) {
		r->eager = false; /* claimed by the announced message */
		if (!r->cts)
			rts_refuse(tp, r, h->len);
		return true;
	}
	u = malloc(sizeof(*u));
	if (!u) {
		tcp_set_fatal(tp, -ENOMEM);
		return false;
	}
	*u = (struct tcp_unexp){.tag = h->tag, .len = h->len, .filled = true, .rts = true};
	fifo_push(&pe->unexp, &u->link);
	return true;
}

/* Parse one header from the stage; returns false on a protocol error. */
bool tcp_rx_header(struct tcp_priv *tp, struct tcp_stream *st)
{
	struct tcp_frame_hdr h;
	struct tcp_req *r;

	memcpy(&h, st->stage + st->st_head, sizeof(h));
	st->st_head += sizeof(h);
	if (h.credit)
		credit_in(tp, st->peer, h.credit);
	switch (h.type) {
	case TF_CREDIT:
		return true;
	case TF_CTS:
		handle_cts(tp, st->peer, &h);
		return true;
	case TF_EAGER:
		return rx_eager(tp, st, &h);
	case TF_RTS:
		return rx_rts(tp, st, &h);
	case TF_REFUSE:
		handle_refuse(tp, st->peer, &h);
		return true;
	case TF_DATA:
	case TF_MISMATCH:
		break;
	default:
		log_err(LOG_TRANSPORT, "tcp recv peer=%d: frame of unknown type %u", st->peer,
			h.type);
		tcp_set_fatal(tp, -EPROTO);
		return false;
	}
	r = rx_lookup(tp, st, &h);
	if (!r)
		return false;
	if (h.type == TF_MISMATCH) {
		log_warn(LOG_TRANSPORT, "tcp recv peer=%d tag=%llu: sent %llu B, posted %zu B",
			 st->peer, (unsigned long long)h.tag, (unsigned long long)h.len, r->len);
		r->status = -EMSGSIZE;
		recv_done(tp, r);
		return true;
	}
	st->rreq = r;
	st->rexp = NULL;
	st->rcost = 0;
	st->rdst = r->buf + h.off;
	st->rleft = h.len;
	st->in_payload = true;
	if (!h.len)
		tcp_rx_advance(tp, st, 0);
	return true;
}

/* A frame none of whose header went yet carries the window bytes we owe its peer. */
void tcp_frame_credit(struct tcp_peer *pe, struct tcp_frame *f)
{
	f->hdr.credit += pe->owed;
	pe->rx_avail += pe->owed;
	pe->owed = 0;
}
