/*
 * shm transport: ranks on one host exchange through POSIX shared-memory rings, one
 * per directed pair (protocol in shm_progress.c). No thread: progress happens in poll().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <time.h>
#include <unistd.h>

#include "transport/host_mr.h"
#include "transport/shm_priv.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

#define SHM_EP_MAGIC 0x67736d6570000001ull
#define SHM_DEF_SLOT (1u << 20)
#define SHM_DEF_RING (8ull << 20)
#define SHM_MIN_SLOT 4096u

struct shm_ep {
	uint64_t magic;
	int32_t pid;
	int32_t rank;
};

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
	struct shm_ep ep = {SHM_EP_MAGIC, getpid(), t->env->rank};

	if (*len < sizeof(ep))
		return -ENOSPC;
	memcpy(buf, &ep, sizeof(ep));
	*len = sizeof(ep);
	return 0;
}

/* Wait until the peer mapped our rx segment (it unlinks the name then). */
static int wait_attached(struct shm_priv *s, int p, uint64_t deadline)
{
	struct timespec ms = {0, 1000000};
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
		err = shm_seg_attach(&pe->tx, env->job_id, env->rank, p, deadline, env->abort_flag);
		if (err)
			return err;
		if (pe->tx.hdr->receiver_pid != pe->pid) {
			log_err(LOG_TRANSPORT,
				"shm connect peer=%d: pid %d is not the endpoint's %d", p,
				pe->tx.hdr->receiver_pid, pe->pid);
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

static int shm_post_recv(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
			 size_t len, uint64_t cookie)
{
	struct shm_priv *s = t->priv;
	struct shm_req *r;
	int err = post_check(s, peer, mr, off, len);

	if (err)
		return err;
	r = req_get(s);
	if (!r)
		return -EAGAIN;
	*r = (struct shm_req){.tag = tag,
			      .cookie = cookie,
			      .buf = mr->addr + off,
			      .len = len,
			      .peer = peer,
			      .kind = SHM_RECV};
	s->peers[peer].outstanding++;
	s->outstanding++;
	q_push(&s->peers[peer].cts_wait, r);
	shm_flush_cts(&s->peers[peer]);
	return 0;
}

static int shm_post_send(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
			 size_t len, uint64_t cookie)
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
	*r = (struct shm_req){.tag = tag,
			      .cookie = cookie,
			      .buf = mr->addr + off,
			      .len = len,
			      .peer = peer,
			      .kind = SHM_SEND};
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
		/* the monotonic clock is a vDSO read; the thread CPU clock would be a syscall
		 * on every spin of the caller's poll loop. No thread of ours runs elsewhere,
		 * so time spent copying inside poll() is the transport's CPU time. */
		t0 = time_now_ns();
		before = s->bytes_sent + s->bytes_recv;
		err = shm_progress(s);
		if (err) {
			s->fatal = err;
			return err;
		}
		/* count only polls that moved bytes: idle spinning is the caller's */
		if (s->bytes_sent + s->bytes_recv != before)
			s->cpu_ns += time_now_ns() - t0;
	}
	while (n < max && (r = q_pop(&s->done))) {
		c[n++] = (struct tp_completion){.cookie = r->cookie,
						.status = r->status,
						.peer = r->peer,
						.len = r->len,
						.is_send = r->kind == SHM_SEND};
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
    .mr_reg = host_mr_reg,
    .mr_dereg = host_mr_dereg,
    .post_send = shm_post_send,
    .post_recv = shm_post_recv,
    .poll = shm_poll,
    .path_info = shm_path_info,
    .stats = shm_stats,
    .close = shm_close,
};
