/*
 * The in-process "loop" test transport (contract in loop.h). Each rank owns an inbox
 * (posted receives + unexpected sends, under `lock`) and a completion queue (under
 * `cq_lock`, a leaf lock). A send locks the destination's inbox; a receive its own.
 *
 * Exchange for one message (A sends to B):
 *   1. A post_send: B's inbox has a matching receive -> A copies into it, completes both;
 *   2. otherwise A queues the send in B's inbox: eager copy (A's send completes now)
 *      or a hold on A's memory;
 *   3. B post_recv finds it -> B copies, completes its receive (and A's held send).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "transport/host_mr.h"
#include "transport/loop/loop.h"
#include "util/fifo.h"
#include "util/log.h"
#include "util/strutil.h"

#define LOOP_MAGIC	   0x6c6f6f7074702031ull
#define LOOP_DEPTH_DEFAULT 64
#define LOOP_EAGER_DEFAULT 4096

struct loop_rank;

struct loop_req {
	struct fifo_link link; /* on a rank's posted or unexpected list */
	int peer; /* the other side's rank */
	uint64_t tag;
	char *addr; /* receive: destination; held send: the sender's bytes */
	size_t len;
	uint64_t cookie;
	struct loop_rank *owner; /* held send: the sender, to complete it */
	char *eager;		 /* buffered copy of an eager send, else NULL */
};

struct loop_rank {
	pthread_mutex_t lock; /* posted, unexpected */
	struct fifo posted;     /* loop_req */
	struct fifo unexpected; /* loop_req */
	pthread_mutex_t cq_lock; /* leaf: never held while taking another lock */
	struct tp_completion *cq;
	uint32_t cq_cap, cq_head, cq_n;
	int sends_out, recvs_out; /* owner thread only */
	int depth;
	size_t eager_max;
	int rank, nranks;
	uint64_t job_id;
	struct loop_rank **peers;
	uint64_t bytes_sent, bytes_recv; /* atomics */
};

struct loop_ep {
	uint64_t magic;
	uint64_t job_id;
	uint64_t rank;
	uint64_t addr;
};

struct loop_key {
	int peer;
	uint64_t tag;
};

static bool req_is(const struct fifo_link *x, const void *arg)
{
	const struct loop_req *r = fifo_entry(x, struct loop_req, link);
	const struct loop_key *k = arg;

	return r->peer == k->peer && r->tag == k->tag;
}

/* Remove and return the first request from peer with tag, or NULL. */
static struct loop_req *list_take(struct fifo *l, int peer, uint64_t tag)
{
	struct loop_key k = { peer, tag };
	struct fifo_link *x = fifo_take(l, req_is, &k);

	return x ? fifo_entry(x, struct loop_req, link) : NULL;
}

static void list_free(struct fifo *l)
{
	struct fifo_link *x;

	while ((x = fifo_pop(l))) {
		struct loop_req *r = fifo_entry(x, struct loop_req, link);

		free(r->eager);
		free(r);
	}
}

/* Queue a completion on rank lr; room is guaranteed by the depth bound. */
static void cq_push(struct loop_rank *lr, uint64_t cookie, int status, int peer, size_t len,
		    bool is_send)
{
	pthread_mutex_lock(&lr->cq_lock);
	lr->cq[(lr->cq_head + lr->cq_n) % lr->cq_cap] = (struct tp_completion){
	    .cookie = cookie,
	    .status = status,
	    .peer = peer,
	    .len = len,
	    .is_send = is_send,
	};
	lr->cq_n++;
	pthread_mutex_unlock(&lr->cq_lock);
}

static bool loop_can_connect(const struct transport_env *env, int peer)
{
	return peer != env->rank &&
	       (!env->host_of_rank || env->host_of_rank[peer] == env->host_of_rank[env->rank]);
}

static int loop_open(struct transport *t, const struct transport_env *env)
{
	struct loop_rank *lr = calloc(1, sizeof(*lr));

	if (!lr) {
		log_err(LOG_TRANSPORT, "loop open rank=%d: out of memory", env->rank);
		return -ENOMEM;
	}
	lr->rank = env->rank;
	lr->nranks = env->nranks;
	lr->job_id = env->job_id;
	lr->depth = env->opts && env->opts->qp_depth > 0 ? env->opts->qp_depth : LOOP_DEPTH_DEFAULT;
	lr->eager_max =
	    env->opts && env->opts->slot_size ? env->opts->slot_size : LOOP_EAGER_DEFAULT;
	lr->cq_cap = 2 * (uint32_t)lr->depth;
	lr->cq = calloc(lr->cq_cap, sizeof(*lr->cq));
	lr->peers = calloc((size_t)env->nranks, sizeof(*lr->peers));
	if (!lr->cq || !lr->peers) {
		free(lr->cq);
		free(lr->peers);
		free(lr);
		log_err(LOG_TRANSPORT, "loop open rank=%d: out of memory", env->rank);
		return -ENOMEM;
	}
	pthread_mutex_init(&lr->lock, NULL);
	pthread_mutex_init(&lr->cq_lock, NULL);
	t->priv = lr;
	return 0;
}

static int loop_endpoint(struct transport *t, void *buf, size_t *len)
{
	struct loop_rank *lr = t->priv;
	struct loop_ep ep = {LOOP_MAGIC, lr->job_id, (uint64_t)lr->rank, (uint64_t)(uintptr_t)lr};

	memcpy(buf, &ep, sizeof(ep));
	*len = sizeof(ep);
	return 0;
}

static int loop_connect(struct transport *t, const void *eps)
{
	struct loop_rank *lr = t->priv;

	for (int p = 0; p < lr->nranks; p++) {
		struct loop_ep ep;

		if (p == lr->rank || (t->env->use_peer && !t->env->use_peer[p]))
			continue;
		memcpy(&ep, (const char *)eps + (size_t)p * TRANSPORT_EP_MAX, sizeof(ep));
		if (ep.magic != LOOP_MAGIC || ep.job_id != lr->job_id || ep.rank != (uint64_t)p) {
			log_err(LOG_TRANSPORT, "loop connect peer=%d: endpoint is not this job's",
				p);
			return -EINVAL;
		}
		lr->peers[p] = (struct loop_rank *)(uintptr_t)ep.addr;
	}
	return 0;
}

static int loop_check(struct loop_rank *lr, int peer, struct tp_mr *mr, size_t off, size_t len)
{
	if (peer < 0 || peer >= lr->nranks || !lr->peers[peer] || !mr || off + len > mr->len ||
	    off + len < off)
		return -EINVAL;
	return 0;
}

/* Deliver len bytes from src into receive r of rank dst; completes r and frees it. */
static void deliver(struct loop_rank *dst, struct loop_req *r, int from, const char *src,
		    size_t len)
{
	int status = 0;

	if (len == r->len) {
		memcpy(r->addr, src, len);
		__atomic_add_fetch(&dst->bytes_recv, len, __ATOMIC_RELAXED);
	} else {
		status = -EMSGSIZE;
	}
	cq_push(dst, r->cookie, status, from, len, false);
	free(r);
}

static int loop_post_send(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
			  size_t len, uint64_t cookie)
{
	struct loop_rank *lr = t->priv, *dst;
	struct loop_req *r, *q;
	bool eager = false;
	int ret = loop_check(lr, peer, mr, off, len);

	if (ret)
		return ret;
	if (lr->sends_out >= lr->depth)
		return -EAGAIN;
	dst = lr->peers[peer];
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->peer = lr->rank;
	q->tag = tag;
	q->addr = mr->addr + off;
	q->len = len;
	q->cookie = cookie;
	q->owner = lr;
	lr->sends_out++;
	__atomic_add_fetch(&lr->bytes_sent, len, __ATOMIC_RELAXED);

	pthread_mutex_lock(&dst->lock);
	r = list_take(&dst->posted, lr->rank, tag);
	if (!r && len <= lr->eager_max) {
		q->eager = malloc(len ? len : 1);
		if (!q->eager) {
			pthread_mutex_unlock(&dst->lock);
			lr->sends_out--;
			free(q);
			return -ENOMEM;
		}
		memcpy(q->eager, q->addr, len);
		eager = true;
	}
	/* Once queued, q belongs to the receiver: it may be freed as soon as we unlock. */
	if (!r)
		fifo_push(&dst->unexpected, &q->link);
	pthread_mutex_unlock(&dst->lock);

	if (r) {
		deliver(dst, r, lr->rank, q->addr, len);
		free(q);
	}
	if (r || eager)
		cq_push(lr, cookie, 0, peer, len, true);
	return 0;
}

static int loop_post_recv(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
			  size_t len, uint64_t cookie)
{
	struct loop_rank *lr = t->priv;
	struct loop_req *q, *r;
	int ret = loop_check(lr, peer, mr, off, len);

	if (ret)
		return ret;
	if (lr->recvs_out >= lr->depth)
		return -EAGAIN;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->peer = peer;
	r->tag = tag;
	r->addr = mr->addr + off;
	r->len = len;
	r->cookie = cookie;
	lr->recvs_out++;

	pthread_mutex_lock(&lr->lock);
	q = list_take(&lr->unexpected, peer, tag);
	if (!q)
		fifo_push(&lr->posted, &r->link);
	pthread_mutex_unlock(&lr->lock);
	if (!q)
		return 0;
	deliver(lr, r, peer, q->eager ? q->eager : q->addr, q->len);
	if (!q->eager)
		cq_push(q->owner, q->cookie, 0, lr->rank, q->len, true);
	free(q->eager);
	free(q);
	return 0;
}

static int loop_poll(struct transport *t, struct tp_completion *c, int max)
{
	struct loop_rank *lr = t->priv;
	int n = 0;

	pthread_mutex_lock(&lr->cq_lock);
	while (n < max && lr->cq_n) {
		c[n++] = lr->cq[lr->cq_head];
		lr->cq_head = (lr->cq_head + 1) % lr->cq_cap;
		lr->cq_n--;
	}
	pthread_mutex_unlock(&lr->cq_lock);
	for (int i = 0; i < n; i++) {
		if (c[i].is_send)
			lr->sends_out--;
		else
			lr->recvs_out--;
	}
	return n;
}

static int loop_path_info(struct transport *t, struct tp_path_info *info)
{
	(void)t;
	memset(info, 0, sizeof(*info));
	strcpy(info->transport, "loop");
	strcpy(info->device, "in-process");
	strcpy(info->note, "test transport: threads of one process");
	return 0;
}

static int loop_stats(struct transport *t, struct tp_stats *st)
{
	struct loop_rank *lr = t->priv;

	st->bytes_sent = __atomic_load_n(&lr->bytes_sent, __ATOMIC_RELAXED);
	st->bytes_recv = __atomic_load_n(&lr->bytes_recv, __ATOMIC_RELAXED);
	st->cpu_ns = 0;
	return 0;
}

/* Requests on l from peer (posted receives, arrived sends), and of those the eager ones. */
static size_t list_count(const struct fifo *l, int peer, size_t *eager)
{
	size_t n = 0;

	for (const struct fifo_link *x = l->head; x; x = x->next) {
		const struct loop_req *r = fifo_entry(x, struct loop_req, link);

		if (r->peer == peer) {
			n++;
			*eager += r->eager != NULL;
		}
	}
	return n;
}

/* What stands between this rank and peer: its receives not yet matched, its sends queued in
 * the peer's inbox (held ones wait for the peer's receive), the peer's sends here with no
 * receive, and the completions not yet polled. Owner thread (sends_out, recvs_out). */
static int loop_pending(struct transport *t, int peer, char *buf, size_t len)
{
	struct loop_rank *lr = t->priv, *dst;
	size_t recv_wait, ours, ours_eager = 0, theirs, ign = 0, n = 0;
	uint32_t cq_n;

	if (peer < 0 || peer >= lr->nranks || !(dst = lr->peers[peer]))
		return -ENOENT;
	pthread_mutex_lock(&lr->lock);
	recv_wait = list_count(&lr->posted, peer, &ign);
	theirs = list_count(&lr->unexpected, peer, &ign);
	pthread_mutex_unlock(&lr->lock);
	pthread_mutex_lock(&dst->lock);
	ours = list_count(&dst->unexpected, lr->rank, &ours_eager);
	pthread_mutex_unlock(&dst->lock);
	pthread_mutex_lock(&lr->cq_lock);
	cq_n = lr->cq_n;
	pthread_mutex_unlock(&lr->cq_lock);
	buf[0] = '\0';
	str_appendf(buf, len, &n,
		    "sends: %zu in the peer's inbox with no receive (%zu held, waiting for it); receives: %zu posted and unmatched, %zu of the peer's sends here unmatched; %d sends and %d receives outstanding, %u completions not yet polled (all peers)",
		    ours, ours - ours_eager, recv_wait, theirs, lr->sends_out, lr->recvs_out,
		    cq_n);
	return 0;
}

static void loop_close(struct transport *t)
{
	struct loop_rank *lr = t->priv;

	if (!lr)
		return;
	list_free(&lr->posted);
	list_free(&lr->unexpected);
	pthread_mutex_destroy(&lr->lock);
	pthread_mutex_destroy(&lr->cq_lock);
	free(lr->cq);
	free(lr->peers);
	free(lr);
	t->priv = NULL;
}

const struct transport_ops loop_transport_ops = {
    .name = "loop",
    .kind = LOOP_TRANSPORT_KIND,
    .can_connect = loop_can_connect,
    .open = loop_open,
    .endpoint = loop_endpoint,
    .connect = loop_connect,
    .mr_reg = host_mr_reg,
    .mr_dereg = host_mr_dereg,
    .post_send = loop_post_send,
    .post_recv = loop_post_recv,
    .poll = loop_poll,
    .path_info = loop_path_info,
    .stats = loop_stats,
    .pending = loop_pending,
    .close = loop_close,
};
