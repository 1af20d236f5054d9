/*
 * Messaging of the shm/cudaipc pair machinery (protocol in shm_pair.h): requests,
 * posting, CTS announce and matching, completions, polling and dead peers.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>

#include "transport/shm/shm_pair.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"

struct pair_key {
	uint64_t key;
	bool by_seq;
};

static bool pair_req_has_key(const struct fifo_link *l, const void *arg)
{
	const struct shm_pair_req *r = fifo_entry(l, const struct shm_pair_req, link);
	const struct pair_key *k = arg;

	return (k->by_seq ? r->seq : r->tag) == k->key;
}

struct shm_pair_req *pair_q_take(struct shm_pair_q *q, uint64_t key, bool by_seq)
{
	struct pair_key k = {.key = key, .by_seq = by_seq};

	return pair_q_req(fifo_take(&q->q, pair_req_has_key, &k));
}

static inline struct shm_pair_req *post_req(struct shm_pair_core *c, int peer, char *addr,
					    size_t mr_len, size_t off, size_t len, int *err)
{
	struct shm_pair_req *r;

	*err = c->fatal;
	if (*err)
		return NULL;
	*err = -EINVAL;
	if (peer < 0 || peer >= c->env->nranks || !c->links[peer].active)
		return NULL;
	if (off > mr_len || len > mr_len - off)
		return NULL;
	*err = -EAGAIN;
	r = pair_req_get(c);
	if (!r)
		return NULL;
	*err = 0;
	c->links[peer].outstanding++;
	c->outstanding++;
	return r;
}

int shm_pair_post_recv(struct shm_pair_core *c, int peer, uint64_t tag, char *addr, size_t mr_len,
		       size_t off, size_t len, uint64_t cookie, const struct shm_pair_where *where,
		       tp_reduce_fn red, enum dtype dt)
{
	struct shm_pair_req *r;
	int err;

	r = post_req(c, peer, addr, mr_len, off, len, &err);
	if (!r)
		return err;
	*r = (struct shm_pair_req){.kind = SHM_PAIR_RECV,
				   .peer = peer,
				   .tag = tag,
				   .cookie = cookie,
				   .len = len,
				   .buf = addr + off,
				   .red = red,
				   .dt = dt};
	if (where)
		c->where[pair_req_index(c, r)] = *where;
	pair_q_push(&c->links[peer].cts_wait, r);
	shm_pair_flush_cts(c, &c->links[peer]);
	return 0;
}

int shm_pair_post_send(struct shm_pair_core *c, int peer, uint64_t tag, char *addr, size_t mr_len,
		       size_t off, size_t len, uint64_t cookie, struct shm_pair_req **out)
{
	struct shm_pair_link *l;
	struct shm_pair_req *r, *e;
	int err;

	r = post_req(c, peer, addr, mr_len, off, len, &err);
	if (!r)
		return err;
	l = &c->links[peer];
	*r = (struct shm_pair_req){.kind = SHM_PAIR_SEND,
				   .peer = peer,
				   .tag = tag,
				   .cookie = cookie,
				   .len = len,
				   .buf = addr + off};
	if (out)
		*out = r;
	e = pair_q_take(&l->cts, tag, false);
	if (e) {
		r->seq = e->seq;
		r->cts_len = e->cts_len;
		if (c->where)
			c->where[pair_req_index(c, r)] = c->where[pair_req_index(c, e)];
		pair_req_put(c, e);
		pair_q_push(&l->ready, r);
	} else {
		pair_q_push(&l->sends, r);
	}
	return 0;
}

/* The transport's where[] in segment h, or NULL. */
static struct shm_pair_where *seg_where(const struct shm_pair_core *c, struct shm_pair_hdr *h)
{
	return c->proto->where_off ? (struct shm_pair_where *)((char *)h + c->proto->where_off)
				   : NULL;
}

void shm_pair_flush_cts(struct shm_pair_core *c, struct shm_pair_link *l)
{
	struct shm_pair_hdr *h = l->rx.hdr;
	struct shm_pair_where *where = seg_where(c, h);
	uint64_t head = atomic_load_explicit(&h->cts_head, memory_order_relaxed);
	uint64_t floor = atomic_load_explicit(l->cts_floor, memory_order_acquire);
	struct shm_pair_req *r;

	while (pair_q_first(&l->cts_wait) && head - floor < SHM_PAIR_CTS_CAP) {
		r = pair_q_pop(&l->cts_wait);
		r->seq = head;
		h->cts[head % SHM_PAIR_CTS_CAP] = (struct shm_pair_cts){r->tag, r->len};
		if (where)
			where[head % SHM_PAIR_CTS_CAP] = c->where[pair_req_index(c, r)];
		head++;
		pair_q_push(&l->posted, r);
	}
	atomic_store_explicit(&h->cts_head, head, memory_order_release);
}

bool shm_pair_take_cts(struct shm_pair_core *c, struct shm_pair_link *l, int peer)
{
	struct shm_pair_hdr *h = l->tx.hdr;
	const struct shm_pair_where *where = seg_where(c, h);
	uint64_t ct = atomic_load_explicit(&h->cts_tail, memory_order_relaxed);
	uint64_t ch = atomic_load_explicit(&h->cts_head, memory_order_acquire);
	bool moved = false;
	struct shm_pair_req *r;

	if (ct == ch)
		return false; /* no store: R reads cts_tail, leave its cache line alone */
	for (; ct != ch; ct++) {
		struct shm_pair_cts e = h->cts[ct % SHM_PAIR_CTS_CAP];

		r = pair_q_take(&l->sends, e.tag, false);
		if (r) {
			pair_q_push(&l->ready, r);
		} else {
			r = pair_req_get(c);
			if (!r)
				break; /* retry on the next poll once requests are free */
			*r =
			    (struct shm_pair_req){.kind = SHM_PAIR_CTS, .peer = peer, .tag = e.tag};
			pair_q_push(&l->cts, r);
		}
		/* copied now: R reuses the entry once it is consumed */
		r->seq = ct;
		r->cts_len = e.len;
		if (where)
			c->where[pair_req_index(c, r)] = where[ct % SHM_PAIR_CTS_CAP];
		moved = true;
	}
	atomic_store_explicit(&h->cts_tail, ct, memory_order_release);
	return moved;
}

static bool peer_dead(const struct shm_pair_link *l)
{
	struct pollfd pfd = {.fd = l->pidfd, .events = POLLIN};

	if (l->pidfd >= 0)
		return poll(&pfd, 1, 0) > 0;
	return kill(l->pid, 0) < 0 && errno == ESRCH;
}

int shm_pair_watch_stalled(struct shm_pair_core *c, struct shm_pair_link *l, int p, uint64_t *now)
{
	/* stalled with work pending: is the peer still alive? (cheap, rate-limited) */
	*now = *now ? *now : time_now_ns();
	if (!l->last_progress_ns) {
		l->last_progress_ns = *now;
		l->last_check_ns = *now;
		return 0;
	}
	if (*now - l->last_check_ns < SHM_PAIR_DEAD_CHECK_NS)
		return 0;
	l->last_check_ns = *now;
	if (peer_dead(l)) {
		log_err(LOG_TRANSPORT, "%s poll peer=%d: process %d is gone", c->proto->name, p,
			l->pid);
		return -ECONNRESET;
	}
	return 0;
}

int shm_pair_poll(struct transport *t, struct tp_completion *comp, int max)
{
	struct shm_pair_core *c = t->priv;
	struct shm_pair_req *r;
	uint64_t before, t0 = 0;
	int n = 0, err;

	if (c->fatal)
		return c->fatal;
	/* nothing posted: nothing can arrive (it needs our CTS), skip the clock too */
	if (c->outstanding) {
		c->work_t0 = 0;
		if (!c->proto->clock_at_work)
			t0 = c->proto->cpu_clock();
		before = c->bytes_sent + c->bytes_recv;
		err = c->proto->progress(c);
		if (err) {
			c->fatal = err;
			return err;
		}
		/* count only polls that moved bytes: idle spinning is the caller's */
		if (c->proto->clock_at_work)
			t0 = c->work_t0;
		if (c->bytes_sent + c->bytes_recv != before && t0)
			c->cpu_ns += c->proto->cpu_clock() - t0;
	}
	while (n < max && (r = pair_q_pop(&c->done))) {
		comp[n++] = (struct tp_completion){.cookie = r->cookie,
						   .status = r->status,
						   .peer = r->peer,
						   .len = r->len,
						   .is_send = r->kind == SHM_PAIR_SEND};
		pair_req_put(c, r);
	}
	/* after the progress: what came before an abort still completes (a peer that sent
	 * its last part, then died); the abort is reported once nothing did */
	if (!n && tp_env_aborting(c->env)) {
		log_err(LOG_TRANSPORT, "%s poll: job aborting", c->proto->name);
		c->fatal = -ECANCELED;
		return c->fatal;
	}
	return n;
}

int shm_pair_pending(struct transport *t, int peer, char *buf, size_t len)
{
	const struct shm_pair_core *c = t->priv;
	const struct shm_pair_link *l;
	size_t n = 0;

	if (peer < 0 || peer >= c->env->nranks || !c->links[peer].active)
		return -ENOENT;
	l = &c->links[peer];
	buf[0] = '\0';
	str_appendf(buf, len, &n,
		    "sends: %zu waiting for the peer's clear-to-send, %zu matched and moving; receives: %zu announced%s, %zu not yet (the peer's clear-to-send queue full); %zu clear-to-send of the peer's unmatched; process %d %s",
		    fifo_len(&l->sends.q), fifo_len(&l->ready.q), fifo_len(&l->posted.q),
		    l->rx_cur ? " (one filling)" : "", fifo_len(&l->cts_wait.q),
		    fifo_len(&l->cts.q), (int)l->pid, peer_dead(l) ? "gone" : "alive");
	return 0;
}

int shm_pair_stats(struct transport *t, struct tp_stats *st)
{
	const struct shm_pair_core *c = t->priv;

	st->bytes_sent = c->bytes_sent;
	st->bytes_recv = c->bytes_recv;
	st->cpu_ns = c->cpu_ns;
	return 0;
}
