/*
 * shm transport: ranks on one host exchange through POSIX shared-memory rings, one
 * per directed pair (protocol in shm_seg.h). No thread: progress happens in poll().
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <time.h>
#include <unistd.h>

#include "transport/shm_seg.h"
#include "transport/transport.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

#define SHM_EP_MAGIC 0x67736d6570000001ull
#define SHM_DEF_SLOT (1u << 20)
#define SHM_DEF_RING (8ull << 20)
#define SHM_MIN_SLOT 4096u
#define SHM_NREQS 8192
#define SHM_DEAD_CHECK_NS (50ull * 1000 * 1000) /* idle time before asking if a peer lives */

struct shm_ep {
	uint64_t magic;
	int32_t pid;
	int32_t rank;
};

enum shm_req_kind { SHM_SEND, SHM_RECV, SHM_CTS };

struct shm_req {
	struct shm_req *next;
	uint64_t tag;
	uint64_t cookie;
	char *buf;
	size_t len;
	size_t done;
	size_t cts_len; /* send: the receiver's length, from its CTS */
	int peer;
	int status;
	enum shm_req_kind kind;
};

struct shm_q {
	struct shm_req *head, *tail;
};

struct shm_peer {
	bool active;
	struct shm_seg rx;    /* peer -> me, created by me */
	struct shm_seg tx;    /* me -> peer, created by the peer */
	int pidfd;
	pid_t pid;
	struct shm_q cts_wait; /* recvs whose CTS did not fit in the queue yet */
	struct shm_q posted;   /* recvs announced by CTS, awaiting data */
	struct shm_req *rx_cur; /* recv being filled from the ring */
	struct shm_q sends;    /* sends without a CTS yet */
	struct shm_q cts;      /* CTS without a send yet */
	struct shm_q ready;    /* matched sends, copied into the ring in order */
	int outstanding;
	uint64_t last_progress_ns;
	uint64_t last_check_ns;
};

struct tp_mr {
	char *addr;
	size_t len;
};

struct shm_priv {
	const struct transport_env *env;
	struct shm_peer *peers;
	struct shm_req *reqs;
	struct shm_req *free;
	struct shm_q done;
	uint32_t nslots;
	uint32_t slot_size;
	int fatal;
	int outstanding; /* posted and not yet completed, all peers */
	uint64_t bytes_sent, bytes_recv, cpu_ns;
};

static void q_push(struct shm_q *q, struct shm_req *r)
{
	r->next = NULL;
	if (q->tail)
		q->tail->next = r;
	else
		q->head = r;
	q->tail = r;
}

static struct shm_req *q_pop(struct shm_q *q)
{
	struct shm_req *r = q->head;

	if (r) {
		q->head = r->next;
		if (!q->head)
			q->tail = NULL;
	}
	return r;
}

/* Remove and return the first entry with tag: FIFO matching per (peer, tag). */
static struct shm_req *q_take(struct shm_q *q, uint64_t tag)
{
	struct shm_req *prev = NULL, *r;

	for (r = q->head; r; prev = r, r = r->next) {
		if (r->tag != tag)
			continue;
		if (prev)
			prev->next = r->next;
		else
			q->head = r->next;
		if (q->tail == r)
			q->tail = prev;
		return r;
	}
	return NULL;
}

static struct shm_req *req_get(struct shm_priv *s)
{
	struct shm_req *r = s->free;

	if (r)
		s->free = r->next;
	return r;
}

static void req_put(struct shm_priv *s, struct shm_req *r)
{
	r->next = s->free;
	s->free = r;
}

static void req_complete(struct shm_priv *s, struct shm_req *r, int status)
{
	r->status = status;
	s->peers[r->peer].outstanding--;
	s->outstanding--;
	q_push(&s->done, r);
}

static bool shm_can_connect(const struct transport_env *env, int peer)
{
	return peer != env->rank && peer >= 0 && peer < env->nranks &&
	       env->host_of_rank[peer] == env->host_of_rank[env->rank];
}

static void shm_close(struct transport *t)
{
	struct shm_priv *s = t->priv;

	if (!s)
		return;
	for (int p = 0; s->peers && p < s->env->nranks; p++) {
		shm_seg_destroy(&s->peers[p].rx);
		shm_seg_destroy(&s->peers[p].tx);
		if (s->peers[p].pidfd >= 0)
			close(s->peers[p].pidfd);
	}
	free(s->peers);
	free(s->reqs);
	free(s);
	t->priv = NULL;
}

static int shm_open_t(struct transport *t, const struct transport_env *env)
{
	const struct transport_opts *o = env->opts;
	uint64_t ring = o && o->shm_ring ? o->shm_ring : SHM_DEF_RING;
	uint64_t slot = o && o->slot_size ? o->slot_size : SHM_DEF_SLOT;
	struct shm_priv *s;
	int err;

	if (slot < SHM_MIN_SLOT || slot > (1u << 30)) {
		log_err(LOG_TRANSPORT, "shm open: slot_size %llu outside 4KiB..1GiB",
			(unsigned long long)slot);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	t->priv = s;
	t->env = env;
	s->env = env;
	s->slot_size = (uint32_t)slot;
	s->nslots = (uint32_t)GS_MAX(ring / slot, 2);
	s->peers = calloc((size_t)env->nranks, sizeof(*s->peers));
	s->reqs = calloc(SHM_NREQS, sizeof(*s->reqs));
	if (!s->peers || !s->reqs) {
		err = -ENOMEM;
		goto out_close;
	}
	for (int i = SHM_NREQS - 1; i >= 0; i--)
		req_put(s, &s->reqs[i]);
	for (int p = 0; p < env->nranks; p++)
		s->peers[p].pidfd = -1;
	for (int p = 0; p < env->nranks; p++) {
		if (!env->use_peer[p] || p == env->rank)
			continue;
		if (!shm_can_connect(env, p)) {
			log_err(LOG_TRANSPORT, "shm open peer=%d: not on this host", p);
			err = -EHOSTUNREACH;
			goto out_close;
		}
		err = shm_seg_create(&s->peers[p].rx, env->job_id, p, env->rank, s->nslots,
				     s->slot_size);
		if (err)
			goto out_close;
		s->peers[p].active = true;
	}
	return 0;

out_close:
	shm_close(t);
	return err;
}

static int shm_endpoint(struct transport *t, void *buf, size_t *len)
{
	struct shm_ep ep = { SHM_EP_MAGIC, getpid(), t->env->rank };

	if (*len < sizeof(ep))
		return -ENOSPC;
	memcpy(buf, &ep, sizeof(ep));
	*len = sizeof(ep);
	return 0;
}

/* Wait until the peer mapped our rx segment (it unlinks the name then). */
static int wait_attached(struct shm_priv *s, int p, uint64_t deadline)
{
	struct timespec ms = { 0, 1000000 };
	struct shm_seg_hdr *h = s->peers[p].rx.hdr;

	while (!atomic_load_explicit(&h->sender_pid, memory_order_acquire)) {
		if (s->env->abort_flag && *s->env->abort_flag)
			return -ECANCELED;
		if (time_now_ns() > deadline) {
			log_err(LOG_TRANSPORT, "shm connect peer=%d: peer never attached", p);
			return -ETIMEDOUT;
		}
		nanosleep(&ms, NULL);
	}
	s->peers[p].rx.name[0] = '\0'; /* unlinked by the peer */
	return 0;
}

static int shm_connect(struct transport *t, const void *eps)
{
	struct shm_priv *s = t->priv;
	const struct transport_env *env = s->env;
	uint64_t deadline = time_now_ns() + (uint64_t)env->timeout_ms * 1000000ull;
	int err;

	for (int p = 0; p < env->nranks; p++) {
		struct shm_peer *pe = &s->peers[p];
		const struct shm_ep *ep = (const void *)((const char *)eps + p * TRANSPORT_EP_MAX);

		if (!pe->active)
			continue;
		if (ep->magic != SHM_EP_MAGIC || ep->rank != p) {
			log_err(LOG_TRANSPORT, "shm connect peer=%d: bad endpoint record", p);
			return -EPROTO;
		}
		pe->pid = ep->pid;
		err = shm_seg_attach(&pe->tx, env->job_id, env->rank, p, deadline,
				     env->abort_flag);
		if (err)
			return err;
		if (pe->tx.hdr->receiver_pid != pe->pid) {
			log_err(LOG_TRANSPORT, "shm connect peer=%d: pid %d is not the endpoint's %d",
				p, pe->tx.hdr->receiver_pid, pe->pid);
			return -EPROTO;
		}
		/* pidfd sees a dead peer even while it is an unreaped zombie */
		pe->pidfd = pidfd_open(pe->pid, 0);
	}
	for (int p = 0; p < env->nranks; p++) {
		if (!s->peers[p].active)
			continue;
		err = wait_attached(s, p, deadline);
		if (err)
			return err;
		s->peers[p].last_progress_ns = time_now_ns();
	}
	return 0;
}

static int shm_mr_reg(struct transport *t GS_UNUSED, void *addr, size_t len, enum mem_kind kind,
		      struct tp_mr **mr)
{
	struct tp_mr *m;

	if (kind != MEM_HOST)
		return -ENOTSUP;
	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->addr = addr;
	m->len = len;
	*mr = m;
	return 0;
}

static void shm_mr_dereg(struct transport *t GS_UNUSED, struct tp_mr *mr)
{
	free(mr);
}

static int post_check(struct shm_priv *s, int peer, struct tp_mr *mr, size_t off, size_t len)
{
	if (s->fatal)
		return s->fatal;
	if (peer < 0 || peer >= s->env->nranks || !s->peers[peer].active)
		return -EINVAL;
	if (!mr || off > mr->len || len > mr->len - off)
		return -EINVAL;
	return 0;
}

static void flush_cts(struct shm_peer *pe)
{
	struct shm_seg_hdr *h = pe->rx.hdr;
	uint64_t head = atomic_load_explicit(&h->cts_head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&h->cts_tail, memory_order_acquire);
	struct shm_req *r;

	while (pe->cts_wait.head && head - tail < SHM_CTS_CAP) {
		r = q_pop(&pe->cts_wait);
		h->cts[head % SHM_CTS_CAP] = (struct shm_cts){ r->tag, r->len };
		head++;
		q_push(&pe->posted, r);
	}
	atomic_store_explicit(&h->cts_head, head, memory_order_release);
}

static int shm_post_recv(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr,
			 size_t off, size_t len, uint64_t cookie)
{
	struct shm_priv *s = t->priv;
	struct shm_req *r;
	int err = post_check(s, peer, mr, off, len);

	if (err)
		return err;
	r = req_get(s);
	if (!r)
		return -EAGAIN;
	*r = (struct shm_req){ .tag = tag, .cookie = cookie, .buf = mr->addr + off, .len = len,
			       .peer = peer, .kind = SHM_RECV };
	s->peers[peer].outstanding++;
	s->outstanding++;
	q_push(&s->peers[peer].cts_wait, r);
	flush_cts(&s->peers[peer]);
	return 0;
}

static int shm_post_send(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr,
			 size_t off, size_t len, uint64_t cookie)
{
	struct shm_priv *s = t->priv;
	struct shm_peer *pe;
	struct shm_req *r, *c;
	int err = post_check(s, peer, mr, off, len);

	if (err)
		return err;
	r = req_get(s);
	if (!r)
		return -EAGAIN;
	pe = &s->peers[peer];
	*r = (struct shm_req){ .tag = tag, .cookie = cookie, .buf = mr->addr + off, .len = len,
			       .peer = peer, .kind = SHM_SEND };
	pe->outstanding++;
	s->outstanding++;
	c = q_take(&pe->cts, tag);
	if (c) {
		r->cts_len = c->len;
		req_put(s, c);
		q_push(&pe->ready, r);
	} else {
		q_push(&pe->sends, r);
	}
	return 0;
}

/* Sender side: take CTS entries, match them, copy ready messages into free slots. */
static bool progress_tx(struct shm_priv *s, struct shm_peer *pe)
{
	struct shm_seg_hdr *h = pe->tx.hdr;
	uint64_t ct = atomic_load_explicit(&h->cts_tail, memory_order_relaxed);
	uint64_t ch = atomic_load_explicit(&h->cts_head, memory_order_acquire);
	uint64_t head, tail;
	bool moved = false;
	struct shm_req *r;

	for (; ct != ch; ct++) {
		struct shm_cts e = h->cts[ct % SHM_CTS_CAP];

		r = q_take(&pe->sends, e.tag);
		if (r) {
			r->cts_len = e.len;
			q_push(&pe->ready, r);
		} else {
			r = req_get(s);
			if (!r)
				break; /* retry on the next poll once requests are free */
			*r = (struct shm_req){ .tag = e.tag, .len = e.len, .kind = SHM_CTS };
			q_push(&pe->cts, r);
		}
		moved = true;
	}
	atomic_store_explicit(&h->cts_tail, ct, memory_order_release);

	head = atomic_load_explicit(&h->head, memory_order_relaxed);
	tail = atomic_load_explicit(&h->tail, memory_order_acquire);
	while ((r = pe->ready.head) && head - tail < h->nslots) {
		struct shm_desc *d = &h->desc[head % h->nslots];
		size_t n = GS_MIN(r->len - r->done, (size_t)h->slot_size);

		d->tag = r->tag;
		d->msg_len = r->len;
		d->off = r->done;
		d->flags = r->len != r->cts_len ? SHM_DESC_MISMATCH : 0;
		d->len = d->flags ? 0 : (uint32_t)n;
		if (d->len)
			memcpy(pe->tx.data + (head % h->nslots) * (size_t)h->slot_size,
			       r->buf + r->done, n);
		r->done += d->len;
		head++;
		atomic_store_explicit(&h->head, head, memory_order_release);
		s->bytes_sent += d->len;
		moved = true;
		if (d->flags || r->done == r->len) {
			q_pop(&pe->ready);
			req_complete(s, r, d->flags ? -EMSGSIZE : 0);
		}
		if (head - tail >= h->nslots)
			tail = atomic_load_explicit(&h->tail, memory_order_acquire);
	}
	return moved;
}

/* Receiver side: copy published slots into the posted buffers, release them. */
static int progress_rx(struct shm_priv *s, struct shm_peer *pe, int p, bool *moved)
{
	struct shm_seg_hdr *h = pe->rx.hdr;
	uint64_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&h->head, memory_order_acquire);
	struct shm_req *r;

	for (; tail != head; tail++) {
		const struct shm_desc *d = &h->desc[tail % h->nslots];

		r = pe->rx_cur;
		if (!r) {
			r = q_take(&pe->posted, d->tag);
			if (!r) {
				log_err(LOG_TRANSPORT, "shm recv peer=%d: data for unposted tag %llu",
					p, (unsigned long long)d->tag);
				return -EPROTO;
			}
			pe->rx_cur = r;
		}
		*moved = true;
		if (d->flags & SHM_DESC_MISMATCH) {
			pe->rx_cur = NULL;
			req_complete(s, r, -EMSGSIZE);
			atomic_store_explicit(&h->tail, tail + 1, memory_order_release);
			continue;
		}
		if (d->off + d->len > r->len || d->tag != r->tag) {
			log_err(LOG_TRANSPORT, "shm recv peer=%d: slot outside message tag %llu", p,
				(unsigned long long)r->tag);
			return -EPROTO;
		}
		if (d->len)
			memcpy(r->buf + d->off,
			       pe->rx.data + (tail % h->nslots) * (size_t)h->slot_size, d->len);
		r->done += d->len;
		s->bytes_recv += d->len;
		if (r->done == r->len) {
			pe->rx_cur = NULL;
			req_complete(s, r, 0);
		}
		/* free each slot at once so the sender refills it while we copy the next */
		atomic_store_explicit(&h->tail, tail + 1, memory_order_release);
	}
	return 0;
}

static bool peer_dead(struct shm_peer *pe)
{
	struct pollfd pfd = { .fd = pe->pidfd, .events = POLLIN };

	if (pe->pidfd >= 0)
		return poll(&pfd, 1, 0) > 0;
	return kill(pe->pid, 0) < 0 && errno == ESRCH;
}

static int progress(struct shm_priv *s)
{
	uint64_t now = 0;

	for (int p = 0; p < s->env->nranks; p++) {
		struct shm_peer *pe = &s->peers[p];
		bool moved = false;
		int err;

		if (!pe->active)
			continue;
		if (pe->cts_wait.head)
			flush_cts(pe);
		moved = progress_tx(s, pe);
		err = progress_rx(s, pe, p, &moved);
		if (err)
			return err;
		if (moved || !pe->outstanding) {
			pe->last_progress_ns = 0;
			continue;
		}
		/* stalled with work pending: is the peer still alive? (cheap, rate-limited) */
		now = now ? now : time_now_ns();
		if (!pe->last_progress_ns) {
			pe->last_progress_ns = now;
			pe->last_check_ns = now;
			continue;
		}
		if (now - pe->last_check_ns < SHM_DEAD_CHECK_NS)
			continue;
		pe->last_check_ns = now;
		if (peer_dead(pe)) {
			log_err(LOG_TRANSPORT, "shm poll peer=%d: process %d is gone", p, pe->pid);
			return -ECONNRESET;
		}
	}
	return 0;
}

static int shm_poll(struct transport *t, struct tp_completion *c, int max)
{
	struct shm_priv *s = t->priv;
	struct shm_req *r;
	uint64_t before, t0;
	int n = 0, err;

	if (s->fatal)
		return s->fatal;
	if (s->env->abort_flag && *s->env->abort_flag) {
		log_err(LOG_TRANSPORT, "shm poll: job aborting");
		s->fatal = -ECANCELED;
		return s->fatal;
	}
	/* nothing posted: no data can arrive (it needs our CTS), skip the clock too */
	if (s->outstanding) {
		t0 = time_thread_cpu_ns();
		before = s->bytes_sent + s->bytes_recv;
		err = progress(s);
		if (err) {
			s->fatal = err;
			return err;
		}
		/* count CPU only for polls that moved bytes: idle spinning is the caller's */
		if (s->bytes_sent + s->bytes_recv != before)
			s->cpu_ns += time_thread_cpu_ns() - t0;
	}
	while (n < max && (r = q_pop(&s->done))) {
		c[n++] = (struct tp_completion){ .cookie = r->cookie, .status = r->status,
						 .peer = r->peer, .len = r->len,
						 .is_send = r->kind == SHM_SEND };
		req_put(s, r);
	}
	return n;
}

static int shm_path_info(struct transport *t, struct tp_path_info *info)
{
	struct shm_priv *s = t->priv;

	memset(info, 0, sizeof(*info));
	snprintf(info->transport, sizeof(info->transport), "shm");
	snprintf(info->device, sizeof(info->device), "shm");
	snprintf(info->note, sizeof(info->note), "ring %u slots x %u B per directed pair",
		 s->nslots, s->slot_size);
	return 0;
}

static int shm_stats(struct transport *t, struct tp_stats *st)
{
	struct shm_priv *s = t->priv;

	st->bytes_sent = s->bytes_sent;
	st->bytes_recv = s->bytes_recv;
	st->cpu_ns = s->cpu_ns;
	return 0;
}

const struct transport_ops shm_ops = {
	.name = "shm",
	.kind = TP_SHM,
	.can_connect = shm_can_connect,
	.open = shm_open_t,
	.endpoint = shm_endpoint,
	.connect = shm_connect,
	.mr_reg = shm_mr_reg,
	.mr_dereg = shm_mr_dereg,
	.post_send = shm_post_send,
	.post_recv = shm_post_recv,
	.poll = shm_poll,
	.path_info = shm_path_info,
	.stats = shm_stats,
	.close = shm_close,
};
